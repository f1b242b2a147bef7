// Review comments on Folio's pull requests (jobs/triggers/reviews.ts): which job a pull request
// belongs to, and the answers Folio owes on pull requests (review_replies, migration 015), each
// claimed by one process before it is sent. What a turn did is read from its message and events.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { Database, ReviewRepliesTable } from './schema.ts';
import { newId } from './ids.ts';

type Db = Kysely<Database> | Transaction<Database>;

/** A claim older than this is taken to be a dead process's: the answer is tried again. */
const STALE_CLAIM_MS = 5 * 60_000;
/** A failed answer waits this long per attempt before the next (the code host may be away). */
const BACKOFF_MS = 30_000;

export type ReplyRow = ReviewRepliesTable;
export type NewReply = Pick<ReviewRepliesTable, 'project_id' | 'job_id' | 'seq' | 'text' | 'host' | 'repository_url' | 'pr_number' | 'target'>;

/** What a turn did, for the answer: its outcome, the agent's summary, the commit it pushed, its error. */
export interface TurnReport {
  outcome: string | null;
  title: string | null;
  summary: string | null;
  sha: string | null;
  error: string | null;
}

/**
 * The newest job of the project whose pull request is `…{suffix}` (e.g. `/pull/12`), from `branch`
 * when the delivery names it: only pull requests Folio opened act.
 */
export async function jobOfPullRequest(db: Db, projectId: string, suffix: string, branch: string | null) {
  let q = db.selectFrom('jobs').select(['id', 'status', 'ref', 'pr_link']).where('project_id', '=', projectId).where('pr_link', 'like', `%${suffix}`);
  if (branch !== null) q = q.where('ref', '=', branch);
  const rows = await q.orderBy('created_at', 'desc').limit(20).execute();
  // LIKE's suffix match is confirmed exactly (the suffix holds only digits and slashes).
  return rows.find((r) => r.pr_link?.endsWith(suffix));
}

export async function queueReply(db: Db, reply: NewReply): Promise<string> {
  const id = newId('rpl');
  await db.insertInto('review_replies').values({ ...reply, id, state: 'pending', attempts: 0, error: null, created_at: Date.now(), answered_at: null }).execute();
  return id;
}

/** Answers that can be sent now: waiting for nothing, or for a turn that has ended (or a stale claim); a failed one after its backoff. */
export async function dueReplies(db: Kysely<Database>, limit: number): Promise<ReplyRow[]> {
  const now = Date.now();
  const rested = sql<boolean>`(r.attempts = 0 or r.answered_at + r.attempts * ${BACKOFF_MS} < ${now})`;
  return db
    .selectFrom('review_replies as r')
    .selectAll('r')
    .where((eb) => eb.or([eb.and([eb('r.state', '=', 'pending'), rested]), eb.and([eb('r.state', '=', 'sending'), eb('r.answered_at', '<', now - STALE_CLAIM_MS)])]))
    .where((eb) =>
      eb.or([
        eb('r.seq', 'is', null),
        eb.exists(eb.selectFrom('job_messages as m').select('m.seq').whereRef('m.job_id', '=', 'r.job_id').whereRef('m.seq', '=', 'r.seq').where('m.handled_at', 'is not', null)),
      ]),
    )
    .orderBy('r.created_at')
    .limit(limit)
    .execute();
}

/** Takes the answer for this process: false when another took it first. */
export async function claimReply(db: Kysely<Database>, row: ReplyRow): Promise<boolean> {
  const res = await db
    .updateTable('review_replies')
    .set({ state: 'sending', attempts: row.attempts + 1, answered_at: Date.now() })
    .where('id', '=', row.id)
    .where('state', '=', row.state)
    .where('attempts', '=', row.attempts)
    .executeTakeFirst();
  return Number(res.numUpdatedRows) === 1;
}

export async function settleReply(db: Kysely<Database>, id: string, state: 'sent' | 'pending' | 'failed', error: string | null): Promise<void> {
  await db.updateTable('review_replies').set({ state, error: error?.slice(0, 2000) ?? null, answered_at: Date.now() }).where('id', '=', id).execute();
}

/** What the turn of message `seq` did: the events between the end of the turn before it and its own end. */
export async function turnReport(db: Kysely<Database>, jobId: string, seq: number): Promise<TurnReport> {
  const message = await db.selectFrom('job_messages').select(['outcome', 'title', 'summary']).where('job_id', '=', jobId).where('seq', '=', seq).executeTakeFirst();
  const events = await db.selectFrom('job_events').select(['type', 'data']).where('job_id', '=', jobId).where('type', 'in', ['push', 'turn.completed', 'error']).orderBy('seq').execute();
  let sha: string | null = null;
  let error: string | null = null;
  for (const e of events) {
    const data = JSON.parse(e.data) as { seq?: number; sha?: string; message?: string };
    if (e.type === 'push') sha = typeof data.sha === 'string' ? data.sha : null;
    else if (data.seq === seq) {
      if (e.type === 'error') error = typeof data.message === 'string' ? data.message : 'The turn failed.';
      return { outcome: message?.outcome ?? null, title: message?.title ?? null, summary: message?.summary ?? null, sha: e.type === 'error' ? null : sha, error };
    } else sha = null;
  }
  return { outcome: message?.outcome ?? null, title: message?.title ?? null, summary: message?.summary ?? null, sha: null, error };
}
