// A run that stopped before its turn ended, because the job was archived or its lease was taken:
// no row changes (the archive or the new holder already wrote it); the run's `run.stopped` event.
import type { AbortReason } from '../handler.ts';
import { lockedJob, record, type Change, type LifecycleDeps, type Trx } from './context.ts';

export async function stopRun(trx: Trx, deps: LifecycleDeps, jobId: string, reason: Exclude<AbortReason, 'shutdown'>): Promise<Change | undefined> {
  const job = await lockedJob(trx, deps, jobId);
  if (!job) return undefined;
  return { row: job, ...(await record(trx, deps, job, { type: 'run.stopped', data: { reason } }, false, Date.now())), status: false };
}

/** Why the store says a run may not go on: its job was archived, or someone else holds the lease. */
export async function stopReason(deps: LifecycleDeps, jobId: string): Promise<Exclude<AbortReason, 'shutdown'>> {
  const job = await deps.db.selectFrom('jobs').select(['status']).where('id', '=', jobId).executeTakeFirst();
  return job?.status === 'archived' ? 'archived' : 'lease_lost';
}
