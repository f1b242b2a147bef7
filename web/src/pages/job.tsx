// One agent job: prompt and follow-ups, the live event stream, the pull request, follow-up and archive.
import { useEffect, useMemo, useState } from 'react';
import { api, errorMessage, folioClient, type ChecksMode, type FolioClient, type Job, type JobChanges, type JobEvent, type JobMessage, type WebhookDelivery } from '../api.ts';
import { Link } from '../router.tsx';
import { ACTIONS_COLUMN, Table } from '../tables.tsx';
import { ActionForm, Alert, Confirm, formatDate, Loading, StatusBadge, SubmitButton, TextField, useAction, useTitle } from '../ui.tsx';
import { prLabel } from './jobs.tsx';
import { ChecksCard, DiffView } from './job-changes.tsx';
import { formatCost, usageTitle } from './usage.tsx';
import { messageOrigin, startedBy } from '../../../src/jobs/started-by.ts';
import { EventList } from './job-events.tsx';
import { PromptText } from './job-context.tsx';
import { ImpactPanel } from './job-impact.tsx';

const REFRESH_MS = 3000;
const MAX_EVENTS = 2000;

/** Event types after which the job, its messages or its changes may have changed. */
const CHANGING_EVENTS = ['turn.completed', 'pull_request', 'error', 'job.archived', 'run.started', 'message.queued', 'changes', 'checks'];

/** The job, its messages and changes: on load, every few seconds, and whenever `tick` moves. */
function useJobState(client: FolioClient, projectId: string, jobId: string, tick: number) {
  const [job, setJob] = useState<Job | null>(null);
  const [messages, setMessages] = useState<JobMessage[]>([]);
  const [changes, setChanges] = useState<JobChanges | null>(null);
  const [checksMode, setChecksMode] = useState<ChecksMode | null>(null);
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    let live = true;
    const load = async () => {
      try {
        const [j, m, c] = await Promise.all([client.getJob(jobId), api.jobMessages(projectId, jobId), client.getJobChanges(jobId)]);
        if (!live) return;
        setJob(j);
        setMessages(m);
        // A new object only when something changed: the diff is parsed again only then.
        setChanges((old) => (old && old.updatedAt === c.updatedAt && old.files.length === c.files.length ? old : c));
        setError(null);
      } catch (err) {
        if (live) setError(errorMessage(err));
      }
    };
    void load();
    api.project(projectId).then((p) => live && setChecksMode(p.checks), () => undefined);
    const timer = window.setInterval(() => !document.hidden && load(), REFRESH_MS);
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [client, projectId, jobId, tick]);
  return { job, setJob, messages, changes, checksMode, error };
}

/** The live event stream (Server-Sent Events through the typed client, resuming after drops); `onChange` after events that change the job. */
function useJobEvents(client: FolioClient, jobId: string, onChange: () => void) {
  const [events, setEvents] = useState<JobEvent[]>([]);
  const [state, setState] = useState<'connecting' | 'live' | 'error'>('connecting');
  const [error, setError] = useState<string | null>(null);
  useEffect(() => {
    const abort = new AbortController();
    setEvents([]);
    setState('connecting');
    (async () => {
      try {
        for await (const e of client.jobEvents(jobId, { follow: true, untilDone: false, signal: abort.signal })) {
          setState('live');
          setEvents((list) => (list.length >= MAX_EVENTS ? [...list.slice(-MAX_EVENTS + 1), e] : [...list, e]));
          if (CHANGING_EVENTS.includes(e.type)) onChange();
        }
      } catch (err) {
        if (abort.signal.aborted) return;
        setState('error');
        setError(errorMessage(err));
      }
    })();
    // A stream with nothing new to say yet is still live.
    const settle = window.setTimeout(() => setState((s) => (s === 'connecting' ? 'live' : s)), 1500);
    return () => {
      abort.abort();
      window.clearTimeout(settle);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, jobId]);
  return { events, state, error };
}

export function JobPage({ projectId, jobId }: { projectId: string; jobId: string }) {
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [tick, setTick] = useState(0);
  const refresh = () => setTick((t) => t + 1);
  const { job, setJob, messages, changes, checksMode, error } = useJobState(client, projectId, jobId, tick);
  const stream = useJobEvents(client, jobId, refresh);
  useTitle(job?.title || `Job ${jobId}`);
  if (error && !job) return <Alert title="This job could not be loaded.">{error}</Alert>;
  if (!job) return <Loading what="the job" />;
  const changed = (j: Job) => (setJob(j), refresh());
  return (
    <div className="stack">
      <p className="small">
        <Link href={`/projects/${projectId}/jobs`}>← All jobs</Link>
      </p>
      <div className="page-head">
        <div>
          <h1 className="job-title">{job.title || `Job ${job.id}`}</h1>
          <p className="mono small muted job-id">{job.id}</p>
        </div>
        <StatusBadge status={job.status} />
      </div>
      {error && <Alert kind="warning">Showing the last known state: {error}</Alert>}
      <JobSummary job={job} />
      {job.error && <Alert title={`Failed (${job.error.code}).`}>{job.error.message}</Alert>}
      <div className="job-grid">
        <section className="stack" aria-labelledby="conv-title">
          <h2 id="conv-title">Instructions</h2>
          <Messages messages={messages} />
          <FollowUp job={job} client={client} onSent={changed} />
          <ArchiveButton job={job} client={client} onArchived={changed} />
          <Webhooks jobId={job.id} client={client} refresh={tick} />
        </section>
        <section className="stack" aria-labelledby="events-title">
          <div className="page-head">
            <h2 id="events-title">Events</h2>
            <StreamState state={stream.state} active={job.status === 'active'} />
          </div>
          {stream.error && <Alert kind="warning">The live stream stopped: {stream.error} Reload the page to reconnect.</Alert>}
          <EventList events={stream.events} />
        </section>
      </div>
      <ImpactPanel client={client} job={job} />
      <ChecksCard checks={changes?.checks ?? null} mode={checksMode} status={job.status} />
      <DiffView changes={changes} status={job.status} />
    </div>
  );
}

/** "● Live" only while the job runs and its stream is open; a finished job's events are all there. */
function StreamState({ state, active }: { state: 'connecting' | 'live' | 'error'; active: boolean }) {
  if (state === 'error') return <span className="live-dot error" role="status">Disconnected</span>;
  if (!active) return <span className="small muted" role="status" data-testid="stream-state">Finished: all events shown</span>;
  return (
    <span className={`live-dot ${state}`} role="status" data-testid="stream-state">
      {state === 'live' ? 'Live' : 'Connecting…'}
    </span>
  );
}

/** Where a follow-up came from: "from a review by @name", linked to the review. */
function Origin({ origin }: { origin: NonNullable<JobMessage['origin']> }) {
  const { label, url } = messageOrigin(origin);
  return (
    <>
      {' · '}
      <a className="origin" href={url} target="_blank" rel="noreferrer noopener">
        {label}
      </a>
    </>
  );
}

/** The prompt and the follow-ups, each with the agent's answer once handled. */
function Messages({ messages }: { messages: JobMessage[] }) {
  return (
    <ol className="messages">
      {messages.map((m) => (
        <li key={m.seq} className="card message">
          <p className="muted small">
            {m.seq === 1 ? 'Prompt' : `Follow-up ${m.seq - 1}`} · {formatDate(m.createdAt)}
            {m.origin && <Origin origin={m.origin} />}
          </p>
          <PromptText prompt={m.prompt} />
          {m.handledAt ? (
            <div className="reply">
              <p className="small muted">
                Agent · {m.outcome} · {formatDate(m.handledAt)}
              </p>
              {m.title && <p className="reply-title">{m.title}</p>}
              {m.summary && <p className="reply-summary">{m.summary}</p>}
            </div>
          ) : (
            <p className="small muted">Waiting for the agent…</p>
          )}
        </li>
      ))}
    </ol>
  );
}

function JobSummary({ job }: { job: Job }) {
  return (
    <dl className="card summary">
      <div>
        <dt>Pull request</dt>
        <dd data-testid="pr-link">
          {job.prLink ? (
            <a href={job.prLink} target="_blank" rel="noreferrer">
              {prLabel(job.prLink)} <span className="small muted">{job.prLink}</span>
            </a>
          ) : job.status === 'active' ? (
            'Not yet: the agent is working'
          ) : (
            'None'
          )}
        </dd>
      </div>
      {job.trigger && (
        <div>
          <dt>Started by</dt>
          <dd data-testid="job-trigger">
            <StartedBy trigger={job.trigger} />
          </dd>
        </div>
      )}
      <div>
        <dt>Branch</dt>
        <dd className="mono">
          {job.source.ref} <span className="muted">from</span> {job.source.baseRef}
        </dd>
      </div>
      <div>
        <dt>Model</dt>
        <dd>{job.model}</dd>
      </div>
      <div>
        <dt>Usage</dt>
        <dd data-testid="job-usage" title={usageTitle(job.usage)}>
          {job.usage.totalTokens.toLocaleString('en-US')} tokens · {formatCost(job.usage.estimatedCostUsd)}
          {job.limit && <span data-testid="job-limit"> {limitText(job.limit)}</span>}
        </dd>
      </div>
      <div>
        <dt>Files</dt>
        <dd>
          {job.files.length} changed
          {job.files.length > 0 && (
            <>
              {' '}
              <span className="adds">+{job.files.reduce((n, f) => n + f.additions, 0)}</span>{' '}
              <span className="dels">−{job.files.reduce((n, f) => n + f.deletions, 0)}</span>
            </>
          )}
        </dd>
      </div>
      <div>
        <dt>Created</dt>
        <dd>{formatDate(job.createdAt)}</dd>
      </div>
      <div>
        <dt>Updated</dt>
        <dd>{formatDate(job.updatedAt)}</dd>
      </div>
    </dl>
  );
}

function FollowUp({ job, client, onSent }: { job: Job; client: FolioClient; onSent: (j: Job) => void }) {
  const [prompt, setPrompt] = useState('');
  if (job.status === 'archived') return <p className="muted">This job is archived; start a new job to make more changes.</p>;
  const send = async () => {
    if (!prompt.trim()) throw new Error('Write the follow-up instruction first.');
    onSent(await client.sendMessage(job.id, prompt));
    setPrompt('');
  };
  return (
    <ActionForm action={send} className="card stack">
      <TextField
        id="follow-up"
        label="Follow-up instruction"
        rows={3}
        value={prompt}
        onChange={setPrompt}
        placeholder="Also add an example to the README."
        hint={job.status === 'active' ? 'Queued: the agent handles it after the current turn.' : 'Reopens the job and updates the same pull request.'}
      />
      <div className="actions">
        <SubmitButton label="Send follow-up" busyLabel="Sending…" />
      </div>
    </ActionForm>
  );
}

function ArchiveButton({ job, client, onArchived }: { job: Job; client: FolioClient; onArchived: (j: Job) => void }) {
  const [open, setOpen] = useState(false);
  const archive = useAction(async () => {
    setOpen(false);
    onArchived(await client.archiveJob(job.id));
  });
  if (job.status === 'archived') return null;
  return (
    <div>
      {archive.error && <Alert>{archive.error}</Alert>}
      <button type="button" className="button danger-outline" onClick={() => setOpen(true)} disabled={archive.busy} aria-busy={archive.busy}>
        Archive job
      </button>
      <Confirm open={open} title="Archive this job?" confirmLabel="Archive" danger onConfirm={() => void archive.run()} onCancel={() => setOpen(false)}>
        <p>{job.status === 'active' ? 'The running agent is stopped. ' : ''}An archived job takes no more follow-ups. Its pull request stays open.</p>
      </Confirm>
    </div>
  );
}

const WEBHOOK_COLUMNS = ['Event', 'Status', 'Attempts', 'Last answer', ACTIONS_COLUMN];

/** The job's webhook deliveries (when the project has a webhook URL), with their outcome; each can be sent again. */
function Webhooks({ jobId, client, refresh }: { jobId: string; client: FolioClient; refresh: number }) {
  const [deliveries, setDeliveries] = useState<WebhookDelivery[] | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [again, setAgain] = useState(0);
  useEffect(() => {
    let live = true;
    const load = () =>
      client.webhookDeliveries(jobId).then(
        (list) => live && (setDeliveries(list), setError(null)),
        (err) => live && setError(errorMessage(err)),
      );
    void load();
    const timer = window.setInterval(() => !document.hidden && load(), REFRESH_MS);
    return () => {
      live = false;
      window.clearInterval(timer);
    };
  }, [client, jobId, refresh, again]);
  if (deliveries === null || (deliveries.length === 0 && !error)) return null;
  const resend = async (id: string) => {
    try {
      await client.redeliverWebhook(jobId, id);
      setAgain((n) => n + 1);
    } catch (err) {
      setError(errorMessage(err));
    }
  };
  return (
    <section className="card stack" aria-labelledby="webhooks-title">
      <h3 id="webhooks-title">Webhook deliveries</h3>
      {error && <Alert kind="warning">{error}</Alert>}
      <Table className="small" columns={WEBHOOK_COLUMNS}>
        {deliveries.map((d) => (
          <tr key={d.id} data-testid="webhook-delivery">
            <td className="mono">{d.event}</td>
            <td>{d.status === 'pending' && d.nextAttemptAt ? `pending, next try ${formatDate(d.nextAttemptAt)}` : d.status}</td>
            <td>{d.attempts}</td>
            <td>{d.lastError ?? (d.lastStatusCode !== null ? `HTTP ${d.lastStatusCode}` : '—')}</td>
            <td>
              {d.status !== 'pending' && (
                <button type="button" className="button small secondary" onClick={() => void resend(d.id)}>
                  Send again
                </button>
              )}
            </td>
          </tr>
        ))}
      </Table>
    </section>
  );
}

function StartedBy({ trigger }: { trigger: NonNullable<Job['trigger']> }) {
  const { label, url } = startedBy(trigger);
  if (!url) return <>{label}</>;
  return (
    <>
      {label}:{' '}
      <a href={url} target="_blank" rel="noreferrer">
        {url}
      </a>
    </>
  );
}

/** The job's spending limits after its spend: "of $0.50 limit", "of 90,000 tokens limit", or nothing. */
function limitText(l: NonNullable<Job['limit']>): string {
  const parts = [l.maxCostUsd !== null ? formatCost(l.maxCostUsd) : null, l.maxTokens !== null ? `${l.maxTokens.toLocaleString('en-US')} tokens` : null].filter(Boolean);
  return parts.length === 0 ? '(no limit)' : `(limit ${parts.join(' or ')})`;
}
