// Insights: what the docs' traffic says needs fixing. Pages readers and AI agents asked for that were
// not found (with where they came from), what Folio proposes the agent fixes (suggestions.tsx), and
// the readers AI assistants' answers sent, over time.
import { useMemo, useState } from 'react';
import { folioClient, type NotFoundPage, type ReferrersPage } from '../api.ts';
import { Table } from '../tables.tsx';
import { Alert, Empty, Loading, useAsync, useTitle } from '../ui.tsx';
import { lastDays } from '../dates.ts';
import { Suggestions } from './suggestions.tsx';
import { AiCompanies } from './ai-companies.tsx';

const RANGES = [7, 30, 90] as const;
const percent = (part: number, whole: number) => (whole === 0 ? '—' : `${((part / whole) * 100).toFixed(1)}%`);

export function InsightsPage({ projectId }: { projectId: string }) {
  useTitle('Insights');
  const [days, setDays] = useState<(typeof RANGES)[number]>(30);
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const report = useAsync(async () => {
    const range = lastDays(days);
    const [missing, referrers, suggestions] = await Promise.all([client.notFound({ ...range, limit: 50 }), client.referrers({ ...range, limit: 20 }), client.suggestions(range)]);
    return { missing, referrers, suggestions, range };
  }, [client, days]);
  return (
    <div className="stack">
      <h1>Insights</h1>
      <div className="presets" role="group" aria-label="Range">
        {RANGES.map((d) => (
          <button key={d} type="button" className={d === days ? 'button small' : 'button small secondary'} aria-pressed={d === days} onClick={() => setDays(d)}>
            Last {d} days
          </button>
        ))}
      </div>
      {report.error && <Alert title="Insights could not be loaded.">{report.error}</Alert>}
      {report.loading && !report.data && <Loading what="insights" />}
      {report.data && (
        <div className={report.loading ? 'stack stale' : 'stack'} aria-busy={report.loading}>
          <AiReferrals referrers={report.data.referrers} />
          <Suggestions list={report.data.suggestions} client={client} projectId={projectId} range={report.data.range} />
          <BrokenPaths missing={report.data.missing} />
          <Sources referrers={report.data.referrers} />
          <AiCompanies client={client} range={report.data.range} />
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
      {days.length === 0 ? (
        <Empty title="No human visitors in this range" />
      ) : (
        <Table className="numbers" columns={['Day (UTC)', 'Human visitors', 'From AI answers', 'Share']}>
          {days.map((d) => (
            <tr key={d.start}>
              <td>{d.start.slice(0, 10)}</td>
              <td>{d.humans.toLocaleString()}</td>
              <td>{d.fromAiAssistant.toLocaleString()}</td>
              <td>
                <span className="share-track" aria-hidden="true">
                  <span className="share-bar" style={{ width: `${d.humans ? Math.round((d.fromAiAssistant / d.humans) * 100) : 0}%` }} />
                </span>
                {percent(d.fromAiAssistant, d.humans)}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}

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
          <Table className="numbers" columns={['Path', 'Human', 'AI', 'Visitors', 'Views', 'Last seen', 'Came from']}>
            {missing.paths.map((p) => (
              <tr key={p.path}>
                <td className="path">{p.path}</td>
                <td>{p.human.toLocaleString()}</td>
                <td>{p.ai.toLocaleString()}</td>
                <td>{p.total.toLocaleString()}</td>
                <td>{p.views.toLocaleString()}</td>
                <td className="small">{p.lastSeen.slice(0, 10)}</td>
                <td className="small">{p.referrers.map((r) => `${r.host ?? 'no referrer'} (${r.visitors})`).join(', ')}</td>
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
              <td className="path">{r.host}</td>
              <td className="small">{SOURCE_LABELS[r.source]}</td>
              <td>{r.total.toLocaleString()}</td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  );
}
