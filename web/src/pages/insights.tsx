// Insights: what the docs' traffic says to do, first. What Folio proposes the agent fixes (suggestions.tsx),
// then the share of readers AI assistants' answers sent over time, what each AI company takes and gives
// back (ai-companies.tsx), the pages readers and AI agents asked
// for that were not found (with where they came from), and the sources. The range is in the address.
import { useMemo } from 'react';
import { folioClient, type NotFoundPage, type ReferrersPage } from '../api.ts';
import { PathCell, Table, type Column } from '../tables.tsx';
import { Alert, Empty, Loading, useAsync, useTitle } from '../ui.tsx';
import { apiRange, rangeProblem } from '../dates.ts';
import { useRangeQuery } from '../router.tsx';
import { Suggestions } from './suggestions.tsx';
import { AiCompanies } from './ai-companies.tsx';
import { AiShareChart } from './insights-chart.tsx';
import { RangeFields } from './range-fields.tsx';

export function InsightsPage({ projectId }: { projectId: string }) {
  useTitle('Insights');
  const { range, setDays, setDates } = useRangeQuery(30);
  const rangeError = rangeProblem(range);
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const report = useAsync(async () => {
    if (rangeError) return null;
    const api = apiRange(range);
    const [missing, referrers, suggestions] = await Promise.all([client.notFound({ ...api, limit: 50 }), client.referrers({ ...api, limit: 20 }), client.suggestions(api)]);
    return { missing, referrers, suggestions, range: api };
  }, [client, range.from, range.to, rangeError]);
  return (
    <div className="stack">
      <h1>Insights</h1>
      <RangeFields id="i" range={range} setDays={setDays} setDates={setDates} />
      {rangeError && <Alert>{rangeError}</Alert>}
      {report.error && <Alert title="Insights could not be loaded.">{report.error}</Alert>}
      {report.loading && !report.data && <Loading what="insights" />}
      {report.data && (
        <div className={report.loading ? 'stack stale' : 'stack'} aria-busy={report.loading}>
          <Suggestions list={report.data.suggestions} client={client} projectId={projectId} range={report.data.range} />
          <AiReferrals referrers={report.data.referrers} />
          <AiCompanies client={client} range={report.data.range} />
          <BrokenPaths missing={report.data.missing} />
          <Sources referrers={report.data.referrers} />
        </div>
      )}
    </div>
  );
}

/** The share of human visitors an AI assistant's answer sent, in the range and per day. */
function AiReferrals({ referrers }: { referrers: ReferrersPage }) {
  const fromAi = referrers.classes.find((c) => c.source === 'ai_assistant')?.human ?? 0;
  const days = referrers.aiShare;
  return (
    <section className="card stack" aria-labelledby="ai-title">
      <h2 id="ai-title">Readers sent by AI answers</h2>
      <p>
        Human visitors who arrived from an answer of ChatGPT, Perplexity, Claude, Gemini, Copilot or another AI assistant in this range:{' '}
        <strong data-testid="ai-referred">{fromAi.toLocaleString()}</strong>.
      </p>
      {days.every((d) => d.humans === 0) ? <Empty title="No human visitors in this range" /> : <AiShareChart days={days} />}
    </section>
  );
}

/** Columns a phone drops (wide-only): the row keeps the path, its visitors and where they came from. */
const wide = (label: string): Column => ({ label, className: 'wide-only' });
const MISSING_COLUMNS: Column[] = ['Path', wide('Human'), wide('AI'), 'Visitors', wide('Views'), wide('Last seen'), wide('Came from')];

const cameFrom = (p: NotFoundPage['paths'][number]) => p.referrers.map((r) => `${r.host ?? 'no referrer'} (${r.visitors})`).join(', ');

/** Pages that answered 404 or 410, most visitors first, with where their readers came from. */
function BrokenPaths({ missing }: { missing: NotFoundPage }) {
  const t = missing.totals;
  return (
    <section className="card stack" aria-labelledby="missing-title">
      <h2 id="missing-title">Pages not found</h2>
      {missing.paths.length === 0 ? (
        <Empty title="No page was missing in this range">Readers hit no 404 that Folio heard of (access logs, events with a status, or the script on the 404 page).</Empty>
      ) : (
        <>
          <p className="small">
            {t.total.toLocaleString()} visitors ({t.human.toLocaleString()} human, {t.ai.toLocaleString()} AI) asked for a page that was not there, {t.views.toLocaleString()} times.
          </p>
          <Table className="numbers" columns={MISSING_COLUMNS}>
            {missing.paths.map((p) => (
              <tr key={p.path}>
                <PathCell path={p.path} copy phoneNote={`From ${cameFrom(p)}`} />
                <td className="wide-only">{p.human.toLocaleString()}</td>
                <td className="wide-only">{p.ai.toLocaleString()}</td>
                <td>{p.total.toLocaleString()}</td>
                <td className="wide-only">{p.views.toLocaleString()}</td>
                <td className="small wide-only">{p.lastSeen.slice(0, 10)}</td>
                <td className="small wide-only">{cameFrom(p)}</td>
              </tr>
            ))}
          </Table>
          {missing.hasMore && <p className="small muted">The 50 paths with the most visitors; the API and `folio analytics not-found --all` list every one.</p>}
        </>
      )}
    </section>
  );
}

const SOURCE_LABELS: Record<ReferrersPage['classes'][number]['source'], string> = { ai_assistant: 'AI answers', search: 'Search', social: 'Social', other: 'Other sites' };

/** Where readers came from: by kind of source, then the top referring hosts. */
function Sources({ referrers }: { referrers: ReferrersPage }) {
  return (
    <section className="card stack" aria-labelledby="sources-title">
      <h2 id="sources-title">Where readers come from</h2>
      <Table className="numbers" columns={['Source', 'Human', 'AI', 'Visitors']}>
        {referrers.classes.map((c) => (
          <tr key={c.source}>
            <td>{SOURCE_LABELS[c.source]}</td>
            <td>{c.human.toLocaleString()}</td>
            <td>{c.ai.toLocaleString()}</td>
            <td>{c.total.toLocaleString()}</td>
          </tr>
        ))}
      </Table>
      {referrers.referrers.length > 0 && (
        <Table className="numbers" columns={['Host', 'Source', 'Visitors']}>
          {referrers.referrers.map((r) => (
            <tr key={r.host}>
              <PathCell path={r.host} />
              <td className="small">{SOURCE_LABELS[r.source]}</td>
              <td>{r.total.toLocaleString()}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
