// Job events: every step of a job, stored in order and published in-process for live streams.
import { EventEmitter } from 'node:events';
import type { Kysely, Transaction } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { JobEvent, JobEventData, JobEventType } from '../contracts/job-events.ts';

/**
 * Tells live streams of this process about each job event it records (other processes' events
 * reach them by polling the store). Owned by the jobs service; one per service, never a global.
 */
export class JobEventBus {
  readonly #emitter = new EventEmitter().setMaxListeners(0);

  publish(jobId: string, event: JobEvent): void {
    this.#emitter.emit(jobId, event);
  }

  /** Calls `fn` with each event recorded for `jobId` from now on; returns the unsubscribe. */
  subscribe(jobId: string, fn: (event: JobEvent) => void): () => void {
    this.#emitter.on(jobId, fn);
    return () => this.#emitter.off(jobId, fn);
  }
}

/** Event data is clipped so one event never bloats the store. */
const MAX_EVENT_BYTES = 16_384;

function clipData(data: object): string {
  const json = JSON.stringify(data);
  if (json.length <= MAX_EVENT_BYTES) return json;
  return JSON.stringify({ clipped: true, preview: json.slice(0, MAX_EVENT_BYTES - 100) });
}

/**
 * Inserts an event inside the caller's transaction; publish it on the bus after commit.
 * The job's row is locked first, so writers of one job's events take numbers one after another
 * (on PostgreSQL; a SQLite transaction already holds the database). `first`: the job's row was
 * inserted in this transaction, so no one else can see it and its first event is number 1 (a create:
 * two reads fewer on its hot path).
 */
export async function insertJobEvent<T extends JobEventType>(
  trx: Transaction<Database>,
  dialect: Pick<StoreDialect, 'forUpdate'>,
  jobId: string,
  type: T,
  data: JobEventData<T>,
  first = false,
): Promise<JobEvent> {
  const body = clipData(data);
  const at = Date.now();
  const seq = first ? 1 : await nextSeq(trx, dialect, jobId);
  await trx.insertInto('job_events').values({ job_id: jobId, seq, at, type, data: body }).execute();
  return { id: seq, at: new Date(at).toISOString(), type, data: JSON.parse(body) } as JobEvent;
}

/** The job's next event number, with its row locked. */
async function nextSeq(trx: Transaction<Database>, dialect: Pick<StoreDialect, 'forUpdate'>, jobId: string): Promise<number> {
  await dialect.forUpdate(trx.selectFrom('jobs').select('id').where('id', '=', jobId)).execute();
  const { max } = await trx
    .selectFrom('job_events')
    .select((eb) => eb.fn.max<number>('seq').as('max'))
    .where('job_id', '=', jobId)
    .executeTakeFirstOrThrow();
  return Number(max ?? 0) + 1;
}

export async function appendJobEvent<T extends JobEventType>(
  bus: JobEventBus,
  db: Kysely<Database>,
  dialect: Pick<StoreDialect, 'forUpdate' | 'isUniqueViolation'>,
  jobId: string,
  type: T,
  data: JobEventData<T>,
): Promise<JobEvent> {
  for (let attempt = 0; ; attempt++) {
    try {
      const event = await db.transaction().execute((trx) => insertJobEvent(trx, dialect, jobId, type, data));
      bus.publish(jobId, event);
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
  // Rows are what insertJobEvent wrote: typed on the way in.
  return rows.map((r) => ({ id: Number(r.seq), at: new Date(Number(r.at)).toISOString(), type: r.type, data: JSON.parse(r.data) }) as JobEvent);
}
