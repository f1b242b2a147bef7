// "Did the change help?": a merged job's pages before and after its merge (GET …/job/{id}/impact), on
// the job page as a panel and on the jobs list as a badge of the change in human visitors.
import { useState } from 'react';
import { FolioError, type FolioClient, type ImpactCounts, type ImpactPage, type Job, type JobImpact } from '../api.ts';
import { PathCell, Table, type Column } from '../tables.tsx';
import { Alert, formatDate, Loading, SelectField, useAsync, type Option } from '../ui.tsx';

const n = (x: number) => x.toLocaleString();
const WINDOWS: readonly Option<string>[] = [
  ['7', '7 days'],
  ['14', '14 days'],
  ['30', '30 days'],
  ['90', '90 days'],
];

const CHANGE_WORDS: Record<ImpactPage['change'], string> = { added: 'Added', edited: 'Edited', moved: 'Moved', removed: 'Removed', redirect: 'Redirect added' };

/** "+25%", "−10%", "new" (from none), or "no change": the change from before to after. */
export function changeText(before: number, after: number): string {
  if (before === after) return 'no change';
  if (before === 0) return 'new';
  const pct = Math.round(((after - before) / before) * 100);
  return pct === 0 ? (after > before ? '+<1%' : '−<1%') : `${pct > 0 ? '+' : '−'}${Math.abs(pct)}%`;
}

const daysText = (d: number) => (d === 1 ? 'day' : `${d} days`);

/** A before → after cell with the change in its title. */
function Delta({ before, after, className }: { before: number; after: number; className?: string }) {
  return (
    <td className={className} title={changeText(before, after)}>
      {n(before)} → <strong>{n(after)}</strong>
    </td>
  );
}

/** The figures of a page or the total: humans and AI visitors, views, humans from AI answers, not found. */
function Figures({ before, after }: { before: ImpactCounts; after: ImpactCounts }) {
  return (
    <>
      <Delta before={before.humans} after={after.humans} />
      <Delta before={before.ai} after={after.ai} className="wide-only" />
      <Delta before={before.views} after={after.views} className="wide-only" />
      <Delta before={before.fromAiAnswers} after={after.fromAiAnswers} className="wide-only" />
      <Delta before={before.notFound} after={after.notFound} className="wide-only" />
    </>
  );
}

const wide = (label: string): Column => ({ label, className: 'wide-only' });
// A phone keeps the page and its humans; the change and the not-found visitors go under the path.
const COLUMNS: Column[] = ['Page', { label: 'Change', className: 'wide-only change-cell' }, { label: 'Humans', className: 'num' }, wide('AI visitors'), wide('Views'), wide('From AI answers'), wide('Not found')];

function pageNote(p: ImpactPage): string {
  const change = p.change === 'moved' && p.previousPath ? `Moved from ${p.previousPath}` : p.change === 'redirect' && p.redirectTo ? `Redirect to ${p.redirectTo}` : CHANGE_WORDS[p.change];
  const notFound = p.before.notFound > 0 || p.after.notFound > 0 ? `; not found ${n(p.before.notFound)} → ${n(p.after.notFound)}` : '';
  return change + notFound;
}

function ImpactTable({ impact }: { impact: JobImpact }) {
  return (
    <Table className="numbers" columns={COLUMNS} aria-label="Visitors per page, before → after the merge">
      {impact.pages.map((p) => (
        <tr key={`${p.change}:${p.path}`}>
          <PathCell path={p.path} copy phoneNote={pageNote(p)} />
          <td className="wide-only small change-cell">
            {CHANGE_WORDS[p.change]}
            {p.change === 'moved' && p.previousPath && <span className="small muted path-line"> from <span className="path-text" title={p.previousPath}>{p.previousPath}</span></span>}
            {p.change === 'redirect' && p.redirectTo && <span className="small muted path-line"> to <span className="path-text" title={p.redirectTo}>{p.redirectTo}</span></span>}
          </td>
          <Figures before={p.before} after={p.after} />
        </tr>
      ))}
      <tr className="total-row">
        <th scope="row">All pages</th>
        <td className="wide-only" />
        <Figures before={impact.total.before} after={impact.total.after} />
      </tr>
    </Table>
  );
}

/** The headline: humans on the job's pages before and after, and what changed in not-found visitors. */
function Headline({ impact }: { impact: JobImpact }) {
  const { before, after } = impact.total;
  return (
    <p data-testid="impact-headline">
      Human visitors on its pages: <strong>{n(before.humans)}</strong> in the {daysText(impact.windowDays)} before the merge, <strong>{n(after.humans)}</strong> in the{' '}
      {daysText(impact.windowDays)} after ({changeText(before.humans, after.humans)}).
      {(before.notFound > 0 || after.notFound > 0) && (
        <>
          {' '}
          Not-found visitors on the old addresses: {n(before.notFound)} → {n(after.notFound)}.
        </>
      )}
    </p>
  );
}

/**
 * The panel on a job's page, once the job has a pull request: the figures once it was merged a day
 * ago, else why not yet (asking is what makes the server check the pull request's state).
 */
export function ImpactPanel({ client, job }: { client: FolioClient; job: Job }) {
  const [days, setDays] = useState('14');
  const impact = useAsync(async () => (job.prLink ? readImpact(client, job.id, Number(days)) : null), [client, job.id, job.prLink, job.mergedAt, days]);
  if (!job.prLink) return null;
  const ready = impact.data?.kind === 'ready' ? impact.data.impact : null;
  return (
    <section className="card stack" aria-labelledby="impact-title" data-testid="job-impact">
      <div className="page-head">
        <h2 id="impact-title">Effect on its pages</h2>
        {ready && <SelectField id="impact-days" label="Window" inline value={days} onChange={setDays} options={WINDOWS} />}
      </div>
      {impact.loading && !impact.data && <Loading what="the effect of the change" />}
      {impact.error && <Alert title="The effect could not be measured.">{impact.error}</Alert>}
      <p className="small">Visitors of the pages the job touched, in equal windows of whole days (UTC) before and after the day its pull request was merged.</p>
      {impact.data?.kind === 'waiting' && <p className="small muted">{impact.data.reason}</p>}
      {ready && (
        <>
          <Headline impact={ready} />
          <p className="small muted">
            Merged {formatDate(ready.pullRequest.mergedAt)}; windows of {ready.windowDays === 1 ? '1 day' : `${ready.windowDays} days`}, the day of the merge in neither: {formatDate(ready.before.from)} to {formatDate(ready.before.to)} and{' '}
            {formatDate(ready.after.from)} to {formatDate(ready.after.to)}.{ready.clipped && ` ${ready.clipped}`}
          </p>
          {ready.pages.length === 0 ? <p className="small muted">The job changed no page of the site (only other files).</p> : <ImpactTable impact={ready} />}
        </>
      )}
    </section>
  );
}

type ImpactRead = { kind: 'ready'; impact: JobImpact } | { kind: 'waiting'; reason: string };

/** The impact, or why it is not measurable yet (409 impact_not_ready: its sentence is the reason). */
async function readImpact(client: FolioClient, jobId: string, days: number): Promise<ImpactRead> {
  try {
    return { kind: 'ready', impact: await client.getJobImpact(jobId, { days }) };
  } catch (err) {
    if (err instanceof FolioError && err.code === 'impact_not_ready') return { kind: 'waiting', reason: err.message };
    throw err;
  }
}

/** The jobs list's badge for a merged job: the change in human visitors on its pages (fetched once per row). */
export function ImpactBadge({ client, job }: { client: FolioClient; job: Job }) {
  const impact = useAsync(async () => (job.mergedAt ? readImpact(client, job.id, 14) : null), [client, job.id, job.mergedAt]);
  if (!job.mergedAt) return null;
  const data = impact.data;
  if (!data || data.kind === 'waiting') return <span className="badge muted" title={data?.reason ?? 'Merged'}>merged</span>;
  const { before, after } = data.impact.total;
  const trend = after.humans > before.humans ? 'up' : after.humans < before.humans ? 'down' : 'flat';
  return (
    <span className={`badge impact-${trend}`} title={`Human visitors on its pages: ${n(before.humans)} in the ${daysText(data.impact.windowDays)} before the merge, ${n(after.humans)} after.`}>
      merged · humans {changeText(before.humans, after.humans)}
    </span>
  );
}
