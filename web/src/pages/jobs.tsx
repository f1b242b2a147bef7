// Agent jobs: the list (status filter, live updates, more pages) and the new-job form.
import { useEffect, useMemo, useState } from 'react';
import { errorMessage, folioClient, type FolioClient, type Job, type JobStatus, type Session } from '../api.ts';
import { navigate } from '../router.tsx';
import { JobCells, Table } from '../tables.tsx';
import { ActionButton, ActionForm, Alert, Empty, formatDate, Loading, modelOptions, SelectField, SubmitButton, TextField, timeAgo, useAction, useTitle, type Option } from '../ui.tsx';
import { formatCost, formatTokens, usageTitle } from './usage.tsx';
import { ImpactBadge } from './job-impact.tsx';

const FILTERS: readonly Option<'' | JobStatus>[] = [
  ['', 'All'],
  ['active', 'Active'],
  ['completed', 'Completed'],
  ['failed', 'Failed'],
  ['archived', 'Archived'],
];
const REFRESH_MS = 3000;

/** The first page of jobs, refreshed every few seconds while the tab is visible (live status changes), and older pages on demand. */
function useJobList(client: FolioClient, status: '' | JobStatus) {
  const [jobs, setJobs] = useState<Job[] | null>(null);
  const [older, setOlder] = useState<Job[]>([]);
  const [cursor, setCursor] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);
  const query = { status: status || undefined, limit: 20 };
  useEffect(() => {
    let live = true;
    setJobs(null);
    setOlder([]);
    setCursor(null);
    const load = async () => {
      if (document.hidden) return;
      try {
        const page = await client.listJobsPage(query);
        if (!live) return;
        setJobs(page.jobs);
        setCursor((c) => c ?? (page.hasMore ? page.nextCursor : null));
        setError(null);
      } catch (err) {
        if (live) setError(errorMessage(err));
      }
    };
    void load();
    const timer = window.setInterval(load, REFRESH_MS);
    return () => {
      live = false;
      window.clearInterval(timer);
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [client, status]);
  const loadMore = useAction(async () => {
    if (!cursor) return;
    const page = await client.listJobsPage({ ...query, cursor });
    setOlder((o) => [...o, ...page.jobs]);
    setCursor(page.hasMore ? page.nextCursor : null);
  });
  // A job can move from an older page to the first while it refreshes: each is shown once.
  const seen = new Set<string>();
  const all = [...(jobs ?? []), ...older].filter((j) => (seen.has(j.id) ? false : (seen.add(j.id), true)));
  return { loaded: jobs !== null, all, error: error ?? loadMore.error, hasMore: cursor !== null, loadMore };
}

export function JobsPage({ projectId, session }: { projectId: string; session: Session }) {
  useTitle('Agent jobs');
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [status, setStatus] = useState<'' | JobStatus>('');
  const { loaded, all, error, hasMore, loadMore } = useJobList(client, status);

  return (
    <div className="stack">
      <h1>Agent jobs</h1>
      <NewJob projectId={projectId} session={session} />
      <section className="stack" aria-labelledby="jobs-title">
        <div className="page-head">
          <h2 id="jobs-title">Jobs</h2>
          <SelectField id="j-filter" label="Status" inline value={status} onChange={setStatus} options={FILTERS} />
        </div>
        <p className="visually-hidden" aria-live="polite">
          {loaded ? `${all.length} jobs shown` : ''}
        </p>
        {error && <Alert title="Jobs could not be loaded.">{error}</Alert>}
        {!loaded && !error && <Loading what="jobs" />}
        {loaded && all.length === 0 && (
          <Empty title={status ? `No ${status} jobs` : 'No jobs yet'}>
            {status ? 'Try another status filter.' : 'Describe a change to your docs above and the agent opens a pull request.'}
          </Empty>
        )}
        {all.length > 0 && <JobsTable projectId={projectId} jobs={all} client={client} />}
        {hasMore && (
          <div className="actions">
            <ActionButton action={loadMore} label="Load older jobs" busyLabel="Loading…" />
          </div>
        )}
      </section>
    </div>
  );
}

const JOB_COLUMNS = ['Job', 'Status', 'Pull request', 'Model', 'Tokens', 'Cost', 'Created', 'Updated'];

function JobsTable({ projectId, jobs, client }: { projectId: string; jobs: Job[]; client: FolioClient }) {
  return (
    <Table columns={JOB_COLUMNS}>
      {jobs.map((j) => (
        <tr key={j.id}>
          <JobCells projectId={projectId} job={j} />
          <td>
            {j.prLink ? (
              <a href={j.prLink} target="_blank" rel="noreferrer">
                {prLabel(j.prLink)}
              </a>
            ) : (
              <span className="muted">—</span>
            )}
            {j.mergedAt && (
              <>
                {' '}
                <ImpactBadge client={client} job={j} />
              </>
            )}
          </td>
          <td className="small">{j.model}</td>
          <td className="num" title={usageTitle(j.usage)}>
            {formatTokens(j.usage.totalTokens)}
          </td>
          <td className="num">{formatCost(j.usage.estimatedCostUsd)}</td>
          <td>{formatDate(j.createdAt)}</td>
          <td title={j.updatedAt}>{timeAgo(j.updatedAt)}</td>
        </tr>
      ))}
    </Table>
  );
}

export function prLabel(url: string): string {
  const m = /\/(?:pull|merge_requests)\/(\d+)/.exec(url);
  return m ? `#${m[1]}` : url;
}

function NewJob({ projectId, session }: { projectId: string; session: Session }) {
  const client = useMemo(() => folioClient(projectId), [projectId]);
  const [prompt, setPrompt] = useState('');
  const [model, setModel] = useState('');

  const start = async () => {
    if (!prompt.trim()) throw new Error('Describe what the agent should change.');
    const job = await client.createJob({ prompt, ...(model ? { model } : {}) });
    navigate(`/projects/${projectId}/jobs/${job.id}`);
  };

  return (
    <ActionForm action={start} className="card stack" aria-labelledby="new-job-title">
      <h2 id="new-job-title">New job</h2>
      <TextField id="job-prompt" label="Instruction" rows={3} value={prompt} onChange={setPrompt} placeholder="Document the new --dry-run flag of the deploy command." />
      <div className="row">
        <SelectField id="job-model" label="Model" value={model} onChange={setModel} options={modelOptions(session.models, 'Project default')} />
        <SubmitButton label="Start job" busyLabel="Starting…" />
      </div>
    </ActionForm>
  );
}
