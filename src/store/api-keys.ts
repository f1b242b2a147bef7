// Admin API keys: `folio_` + 40 random base62 characters, stored only as a SHA-256 hash and a display prefix.
import { hash, randomInt } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import type { ApiKeysTable, Database, KeyScope } from './schema.ts';
import { newId } from './ids.ts';
import { preparedRead, type ReadTarget } from './prepared.ts';

export const KEY_PREFIX = 'folio_';
const BASE62 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_LENGTH = 40;
const DISPLAY_LENGTH = KEY_PREFIX.length + 6;
/** lastUsedAt is written at most this often per key. */
const LAST_USED_RESOLUTION_MS = 60_000;
/**
 * A verified key is remembered so a busy client costs no query per request: on SQLite until anything
 * is committed (the data version changes, e.g. a revocation by the CLI); on PostgreSQL this long, so
 * a revocation made by another process takes effect within it (in this process at once).
 */
const VERIFIED_CACHE_MS = 1_000;

export type ApiKeyRow = Selectable<ApiKeysTable>;

export interface ApiKeyView {
  id: string;
  projectId: string;
  name: string;
  prefix: string;
  scope: KeyScope;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
  lastUsedAt: string | null;
}

export type KeyCheck =
  | { ok: true; key: ApiKeyRow }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' };

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function apiKeyView(row: ApiKeyRow): ApiKeyView {
  return {
    id: row.id,
    projectId: row.project_id,
    name: row.name,
    prefix: row.prefix,
    scope: row.scope,
    createdAt: new Date(row.created_at).toISOString(),
    expiresAt: iso(row.expires_at),
    revokedAt: iso(row.revoked_at),
    lastUsedAt: iso(row.last_used_at),
  };
}

export function generateKey(): string {
  let s = KEY_PREFIX;
  for (let i = 0; i < SECRET_LENGTH; i++) s += BASE62[randomInt(BASE62.length)];
  return s;
}

export const hashKey = (key: string) => hash('sha256', key, 'hex');
const WELL_FORMED = new RegExp(`^${KEY_PREFIX}[A-Za-z0-9]{32,128}$`);

export class ApiKeyStore {
  private readonly db: Kysely<Database>;
  private readonly lastUsedWritten = new Map<string, number>();
  private readonly verified = new Map<string, { row: ApiKeyRow; at: number; version: number | null }>();
  private readonly dataVersion: (since?: number) => number | null;
  private readonly byHash;
  /** `reads` serves the per-request key lookup (StoreDialect for its committed-read path). */
  constructor(db: Kysely<Database>, reads: ReadTarget = db) {
    this.db = db;
    this.dataVersion = 'dataVersion' in reads ? (since) => reads.dataVersion(since) : () => null;
    this.byHash = preparedRead(reads, db.selectFrom('api_keys').selectAll().where('hash', '=', ':hash'), ['hash']);
  }

  /** Creates a key and returns it in full: the only time it is ever shown. */
  async create(input: { projectId: string; name?: string; scope?: KeyScope; expiresAt?: number | null }): Promise<{ key: string; row: ApiKeyRow }> {
    const key = generateKey();
    const row: ApiKeyRow = {
      id: newId('key'),
      project_id: input.projectId,
      name: input.name?.trim() || 'API key',
      prefix: key.slice(0, DISPLAY_LENGTH),
      hash: hashKey(key),
      scope: input.scope ?? 'write',
      created_at: Date.now(),
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
    };
    await this.db.insertInto('api_keys').values(row).execute();
    return { key, row };
  }

  list(projectId: string): Promise<ApiKeyRow[]> {
    return this.db.selectFrom('api_keys').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
  }

  get(id: string): Promise<ApiKeyRow | undefined> {
    return this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
  }

  /** Revokes a key; idempotent. Returns the row, or undefined for an unknown id. */
  async revoke(id: string): Promise<ApiKeyRow | undefined> {
    this.verified.clear();
    await this.db.updateTable('api_keys').set({ revoked_at: Date.now() }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    return this.get(id);
  }

  /**
   * Checks a presented key. `since`: when the request arrived (see StoreDialect.dataVersion); a
   * revocation committed before it is seen.
   */
  async verify(presented: string, since?: number, now = Date.now()): Promise<KeyCheck> {
    const hit = this.verifyCached(presented, since, now);
    if (hit) return hit;
    const version = this.dataVersion(since); // before the read: a commit in between only ages the entry
    const [row] = await this.byHash({ hash: hashKey(presented) });
    if (row) {
      if (this.verified.size > 10_000) this.verified.clear();
      this.verified.set(presented, { row, at: now, version });
    }
    return this.check(row, now);
  }

  /** verify() without a query: the answer when the cache can give it, else undefined. */
  verifyCached(presented: string, since?: number, now = Date.now()): KeyCheck | undefined {
    if (!WELL_FORMED.test(presented)) return { ok: false, reason: 'malformed' };
    // Keyed by the key as presented, so a hit skips hashing; the map lives only in this process.
    const cached = this.verified.get(presented);
    if (!cached) return undefined;
    const version = this.dataVersion(since);
    const fresh = version !== null ? cached.version === version : now - cached.at < VERIFIED_CACHE_MS;
    return fresh ? this.check(cached.row, now) : undefined;
  }

  private check(row: ApiKeyRow | undefined, now: number): KeyCheck {
    if (!row) return { ok: false, reason: 'unknown' };
    if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
    if (row.expires_at !== null && row.expires_at <= now) return { ok: false, reason: 'expired' };
    this.touch(row, now);
    return { ok: true, key: row };
  }

  /** Records use at most once a minute per key, off the request's critical path. */
  private touch(row: ApiKeyRow, now: number): void {
    const last = Math.max(row.last_used_at ?? 0, this.lastUsedWritten.get(row.id) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWritten.set(row.id, now);
    void this.db
      .updateTable('api_keys')
      .set({ last_used_at: now })
      .where('id', '=', row.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - LAST_USED_RESOLUTION_MS)]))
      .execute()
      .catch(() => this.lastUsedWritten.delete(row.id));
  }
}
