// What the code host last said of a job's pull request: its state, when it was merged and when it was
// asked (jobs/pull-request-states.ts writes it; the jobs list, the job impact and the suggestions read it).
import type { Kysely, Transaction } from 'kysely';
import type { Database } from './schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type PullRequestStateName = 'open' | 'merged' | 'closed';

export interface StoredPullRequest {
  prState: PullRequestStateName | null;
  mergedAt: number | null;
  checkedAt: number | null;
}

export const NOT_CHECKED: StoredPullRequest = { prState: null, mergedAt: null, checkedAt: null };

export const stateName = (s: string | null | undefined): PullRequestStateName | null => (s === 'open' || s === 'merged' || s === 'closed' ? s : null);

export async function savePullRequestState(db: Db, jobId: string, state: PullRequestStateName | null, mergedAt: number | null, now: number): Promise<void> {
  await db
    .insertInto('job_pull_requests')
    .values({ job_id: jobId, pr_state: state, merged_at: mergedAt, pr_checked_at: now })
    .onConflict((oc) => oc.column('job_id').doUpdateSet({ pr_state: state, merged_at: mergedAt, pr_checked_at: now }))
    .execute();
}

/** The stored states of `jobIds` (a job never checked is absent). */
export async function pullRequestStates(db: Db, jobIds: string[]): Promise<Map<string, StoredPullRequest>> {
  if (jobIds.length === 0) return new Map();
  const rows = await db.selectFrom('job_pull_requests').selectAll().where('job_id', 'in', jobIds).execute();
  return new Map(rows.map((r) => [r.job_id, { prState: stateName(r.pr_state), mergedAt: r.merged_at === null ? null : Number(r.merged_at), checkedAt: Number(r.pr_checked_at) }]));
}
