// Idempotency-Key records: a retry with the same key and request within 24 hours gets the first response.
import { createHash } from 'node:crypto';
import type { Transaction } from 'kysely';
import type { Database } from './schema.ts';
import { CodedError } from '../errors.ts';

export const IDEMPOTENCY_TTL_MS = 24 * 3_600_000;

export interface IdempotencyRequest {
  key: string;
  /** Hash of what the request asks for; see requestHash(). */
  hash: string;
}

export interface StoredResponse {
  statusCode: number;
  body: string;
}

export class IdempotencyMismatchError extends CodedError {
  constructor() {
    super('idempotency_key_reused', 'This Idempotency-Key was already used with a different request; use a new key for a new request.');
  }
}

export function requestHash(method: string, route: string, body: unknown): string {
  return createHash('sha256').update(`${method} ${route}\n${JSON.stringify(body ?? null)}`).digest('hex');
}

/** The stored response for this key, or null. Throws when the key was used for another request. */
export async function findStoredResponse(
  trx: Transaction<Database>,
  projectId: string,
  req: IdempotencyRequest,
  now = Date.now(),
): Promise<StoredResponse | null> {
  const row = await trx
    .selectFrom('idempotency')
    .selectAll()
    .where('project_id', '=', projectId)
    .where('key', '=', req.key)
    .executeTakeFirst();
  if (!row || row.created_at <= now - IDEMPOTENCY_TTL_MS) return null;
  if (row.request_hash !== req.hash) throw new IdempotencyMismatchError();
  return { statusCode: row.status_code, body: row.body };
}

export async function storeResponse(
  trx: Transaction<Database>,
  projectId: string,
  req: IdempotencyRequest,
  res: StoredResponse,
  now = Date.now(),
): Promise<void> {
  await trx.deleteFrom('idempotency').where('project_id', '=', projectId).where('key', '=', req.key).execute();
  await trx
    .insertInto('idempotency')
    .values({ project_id: projectId, key: req.key, request_hash: req.hash, status_code: res.statusCode, body: res.body, created_at: now })
    .execute();
}

/** Drops expired records; called now and then by the server. */
export async function pruneIdempotency(db: { deleteFrom: Transaction<Database>['deleteFrom'] }, now = Date.now()): Promise<void> {
  await db.deleteFrom('idempotency').where('created_at', '<=', now - IDEMPOTENCY_TTL_MS).execute();
}
