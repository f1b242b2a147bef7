// active → running: the oldest claimable job (active, without a live lease) is leased to a worker,
// with its `run.started` event. A job whose lease expired is taken over (lease-lost.ts).
import type { JobRow } from '../view.ts';
import { record, type Change, type LifecycleDeps, type Trx } from './context.ts';
import { leaseLost } from './lease-lost.ts';

/** `none`: nothing to claim; `lost`: a job failed for lost leases (claim again); `claimed`: ours to run. */
export type Claim = { kind: 'none' } | { kind: 'lost'; change: Change } | { kind: 'claimed'; change: Change };

export async function claimJob(trx: Trx, deps: LifecycleDeps, owner: string, now: number): Promise<Claim> {
  const candidate = await deps.dialect
    .forClaim(
      trx
        .selectFrom('jobs')
        .selectAll()
        .where('status', '=', 'active')
        .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
        .orderBy('updated_at')
        .orderBy('id')
        .limit(1),
    )
    .executeTakeFirst();
  if (!candidate) return { kind: 'none' };
  let job: JobRow = candidate;
  if (candidate.lease_owner !== null) {
    const lost = await leaseLost(trx, deps, candidate, now);
    if (lost.kind === 'failed') return { kind: 'lost', change: lost.change };
    job = lost.row;
  }
  const row: JobRow = { ...job, lease_owner: owner, lease_expires_at: now + deps.config.queue.leaseMs };
  await trx
    .updateTable('jobs')
    .set({ lease_owner: owner, lease_expires_at: row.lease_expires_at, lost_leases: row.lost_leases })
    .where('id', '=', row.id)
    .execute();
  const recorded = await record(trx, deps, row, { type: 'run.started', data: { worker: owner, resumed: row.lost_leases > 0 } }, false, now);
  return { kind: 'claimed', change: { row, ...recorded, status: false } };
}
