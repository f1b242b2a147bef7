// Analytics: date range, human vs AI visitors over time, pages table (sortable, paginated, CSV
// export), and the agents and crawlers seen.
import { useEffect, useMemo, useState } from 'react';
import { api, errorMessage, folioClient, type AgentRow, type Interval, type PathCounts, type SeriesPoint, type TrafficCounts } from '../api.ts';
import { Table } from '../tables.tsx';
import { Alert, Empty, Loading, SelectField, useTitle, type Option } from '../ui.tsx';
import { chartTitle, fillSeries, SeriesChart } from './analytics-chart.tsx';
import { apiRange, DAY, rangeProblem } from '../dates.ts';
import { useRangeQuery } from '../router.tsx';
import { PagesTable } from './analytics-pages.tsx';
import { RangeFields } from './range-fields.tsx';

/** Rows fetched for the table; sorting and paging happen over these. */
const MAX_ROWS = 2500;


type Metric = 'visitors' | 'views';
const METRICS: readonly Option<Metric>[] = [
  ['visitors', 'Unique visitors'],
  ['views', 'Page views'],
];

/** What the page shows, gathered from the visitors or views pages, the time series and the agents answers. */
interface Report {
  totals: TrafficCounts;
  rows: PathCounts[];
  truncated: boolean;
  series: SeriesPoint[];
  agents: AgentRow[];
}

/** The days from `from` to `to`, both included in the UI; the API's dateTo is exclusive. */
async function loadReport(client: ReturnType<typeof folioClient>, projectId: string, metric: Metric, from: string, to: string): Promise<Report> {
  const range = apiRange({ from, to, days: null });
  const interval: Interval = Date.parse(range.dateTo) - Date.parse(range.dateFrom) <= 3 * DAY ? 'hour' : 'day';
  const rows: PathCounts[] = [];
  let totals: TrafficCounts = { human: 0, ai: 0, total: 0 };
  let truncated = false;
  const pages = metric === 'visitors' ? client.allVisitors({ ...range, limit: 250 }) : client.allViews({ ...range, limit: 250 });
  for await (const p of pages) {
    totals = p.totals;
    rows.push(...('visitors' in p ? p.visitors : p.views));
    if (rows.length >= MAX_ROWS) {
      truncated = p.hasMore;
      break;
    }
  }
  const [series, agents] = await Promise.all([api.timeseries(projectId, { ...range, interval }), api.agents(projectId, range)]);
  return { totals, rows, truncated, series: fillSeries(series, range.dateFrom, range.dateTo, interval), agents };
}

/** The report of the range, loaded again when it changes; the last one is kept while loading. */
function useReport(projectId: string, metric: Metric, from: string, to: string, rangeError: string | null) {
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [report, setReport] = useState<Report | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  useEffect(() => {
    if (rangeError) return;
    let live = true;
    setLoading(true);
    loadReport(client, projectId, metric, from, to)
      .then(
        (r) => live && (setReport(r), setError(null)),
        (err) => live && setError(errorMessage(err)),
      )
      .finally(() => live && setLoading(false));
    return () => {
      live = false;
    };
  }, [client, projectId, from, to, metric, rangeError]);
  return { report, error, loading };
}

export function AnalyticsPage({ projectId }: { projectId: string }) {
  useTitle('Analytics');
  const { range, setDays, setDates } = useRangeQuery(30);
  const { from, to } = range;
  const [metric, setMetric] = useState<Metric>('visitors');
  const rangeError = rangeProblem(range);
  const { report, error, loading } = useReport(projectId, metric, from, to, rangeError);
  const unit = metric === 'visitors' ? 'visitors' : 'views';
  return (
    <div className="stack">
      <h1>Analytics</h1>
      <RangeFields id="a" range={range} setDays={setDays} setDates={setDates}>
        <SelectField id="a-metric" label="Count" value={metric} onChange={setMetric} options={METRICS} />
      </RangeFields>
      {rangeError && <Alert>{rangeError}</Alert>}
      {error && <Alert title="Analytics could not be loaded.">{error}</Alert>}
      {loading && !report && <Loading what="analytics" />}
      {report && (
        <div className={loading ? 'stack stale' : 'stack'} aria-busy={loading}>
          <Totals totals={report.totals} unit={unit} />
          <section className="card stack" aria-labelledby="chart-title">
            <h2 id="chart-title">{chartTitle(metric)}</h2>
            {report.series.every((p) => p.total === 0) ? <Empty title="No visits in this range" /> : <SeriesChart series={report.series} metric={metric} />}
          </section>
          <div className="analytics-grid">
            <PagesTable projectId={projectId} rows={report.rows} truncatedAt={report.truncated ? MAX_ROWS : null} unit={unit} csvName={`folio-${metric}-${projectId}-${from}-to-${to}.csv`} />
            <Agents agents={report.agents} />
          </div>
        </div>
      )}
    </div>
  );
}

function Totals({ totals, unit }: { totals: TrafficCounts; unit: string }) {
  return (
    <div className="totals" role="group" aria-label="Totals">
      <Stat label={`Human ${unit}`} value={totals.human} kind="human" />
      <Stat label={`AI ${unit}`} value={totals.ai} kind="ai" />
      <Stat label={`All ${unit}`} value={totals.total} kind="total" />
    </div>
  );
}

function Stat({ label, value, kind }: { label: string; value: number; kind: string }) {
  return (
    <div className={`card stat stat-${kind}`}>
      <span className="stat-label">{label}</span>
      <span className="stat-value" data-testid={`total-${kind}`}>
        {value.toLocaleString()}
      </span>
    </div>
  );
}

const AGENT_COLUMNS = ['Agent', 'Kind', 'Visitors', 'Views'];

/** The kinds of the agents report, in two groups: what counts as AI visitors, and what counts nowhere. */
const KIND_LABELS: Record<string, string> = { ai: 'AI answer', search: 'Search crawler', training: 'Training crawler', bot: 'Other bot' };
const AGENT_GROUPS = [
  { id: 'ai', title: 'AI agents (counted as AI visitors)', has: (category: string) => category === 'ai' },
  { id: 'crawlers', title: 'Crawlers and bots (counted in neither)', has: (category: string) => category !== 'ai' },
] as const;
const ROWS_PER_GROUP = 10;

function Agents({ agents }: { agents: AgentRow[] }) {
  return (
    <section className="card stack" aria-labelledby="agents-title">
      <h2 id="agents-title">Agents and crawlers</h2>
      <p className="hint">User agents that are not people: AI answers count as AI visitors; crawlers and other bots count in neither.</p>
      {agents.length === 0 ? (
        <Empty title="No agents or crawlers in this range" />
      ) : (
        <Table className="numbers" aria-labelledby="agents-title" columns={AGENT_COLUMNS}>
          {AGENT_GROUPS.map((g) => {
            const rows = agents.filter((a) => g.has(a.category)).slice(0, ROWS_PER_GROUP);
            return [
              <tr key={g.id} className="group-row" data-testid={`agents-${g.id}`}>
                <th colSpan={4} scope="colgroup">
                  {g.title}
                  {rows.length === 0 ? ': none' : ''}
                </th>
              </tr>,
              ...rows.map((a) => (
                <tr key={a.agent + a.category}>
                  <td>{a.agent}</td>
                  <td className="small">{KIND_LABELS[a.category] ?? a.category}</td>
                  <td>{a.visitors.toLocaleString()}</td>
                  <td>{a.views.toLocaleString()}</td>
                </tr>
              )),
            ];
          })}
        </Table>
      )}
    </section>
  );
}
