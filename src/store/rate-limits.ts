// Exact rolling-window rate limits, counted inside the caller's write transaction so concurrent
// requests (even from several processes) cannot overshoot.
import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { CodedError } from '../errors.ts';

export const HOUR_MS = 3_600_000;

export interface RateInfo {
  limit: number;
  remaining: number;
  /** Seconds until the window frees a slot. */
  resetSeconds: number;
}

export class RateLimitedError extends CodedError {
  readonly info: RateInfo;
  readonly retryAfterSeconds: number;
  constructor(message: string, info: RateInfo) {
    super('rate_limited', message, { retryAfterSeconds: Math.max(1, info.resetSeconds), rateLimit: info });
    this.info = info;
    this.retryAfterSeconds = Math.max(1, info.resetSeconds);
  }
}

/**
 * Takes one slot of `bucket` for the project, or throws RateLimitedError. `limit` 0 means unlimited.
 * The caller must hold the project's lock (StoreDialect.lockProject) in `trx`.
 */
export async function takeRateSlot(
  trx: Transaction<Database>,
  projectId: string,
  bucket: string,
  limit: number,
  what: string,
  now = Date.now(),
  windowMs = HOUR_MS,
): Promise<RateInfo | null> {
  if (limit <= 0) return null;
  const since = now - windowMs;
  await trx.deleteFrom('rate_events').where('project_id', '=', projectId).where('bucket', '=', bucket).where('at', '<=', since).execute();
  const { count, oldest } = await trx
    .selectFrom('rate_events')
    .select((eb) => [eb.fn.countAll<number>().as('count'), eb.fn.min<number>('at').as('oldest')])
    .where('project_id', '=', projectId)
    .where('bucket', '=', bucket)
    .executeTakeFirstOrThrow();
  const used = Number(count);
  const resetSeconds = oldest === null ? Math.ceil(windowMs / 1000) : Math.ceil((Number(oldest) + windowMs - now) / 1000);
  if (used >= limit) {
    throw new RateLimitedError(
      `Rate limit exceeded: at most ${limit} ${what} per project per hour; try again in ${resetSeconds} seconds.`,
      { limit, remaining: 0, resetSeconds },
    );
  }
  await trx.insertInto('rate_events').values({ project_id: projectId, bucket, at: now }).execute();
  return { limit, remaining: limit - used - 1, resetSeconds };
}
