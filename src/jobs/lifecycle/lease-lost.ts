// A lease that expired: its holder stopped heartbeating (crash, restart), so its run is lost. The
// job resumes under the next claim, counted in lost_leases; after FOLIO_MAX_LOST_LEASES it ends
// failed (worker_lost) with its waiting messages, announced like any failure.
import type { JobRow } from '../view.ts';
import { record, settleMessages, type Change, type LifecycleDeps, type Trx } from './context.ts';

/** `resume`: the job with its lost lease counted, to be claimed again; `failed`: the change that ended it. */
export type LeaseLost = { kind: 'resume'; row: JobRow } | { kind: 'failed'; change: Change };

export async function leaseLost(trx: Trx, deps: LifecycleDeps, job: JobRow, now: number): Promise<LeaseLost> {
  const lost = job.lost_leases + 1;
  if (lost < deps.config.queue.maxLostLeases) return { kind: 'resume', row: { ...job, lost_leases: lost } };
  const set = {
    status: 'failed' as const,
    lost_leases: lost,
    lease_owner: null,
    lease_expires_at: null,
    updated_at: now,
    error_code: 'worker_lost',
    error_message: `The job lost its worker ${lost} times (process crash or restart) and was stopped.`,
  };
  await trx.updateTable('jobs').set(set).where('id', '=', job.id).execute();
  await settleMessages(trx, job.id, 'failed', now);
  const row: JobRow = { ...job, ...set };
  const recorded = await record(trx, deps, row, { type: 'error', data: { code: set.error_code, message: set.error_message } }, true, now);
  return { kind: 'failed', change: { row, ...recorded, status: true } };
}
