// A job's events as a list that follows new ones inside its own box: each event in one human line,
// with its raw data one click away.
import { useEffect, useRef, useState } from 'react';
import type { JobEvent } from '../api.ts';
import { Empty } from '../ui.tsx';

type Data = Record<string, any>;

const short = (sha: unknown) => String(sha ?? '').slice(0, 10);
const plural = (n: number, one: string, many = `${one}s`) => `${n.toLocaleString('en-US')} ${n === 1 ? one : many}`;

function summarize(value: unknown): string {
  const s = JSON.stringify(value ?? {});
  return s.length > 240 ? s.slice(0, 240) + '…' : s;
}

/** One line per event type; a type not listed shows its data, shortened. */
const LINES: Record<string, (d: Data) => string> = {
  'job.created': (d) => `Job created: ${d.model}, on branch ${d.ref} from ${d.baseRef}${d.trigger ? ', started by a code change' : ''}`,
  'message.queued': (d) => (Number(d.seq) > 1 ? `Follow-up ${Number(d.seq) - 1} queued` : 'Instruction queued'),
  'run.started': (d) => `${d.resumed ? 'Run resumed' : 'Run started'} by worker ${d.worker}`,
  'run.stopped': (d) => `Run stopped: ${d.reason}`,
  'job.archived': () => 'Job archived',
  workspace: (d) => `Workspace ready on ${d.branch} at ${short(d.startSha)}${d.resumed ? ', resuming earlier work' : ''} (${Number(d.ms ?? 0).toLocaleString('en-US')} ms)`,
  docs_profile: (d) => `Docs site: ${d.framework}${d.configFile ? ` (${d.configFile})` : ''}`,
  usage: (d) => `Model call${d.step !== undefined ? ` ${d.step}` : ''}: ${plural(Number(d.inputTokens ?? 0), 'input token')} + ${plural(Number(d.outputTokens ?? 0), 'output token')}`,
  model_retry: (d) => `Model call failed, retry ${d.attempt} in ${Math.round(Number(d.delayMs ?? 0) / 1000)} s: ${d.error}`,
  tool_call: (d) => `${d.tool}(${summarize(d.args)})`,
  tool_result: (d) => `${d.tool} → ${String(d.result ?? '').slice(0, 300)}`,
  model_message: (d) => String(d.text ?? ''),
  validation: (d) =>
    d.ok
      ? `Edited files check out (round ${d.round})`
      : `Round ${d.round}: ${plural(Array.isArray(d.issues) ? d.issues.length : 0, 'problem')} in the edited files${d.issues?.[0] ? `, first: ${d.issues[0].path}: ${d.issues[0].message}` : ''}`,
  agent_finished: (d) => `Agent finished after ${plural(Number(d.steps ?? 0), 'step')}${d.title ? `: ${d.title}` : ''}${d.usage ? ` (${plural(Number(d.usage.totalTokens ?? 0), 'token')})` : ''}`,
  no_changes: (d) => String(d.message ?? 'The agent changed no files in this turn.'),
  commit: (d) => `Committed ${short(d.sha)}: ${d.fileCount ?? d.files?.length ?? 0} file(s)${d.files?.length ? ` — ${d.files.slice(0, 5).join(', ')}` : ''}`,
  push: (d) => `Pushed ${d.branch} at ${short(d.sha)}`,
  pull_request: (d) =>
    d.url ? `${d.created ? 'Opened' : 'Updated'} pull request ${d.url}` : `${d.created ? 'Opened' : 'Updated'} pull request #${d.number} (no link: ${d.linkRefused ?? 'none given'})`,
  checks: (d) =>
    `Round ${d.round}: ${Array.isArray(d.ran) ? d.ran.join(', ') : ''} on ${d.pagesChecked} page(s) — ${d.ok ? 'no new problems' : `${d.problemCount} new problem(s)`}${d.preExistingCount ? `, ${d.preExistingCount} already on the base branch` : ''}`,
  changes: (d) => `${d.files} file(s) changed against the base: +${d.additions} −${d.deletions}`,
  error: (d) => `${d.code ?? 'error'}: ${d.message ?? ''}`,
  'turn.completed': (d) => (d.title ? `Turn finished: ${d.title}` : 'Turn finished'),
};

export function describeEvent(e: JobEvent): string {
  const line = LINES[e.type];
  return line ? line((e.data ?? {}) as Data) : summarize(e.data);
}

/** Events whose line already is their data: no raw view to open. */
const WHOLE = new Set(['model_message', 'tool_result', 'job.archived']);

function EventItem({ e }: { e: JobEvent }) {
  const text = describeEvent(e);
  return (
    <li className={`event event-${e.type.replace(/[^a-z_]/g, '-')}`} data-testid="job-event">
      <span className="event-type">{e.type}</span>
      <time dateTime={e.at} title={e.at} className="muted small">
        {e.at.slice(11, 19)}
      </time>
      <div className="event-text">
        {e.type === 'pull_request' && typeof e.data.url === 'string' ? (
          <a href={e.data.url} target="_blank" rel="noreferrer">
            {text}
          </a>
        ) : (
          text
        )}
        {!WHOLE.has(e.type) && Object.keys(e.data ?? {}).length > 0 && (
          <details className="event-raw">
            <summary>Raw data</summary>
            <pre>{JSON.stringify(e.data, null, 2)}</pre>
          </details>
        )}
      </div>
    </li>
  );
}

/** The events in a box of their own; while "follow" is on, new ones scroll that box (never the page). */
export function EventList({ events }: { events: JobEvent[] }) {
  const box = useRef<HTMLOListElement>(null);
  const [follow, setFollow] = useState(true);
  useEffect(() => {
    const list = box.current;
    if (follow && list) list.scrollTop = list.scrollHeight;
  }, [events.length, follow]);
  if (events.length === 0) return <Empty title="No events yet">Steps of the agent appear here as they happen.</Empty>;
  return (
    <>
      <label className="inline small">
        <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} /> Follow new events
      </label>
      <ol className="events" aria-label="Job events" ref={box}>
        {events.map((e) => (
          <EventItem key={e.id} e={e} />
        ))}
      </ol>
    </>
  );
}
