// What the traffic proposes to the agent, on the Insights page: each suggestion with its paths, their
// visitors and the pages likely to replace them, a "Fix with the agent" button that starts its job,
// and the jobs started from suggestions with each path's not-found visitors before and after.
import type { FolioClient, StartedSuggestion, Suggestion, SuggestionList } from '../api.ts';
import { navigate } from '../router.tsx';
import { PathCell, Table } from '../tables.tsx';
import { ActionButton, Alert, Empty, StatusBadge, useAction } from '../ui.tsx';
import { isoMinute } from '../dates.ts';

export interface SuggestionRange {
  dateFrom: string;
  dateTo: string;
}

export function Suggestions({ list, client, projectId, range }: { list: SuggestionList; client: FolioClient; projectId: string; range: SuggestionRange }) {
  return (
    <section className="card stack" aria-labelledby="suggestions-title">
      <h2 id="suggestions-title">Suggestions for the agent</h2>
      <p className="small">
        Not-found paths with at least {list.minVisitors} visitors, and Markdown AI agents asked for, in this range.
        {list.site.read ? ` Likely pages come from the ${list.site.framework} site on the base branch (${list.site.pages} pages).` : ''}
      </p>
      {!list.site.read && (
        <Alert kind="warning" title="The docs repository could not be read, so no likely pages are offered.">
          {list.site.error}
        </Alert>
      )}
      {list.site.notes.map((note) => (
        <Alert key={note} kind="info">
          {note}
        </Alert>
      ))}
      {list.suggestions.length === 0 ? (
        <Empty title="Nothing to propose">No path that answered “not found” reached the threshold, or a job is already fixing it.</Empty>
      ) : (
        list.suggestions.map((s) => <SuggestionCard key={s.id} suggestion={s} client={client} projectId={projectId} range={range} />)
      )}
      {list.notProposed.length > 0 && <NotProposed paths={list.notProposed} />}
      {list.started.length > 0 && <Started started={list.started} projectId={projectId} />}
    </section>
  );
}

const likely = (p: Suggestion['paths'][number]) => (p.candidates.length ? p.candidates.map((c) => `${c.url} (${c.title})`).join(', ') : '—');

function SuggestionCard({ suggestion, client, projectId, range }: { suggestion: Suggestion; client: FolioClient; projectId: string; range: SuggestionRange }) {
  const start = useAction(async () => {
    const { job } = await client.startSuggestion(suggestion.id, range);
    navigate(`/projects/${projectId}/jobs/${job.id}`);
  });
  return (
    <div className="stack" data-testid={`suggestion-${suggestion.kind}`}>
      <h3>{suggestion.title}</h3>
      <Table className="numbers" columns={['Path', 'Visitors', { label: 'Human', className: 'wide-only' }, { label: 'AI', className: 'wide-only' }, { label: 'Likely page', className: 'wide-only' }]}>
        {suggestion.paths.map((p) => (
          <tr key={p.path}>
            <PathCell path={p.path} copy phoneNote={`Likely page: ${likely(p)}`} />
            <td>{p.visitors.total.toLocaleString()}</td>
            <td className="wide-only">{p.visitors.human.toLocaleString()}</td>
            <td className="wide-only">{p.visitors.ai.toLocaleString()}</td>
            <td className="small wide-only">{likely(p)}</td>
          </tr>
        ))}
      </Table>
      <details>
        <summary>The prompt the agent gets</summary>
        <pre className="codeblock">{suggestion.prompt}</pre>
      </details>
      {start.error && <Alert title="The job could not be started.">{start.error}</Alert>}
      <div>
        <ActionButton action={start} label="Fix with the agent" busyLabel="Starting the job…" />
      </div>
    </div>
  );
}

/** Paths that reached the threshold but are not shaped like the site's: shown percent-encoded, never offered to the agent. */
function NotProposed({ paths }: { paths: SuggestionList['notProposed'] }) {
  return (
    <div className="stack" data-testid="not-proposed">
      <h3>Not proposed to the agent</h3>
      <p className="small">
        These addresses reached the threshold but are not shaped like paths of this site, so Folio puts them in no prompt and no weekly run. They are shown
        percent-encoded, as visitors sent them.
      </p>
      <Table className="numbers" columns={['Path', 'Visitors', 'Why']}>
        {paths.map((p) => (
          <tr key={p.path}>
            <PathCell path={p.escaped} />
            <td>{p.visitors.total.toLocaleString()}</td>
            <td className="small">{p.message}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}

const sum = (paths: StartedSuggestion['paths'], side: 'before' | 'after') => paths.reduce((n, p) => n + (p[side]?.total ?? 0), 0);

/** "After" in words: a count only once it covers a day (outcomes.ts), so no early zero reads as a fix that worked. */
function afterText(s: StartedSuggestion): string {
  if (!s.measuredSince) return s.job.status === 'active' ? 'after the job completes' : `not measured: the job ${s.job.status} without a fix`;
  const from = s.measuredFrom === 'merge' ? 'merge' : 'job completed';
  if (!s.afterReady) return `not yet: counted from ${s.measuredFrom === 'merge' ? 'the merge' : 'the job’s completion'} (${isoMinute(s.measuredSince)}) once a day has passed`;
  return `${sum(s.paths, 'after').toLocaleString()} in ${s.afterDays} days since the ${from} (${isoMinute(s.measuredSince)})`;
}

/** Jobs started from suggestions: did the fix work? Not-found visitors before and after. */
function Started({ started, projectId }: { started: StartedSuggestion[]; projectId: string }) {
  return (
    <div className="stack">
      <h3>Started from suggestions</h3>
      <Table columns={['Job', 'Status', 'Pull request', 'Not-found visitors before', 'After']}>
        {started.map((s) => (
          <tr key={s.job.id} data-testid="started-suggestion">
            <td>
              <a href={`/projects/${projectId}/jobs/${s.job.id}`}>{s.title}</a>
              {s.automatic && <span className="small muted"> (weekly, automatic)</span>}
            </td>
            <td>
              <StatusBadge status={s.job.status} />
            </td>
            <td className="small">{s.pullRequest ? (s.job.prLink ? <a href={s.job.prLink}>{s.pullRequest.state}</a> : s.pullRequest.state) : s.job.prLink ? <a href={s.job.prLink}>opened</a> : '—'}</td>
            <td>
              {sum(s.paths, 'before').toLocaleString()} in {s.beforeDays} days
            </td>
            <td className="small">{afterText(s)}</td>
          </tr>
        ))}
      </Table>
    </div>
  );
}
