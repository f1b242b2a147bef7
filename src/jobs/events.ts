// Job events: every step of a job, stored in order and published in-process for live streams.
import { EventEmitter } from 'node:events';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { JobEvent } from '../contracts/jobs.ts';

/** Emits `job:<id>` with a JobEvent whenever this process records one. */
export const jobEventBus = new EventEmitter();
jobEventBus.setMaxListeners(0);

/** Event data is clipped so one event never bloats the store. */
const MAX_EVENT_BYTES = 16_384;

function clipData(data: Record<string, unknown>): string {
  const json = JSON.stringify(data);
  if (json.length <= MAX_EVENT_BYTES) return json;
  return JSON.stringify({ clipped: true, preview: json.slice(0, MAX_EVENT_BYTES - 100) });
}

/**
 * Inserts an event inside the caller's transaction; publish it with publishJobEvent after commit.
 * The job's row is locked first, so writers of one job's events take numbers one after another
 * (on PostgreSQL; a SQLite transaction already holds the database).
 */
export async function insertJobEvent(
  trx: Transaction<Database>,
  dialect: Pick<StoreDialect, 'forUpdate'>,
  jobId: string,
  type: string,
  data: Record<string, unknown>,
): Promise<JobEvent> {
  await dialect.forUpdate(trx.selectFrom('jobs').select('id').where('id', '=', jobId)).execute();
  const body = clipData(data);
  const at = Date.now();
  const { max } = await trx
    .selectFrom('job_events')
    .select((eb) => eb.fn.max<number>('seq').as('max'))
    .where('job_id', '=', jobId)
    .executeTakeFirstOrThrow();
  const seq = Number(max ?? 0) + 1;
  await trx.insertInto('job_events').values({ job_id: jobId, seq, at, type, data: body }).execute();
  return { id: seq, at: new Date(at).toISOString(), type, data: JSON.parse(body) };
}

export function publishJobEvent(jobId: string, event: JobEvent): void {
  jobEventBus.emit(`job:${jobId}`, event);
}

export async function appendJobEvent(
  db: Kysely<Database>,
  dialect: Pick<StoreDialect, 'forUpdate' | 'isUniqueViolation'>,
  jobId: string,
  type: string,
  data: Record<string, unknown>,
): Promise<JobEvent> {
  for (let attempt = 0; ; attempt++) {
    try {
      const event = await db.transaction().execute((trx) => insertJobEvent(trx, dialect, jobId, type, data));
      publishJobEvent(jobId, event);
      return event;
    } catch (err) {
      // Two writers raced for the same seq (PostgreSQL); take the next one.
      if (attempt < 5 && dialect.isUniqueViolation(err)) continue;
      throw err;
    }
  }
}

export async function listJobEvents(db: Kysely<Database>, jobId: string, after: number, limit: number): Promise<JobEvent[]> {
  const rows = await db
    .selectFrom('job_events')
    .selectAll()
    .where('job_id', '=', jobId)
    .where('seq', '>', after)
    .orderBy('seq')
    .limit(limit)
    .execute();
  return rows.map((r) => ({ id: Number(r.seq), at: new Date(Number(r.at)).toISOString(), type: r.type, data: JSON.parse(r.data) }));
}
