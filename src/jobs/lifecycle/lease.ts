// The lease a running job is held by: extended by heartbeats, released at shutdown so the job is
// queued again for the next worker at once (running → active), and the only writer of the pull
// request link while the run goes on.
import { jobTitle } from '../../contracts/job-title.ts';
import type { LifecycleDeps } from './context.ts';

/** Extends the lease. False when the job is no longer ours to run (archived, failed or taken). */
export async function heartbeat(deps: LifecycleDeps, jobId: string, owner: string, now: number): Promise<boolean> {
  const r = await deps.db
    .updateTable('jobs')
    .set({ lease_expires_at: now + deps.config.queue.leaseMs })
    .where('id', '=', jobId)
    .where('lease_owner', '=', owner)
    .where('status', '=', 'active')
    .executeTakeFirst();
  return Number(r.numUpdatedRows) === 1;
}

/** Shutdown: the lease is given up, so another worker resumes the job without waiting for it to expire. */
export async function releaseLease(deps: LifecycleDeps, jobId: string, owner: string): Promise<void> {
  await deps.db.updateTable('jobs').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
}

/** The job's pull request link and, when given, its title (which becomes the job's title). */
export async function setPrLink(deps: LifecycleDeps, jobId: string, owner: string, url: string, title?: string): Promise<void> {
  const named = title?.trim() ? { title: jobTitle(title) } : {};
  await deps.db.updateTable('jobs').set({ pr_link: url, ...named }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
}
