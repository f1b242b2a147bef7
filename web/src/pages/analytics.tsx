// Analytics: date range, human vs AI visitors over time, pages table (sortable, paginated), top AI
// agents, and CSV export of the table as shown.
import { useEffect, useMemo, useRef, useState } from 'react';
import { Chart, CategoryScale, Filler, Legend, LinearScale, LineController, LineElement, PointElement, Tooltip } from 'chart.js';
import { api, errorMessage, folioClient, type AgentRow, type PathCounts, type SeriesPoint, type TrafficCounts } from '../api.ts';
import { Alert, Empty, Loading, SelectField, useTitle, type Option } from '../ui.tsx';
import { toCsv } from '../../../src/client/index.ts';

Chart.register(LineController, LineElement, PointElement, LinearScale, CategoryScale, Legend, Tooltip, Filler);

const DAY = 86_400_000;
const PAGE_SIZE = 25;
/** Rows fetched for the table; sorting and paging happen over these. */
const MAX_ROWS = 2500;

const iso = (d: Date) => d.toISOString().slice(0, 10);
const addDays = (day: string, n: number) => iso(new Date(Date.parse(day) + n * DAY));
const today = () => iso(new Date());

type Metric = 'visitors' | 'views';
const METRICS: readonly Option<Metric>[] = [
  ['visitors', 'Unique visitors'],
  ['views', 'Page views'],
];
type SortKey = 'path' | 'human' | 'ai' | 'total';

/** What the page shows, gathered from the visitors or views pages, the time series and the agents answers. */
interface Report {
  totals: TrafficCounts;
  rows: PathCounts[];
  truncated: boolean;
  series: SeriesPoint[];
  agents: AgentRow[];
}

export function AnalyticsPage({ projectId }: { projectId: string }) {
  useTitle('Analytics');
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [from, setFrom] = useState(() => addDays(today(), -29));
  const [to, setTo] = useState(today); // inclusive in the UI; the API's dateTo is exclusive
  const [metric, setMetric] = useState<Metric>('visitors');
  const [data, setData] = useState<Report | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [loading, setLoading] = useState(true);
  const [sort, setSort] = useState<{ key: SortKey; dir: 'asc' | 'desc' }>({ key: 'total', dir: 'desc' });
  const [page, setPage] = useState(0);

  const rangeError = from && to && from > to ? 'The start date is after the end date.' : !from || !to ? 'Choose both dates.' : null;

  useEffect(() => {
    if (rangeError) return;
    let live = true;
    setLoading(true);
    (async () => {
      const range = { dateFrom: from, dateTo: addDays(to, 1) };
      const interval = Date.parse(range.dateTo) - Date.parse(range.dateFrom) <= 3 * DAY ? 'hour' : 'day';
      try {
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
        if (!live) return;
        setData({ totals, rows, truncated, series: fillSeries(series, range.dateFrom, range.dateTo, interval), agents });
        setError(null);
        setPage(0);
      } catch (err) {
        if (live) setError(errorMessage(err));
      } finally {
        if (live) setLoading(false);
      }
    })();
    return () => {
      live = false;
    };
  }, [client, projectId, from, to, metric, rangeError]);

  const sorted = useMemo(() => {
    const rows = [...(data?.rows ?? [])];
    const { key, dir } = sort;
    const sign = dir === 'asc' ? 1 : -1;
    rows.sort((a, b) => {
      const primary = key === 'path' ? a.path.localeCompare(b.path) : a[key] - b[key];
      return primary !== 0 ? primary * sign : a.path.localeCompare(b.path);
    });
    return rows;
  }, [data, sort]);
  const pageCount = Math.max(1, Math.ceil(sorted.length / PAGE_SIZE));
  const shown = sorted.slice(page * PAGE_SIZE, page * PAGE_SIZE + PAGE_SIZE);

  const setPreset = (days: number) => {
    setTo(today());
    setFrom(addDays(today(), -(days - 1)));
  };
  const toggleSort = (key: SortKey) => {
    setSort((s) => (s.key === key ? { key, dir: s.dir === 'asc' ? 'desc' : 'asc' } : { key, dir: key === 'path' ? 'asc' : 'desc' }));
    setPage(0);
  };
  const exportCsv = () => {
    const text = toCsv(['path', 'human', 'ai', 'total'], sorted.map((r) => [r.path, r.human, r.ai, r.total]));
    const blob = new Blob([text], { type: 'text/csv;charset=utf-8' });
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = `folio-${metric}-${projectId}-${from}-to-${to}.csv`;
    document.body.append(a);
    a.click();
    a.remove();
    window.setTimeout(() => URL.revokeObjectURL(a.href), 1000);
  };

  const unit = metric === 'visitors' ? 'visitors' : 'views';
  return (
    <div className="stack">
      <h1>Analytics</h1>
      <form className="card range" onSubmit={(e) => e.preventDefault()} aria-label="Date range">
        <div className="field">
          <label htmlFor="a-from">From</label>
          <input id="a-from" type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
        </div>
        <div className="field">
          <label htmlFor="a-to">To (inclusive)</label>
          <input id="a-to" type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
        </div>
        <div className="presets" role="group" aria-label="Quick ranges">
          {[7, 30, 90].map((d) => (
            <button key={d} type="button" className="button small secondary" onClick={() => setPreset(d)}>
              Last {d} days
            </button>
          ))}
        </div>
        <SelectField id="a-metric" label="Count" value={metric} onChange={setMetric} options={METRICS} />
      </form>
      {rangeError && <Alert>{rangeError}</Alert>}
      {error && <Alert title="Analytics could not be loaded.">{error}</Alert>}
      {loading && !data && <Loading what="analytics" />}
      {data && (
        <div className={loading ? 'stack stale' : 'stack'} aria-busy={loading}>
          <div className="totals" role="group" aria-label="Totals">
            <Stat label={`Human ${unit}`} value={data.totals.human} kind="human" />
            <Stat label={`AI ${unit}`} value={data.totals.ai} kind="ai" />
            <Stat label={`All ${unit}`} value={data.totals.total} kind="total" />
          </div>

          <section className="card stack" aria-labelledby="chart-title">
            <h2 id="chart-title">Human vs AI visitors over time</h2>
            {data.series.every((p) => p.total === 0) ? <Empty title="No visits in this range" /> : <SeriesChart series={data.series} />}
          </section>

          <div className="analytics-grid">
            <section className="card stack" aria-labelledby="pages-title">
              <div className="page-head">
                <h2 id="pages-title">Pages</h2>
                <button type="button" className="button small secondary" onClick={exportCsv} disabled={sorted.length === 0}>
                  Export CSV
                </button>
              </div>
              {data.truncated && <Alert kind="info">Showing the top {MAX_ROWS} pages by total; narrow the range or use the API for all.</Alert>}
              {sorted.length === 0 ? (
                <Empty title="No page views in this range">
                  Paste the script tag from Settings into your docs site, or send events to <code>/v1/analytics/{projectId}/events</code>.
                </Empty>
              ) : (
                <>
                  <div className="table-wrap">
                    <table className="numbers">
                      <caption className="visually-hidden">
                        {unit} per page, sorted by {sort.key} {sort.dir === 'asc' ? 'ascending' : 'descending'}
                      </caption>
                      <thead>
                        <tr>
                          {(['path', 'human', 'ai', 'total'] as SortKey[]).map((k) => (
                            <th key={k} scope="col" aria-sort={sort.key === k ? (sort.dir === 'asc' ? 'ascending' : 'descending') : 'none'}>
                              <button type="button" className="sort" onClick={() => toggleSort(k)}>
                                {k === 'path' ? 'Page' : k === 'ai' ? 'AI' : k[0].toUpperCase() + k.slice(1)}
                                <span aria-hidden="true">{sort.key === k ? (sort.dir === 'asc' ? ' ▲' : ' ▼') : ''}</span>
                              </button>
                            </th>
                          ))}
                        </tr>
                      </thead>
                      <tbody>
                        {shown.map((r) => (
                          <tr key={r.path}>
                            <td className="path">{r.path}</td>
                            <td>{r.human.toLocaleString()}</td>
                            <td>{r.ai.toLocaleString()}</td>
                            <td>{r.total.toLocaleString()}</td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                  <nav className="pager" aria-label="Pages of the table">
                    <button type="button" className="button small secondary" disabled={page === 0} onClick={() => setPage((p) => p - 1)}>
                      Previous
                    </button>
                    <span>
                      Page {page + 1} of {pageCount} · {sorted.length} paths
                    </span>
                    <button type="button" className="button small secondary" disabled={page + 1 >= pageCount} onClick={() => setPage((p) => p + 1)}>
                      Next
                    </button>
                  </nav>
                </>
              )}
            </section>

            <section className="card stack" aria-labelledby="agents-title">
              <h2 id="agents-title">Top AI agents</h2>
              {data.agents.length === 0 ? (
                <Empty title="No AI agents in this range" />
              ) : (
                <div className="table-wrap">
                  <table className="numbers">
                    <thead>
                      <tr>
                        <th scope="col">Agent</th>
                        <th scope="col">Kind</th>
                        <th scope="col">Visitors</th>
                        <th scope="col">Views</th>
                      </tr>
                    </thead>
                    <tbody>
                      {data.agents.slice(0, 15).map((a) => (
                        <tr key={a.agent + a.category}>
                          <td>{a.agent}</td>
                          <td className="small">{a.category}</td>
                          <td>{a.visitors.toLocaleString()}</td>
                          <td>{a.views.toLocaleString()}</td>
                        </tr>
                      ))}
                    </tbody>
                  </table>
                </div>
              )}
            </section>
          </div>
        </div>
      )}
    </div>
  );
}

/** One point per bucket of the range, zero where the API has none. */
function fillSeries(series: SeriesPoint[], from: string, toExclusive: string, interval: 'day' | 'hour'): SeriesPoint[] {
  const step = interval === 'hour' ? 3_600_000 : DAY;
  const byStart = new Map(series.map((p) => [Date.parse(p.start), p]));
  const out: SeriesPoint[] = [];
  for (let t = Date.parse(from); t < Date.parse(toExclusive); t += step) {
    out.push(byStart.get(t) ?? { start: new Date(t).toISOString(), human: 0, ai: 0, total: 0, views: 0 });
  }
  return out;
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

function SeriesChart({ series }: { series: SeriesPoint[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  const hourly = series.length > 1 && Date.parse(series[1].start) - Date.parse(series[0].start) < DAY;
  const labels = series.map((p) => {
    const d = new Date(p.start);
    return hourly ? `${d.toISOString().slice(5, 10)} ${d.toISOString().slice(11, 16)}` : d.toISOString().slice(0, 10);
  });
  useEffect(() => {
    if (!canvas.current) return;
    const css = getComputedStyle(document.documentElement);
    const color = (v: string) => css.getPropertyValue(v).trim();
    const chart = new Chart(canvas.current, {
      type: 'line',
      data: {
        labels,
        datasets: [
          { label: 'Humans', data: series.map((p) => p.human), borderColor: color('--human'), backgroundColor: color('--human-fill'), fill: true, tension: 0.25, pointRadius: 2 },
          { label: 'AI', data: series.map((p) => p.ai), borderColor: color('--ai'), backgroundColor: color('--ai-fill'), fill: true, tension: 0.25, pointRadius: 2, borderDash: [6, 3] },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        interaction: { mode: 'index', intersect: false },
        scales: {
          y: { beginAtZero: true, ticks: { precision: 0, color: color('--muted') }, grid: { color: color('--grid') } },
          x: { ticks: { color: color('--muted'), maxRotation: 0, autoSkip: true }, grid: { display: false } },
        },
        plugins: { legend: { labels: { color: color('--text') } } },
      },
    });
    return () => chart.destroy();
  }, [series]);
  return (
    <>
      <div className="chart">
        <canvas ref={canvas} role="img" aria-label={`Line chart of human and AI visitors per ${hourly ? 'hour' : 'day'}; the same numbers are in the table below.`} />
      </div>
      <details>
        <summary>Show the chart's numbers</summary>
        <div className="table-wrap">
          <table className="numbers">
            <thead>
              <tr>
                <th scope="col">{hourly ? 'Hour (UTC)' : 'Day (UTC)'}</th>
                <th scope="col">Humans</th>
                <th scope="col">AI</th>
                <th scope="col">Total</th>
              </tr>
            </thead>
            <tbody>
              {series.map((p, i) => (
                <tr key={p.start}>
                  <td>{labels[i]}</td>
                  <td>{p.human}</td>
                  <td>{p.ai}</td>
                  <td>{p.total}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      </details>
    </>
  );
}
