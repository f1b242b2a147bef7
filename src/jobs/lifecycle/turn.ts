// The end of one turn, shared by complete.ts and fail.ts: the message is recorded with its event;
// the job stays active (and leased) while later messages wait — follow-ups queued during a turn are
// never dropped, even after a failed turn — or else takes its final status, announced, and the lease
// is released. The row is locked first, so a follow-up committing meanwhile is either seen here or
// reopens the job after this commits.
import type { JobRow } from '../view.ts';
import { lockedJob, record, type Change, type LifecycleDeps, type TransitionEvent, type Trx } from './context.ts';

export interface TurnEnd {
  jobId: string;
  owner: string;
  /** The message the turn handled; null when nothing was left to run (records no message). */
  seq: number | null;
  prLink: string | null;
  /** The handled message's columns. */
  message: { outcome: 'completed'; title: string; summary: string } | { outcome: 'failed' };
  /** The turn's event, of the message it handled. */
  event: (seq: number) => TransitionEvent;
  /** The job's columns when no message waits. */
  end: { status: 'completed' | 'failed'; error_code: string | null; error_message: string | null };
}

/** The change, `more` when messages wait; undefined when the job is no longer this owner's to record. */
export async function endTurn(trx: Trx, deps: LifecycleDeps, t: TurnEnd): Promise<{ change: Change; more: boolean } | undefined> {
  const job = await lockedJob(trx, deps, t.jobId);
  if (!job || job.lease_owner !== t.owner || job.status !== 'active') return undefined;
  const now = Date.now();
  if (t.seq !== null) {
    await trx.updateTable('job_messages').set({ handled_at: now, ...t.message }).where('job_id', '=', t.jobId).where('seq', '=', t.seq).execute();
  }
  const events = t.seq === null ? [] : (await record(trx, deps, job, t.event(t.seq), false, now)).events;
  const pending = await trx.selectFrom('job_messages').select('seq').where('job_id', '=', t.jobId).where('handled_at', 'is', null).limit(1).executeTakeFirst();
  const prLink = t.prLink ?? job.pr_link;
  if (pending) {
    await trx.updateTable('jobs').set({ pr_link: prLink, updated_at: now }).where('id', '=', t.jobId).execute();
    return { change: { row: { ...job, pr_link: prLink, updated_at: now }, events, status: false }, more: true };
  }
  const set = { ...t.end, pr_link: prLink, updated_at: now, lease_owner: null, lease_expires_at: null, lost_leases: 0 };
  await trx.updateTable('jobs').set(set).where('id', '=', t.jobId).execute();
  const row: JobRow = { ...job, ...set };
  const { webhook } = await record(trx, deps, row, null, true, now);
  return { change: { row, events, status: true, webhook }, more: false };
}
