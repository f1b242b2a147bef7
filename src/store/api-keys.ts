// Admin API keys: `folio_` + 40 random base62 characters, stored only as a SHA-256 hash and a display prefix.
// A key belongs to one project (api_keys) or covers many: every project or a chosen list (admin_keys).
// Whether a key may act on a project is decided in one place: keyCovers().
import { hash, randomInt } from 'node:crypto';
import type { Kysely, Selectable } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { AdminKeysTable, ApiKeysTable, Database, KeyScope } from './schema.ts';
import { newId } from './ids.ts';
import type { ApiKey } from '../contracts/dashboard.ts';
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
export type AdminKeyRow = Selectable<AdminKeysTable>;

/**
 * A stored key of either kind. `project_id` is the owning project of a project key (null for an
 * admin key); `projects` is what an admin key covers (null: every project).
 */
export type StoredKey =
  | (ApiKeyRow & { kind: 'project' })
  | (Omit<AdminKeyRow, 'project_ids'> & { kind: 'admin'; project_id: null; projects: readonly string[] | null });

/** The one answer to "may this key act on this project?". */
export function keyCovers(key: StoredKey, projectId: string): boolean {
  if (key.kind === 'project') return key.project_id === projectId;
  return key.projects === null || key.projects.includes(projectId);
}

const projectKey = (row: ApiKeyRow): StoredKey => ({ ...row, kind: 'project' });

function adminKey(row: AdminKeyRow): StoredKey {
  const { project_ids, ...rest } = row;
  let projects: string[] | null = null;
  if (project_ids !== null) {
    const parsed: unknown = JSON.parse(project_ids);
    // A damaged list covers nothing rather than everything.
    projects = Array.isArray(parsed) ? parsed.filter((p): p is string => typeof p === 'string') : [];
  }
  return { ...rest, kind: 'admin', project_id: null, projects };
}

/** A key as the dashboard API and the CLI show it (never the key itself). */
export type ApiKeyView = ApiKey;

export type KeyCheck =
  | { ok: true; key: StoredKey }
  | { ok: false; reason: KeyRefusal };

/**
 * Why a presented key is refused: `foreign` (not a Folio key: no `folio_` prefix), `malformed` (the
 * prefix, but not the shape of a key: cut short, or with characters no key has), `unknown`,
 * `revoked`, `expired`.
 */
export type KeyRefusal = 'foreign' | 'malformed' | 'unknown' | 'revoked' | 'expired';

/** The one answer to "is this stored key usable now?" (verify and reverify). */
function keyState(row: StoredKey | undefined, now: number): KeyCheck {
  if (!row) return { ok: false, reason: 'unknown' };
  if (row.revoked_at !== null) return { ok: false, reason: 'revoked' };
  if (row.expires_at !== null && row.expires_at <= now) return { ok: false, reason: 'expired' };
  return { ok: true, key: row };
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

export function apiKeyView(key: ApiKeyRow | StoredKey): ApiKeyView {
  const row: StoredKey = 'kind' in key ? key : projectKey(key);
  return {
    id: row.id,
    kind: row.kind,
    projectId: row.project_id,
    allProjects: row.kind === 'admin' && row.projects === null,
    projectIds: row.kind === 'project' ? [row.project_id] : [...(row.projects ?? [])],
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

export interface ApiKeyStoreOptions {
  /** Tells other processes that a key was revoked (they forget their verified keys at once). */
  notifyRevoked?: () => Promise<void>;
}

export class ApiKeyStore {
  private readonly db: Kysely<Database>;
  private readonly lastUsedWritten = new LRUCache<string, number>({ max: 10_000 });
  private readonly verified = new LRUCache<string, { row: StoredKey; at: number; version: number | null }>({ max: 10_000 });
  private readonly dataVersion: (since?: number) => number | null;
  private readonly byHash;
  private readonly adminByHash;
  private readonly notifyRevoked: () => Promise<void>;
  /** `reads` serves the per-request key lookup (StoreDialect for its committed-read path). */
  constructor(db: Kysely<Database>, reads: ReadTarget = db, opts: ApiKeyStoreOptions = {}) {
    this.db = db;
    this.dataVersion = 'dataVersion' in reads ? (since) => reads.dataVersion(since) : () => null;
    this.byHash = preparedRead(reads, db.selectFrom('api_keys').selectAll().where('hash', '=', ':hash'), ['hash']);
    this.adminByHash = preparedRead(reads, db.selectFrom('admin_keys').selectAll().where('hash', '=', ':hash'), ['hash']);
    this.notifyRevoked = opts.notifyRevoked ?? (async () => {});
  }

  /** Forgets every verified key of this process (a key was revoked elsewhere). */
  forgetVerified(): void {
    this.verified.clear();
  }

  /** Creates a key covering every project (`projectIds` null) or the listed ones; shown in full only here. */
  async createAdmin(input: { projectIds: string[] | null; name?: string; scope?: KeyScope; expiresAt?: number | null }): Promise<{ key: string; row: StoredKey }> {
    const key = generateKey();
    const row: AdminKeyRow = {
      id: newId('key'),
      name: input.name?.trim() || 'Admin key',
      prefix: key.slice(0, DISPLAY_LENGTH),
      hash: hashKey(key),
      scope: input.scope ?? 'write',
      project_ids: input.projectIds === null ? null : JSON.stringify([...new Set(input.projectIds)]),
      created_at: Date.now(),
      expires_at: input.expiresAt ?? null,
      revoked_at: null,
      last_used_at: null,
    };
    await this.db.insertInto('admin_keys').values(row).execute();
    return { key, row: adminKey(row) };
  }

  /** Keys usable on a project: its own keys, then the admin keys that cover it. */
  async listCovering(projectId: string): Promise<StoredKey[]> {
    const own = (await this.list(projectId)).map(projectKey);
    const admin = (await this.listAdmin()).filter((k) => keyCovers(k, projectId));
    return [...own, ...admin];
  }

  /** Every admin key, oldest first. */
  async listAdmin(): Promise<StoredKey[]> {
    const rows = await this.db.selectFrom('admin_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    return rows.map(adminKey);
  }

  /** Every key of the installation: project keys, then admin keys. */
  async listAll(): Promise<StoredKey[]> {
    const own = await this.db.selectFrom('api_keys').selectAll().orderBy('created_at').orderBy('id').execute();
    return [...own.map(projectKey), ...(await this.listAdmin())];
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

  /** A key of either kind by id. */
  async get(id: string): Promise<StoredKey | undefined> {
    const own = await this.db.selectFrom('api_keys').selectAll().where('id', '=', id).executeTakeFirst();
    if (own) return projectKey(own);
    const admin = await this.db.selectFrom('admin_keys').selectAll().where('id', '=', id).executeTakeFirst();
    return admin && adminKey(admin);
  }

  /**
   * Revokes a key of either kind; idempotent. Returns the key, or undefined for an unknown id. The
   * verified-key cache is keyed by the key, not by project, so access ends on every project at once
   * (in other processes: at once through notifyRevoked, and by the cache's bound otherwise).
   */
  async revoke(id: string): Promise<StoredKey | undefined> {
    this.verified.clear();
    const now = Date.now();
    await this.db.updateTable('api_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    await this.db.updateTable('admin_keys').set({ revoked_at: now }).where('id', '=', id).where('revoked_at', 'is', null).execute();
    this.verified.clear();
    await this.notifyRevoked().catch(() => {});
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
    const digest = hashKey(presented);
    const [own] = await this.byHash({ hash: digest });
    const [admin] = own ? [] : await this.adminByHash({ hash: digest });
    const row = own ? projectKey(own) : admin ? adminKey(admin) : undefined;
    if (row) {
      this.verified.set(presented, { row, at: now, version });
    }
    return this.check(row, now);
  }

  /** verify() without a query: the answer when the cache can give it, else undefined. */
  verifyCached(presented: string, since?: number, now = Date.now()): KeyCheck | undefined {
    if (!WELL_FORMED.test(presented)) return { ok: false, reason: presented.startsWith(KEY_PREFIX) ? 'malformed' : 'foreign' };
    // Keyed by the key as presented, so a hit skips hashing; the map lives only in this process.
    const cached = this.verified.get(presented);
    if (!cached) return undefined;
    const version = this.dataVersion(since);
    const fresh = version !== null ? cached.version === version : now - cached.at < VERIFIED_CACHE_MS;
    return fresh ? this.check(cached.row, now) : undefined;
  }

  /**
   * The key with this id as the store has it now, bypassing the verified-key cache: a live event
   * stream checks again the key it was opened with (revoked, expired, deleted, what it covers).
   */
  async reverify(id: string, now = Date.now()): Promise<KeyCheck> {
    return keyState(await this.get(id), now);
  }

  private check(row: StoredKey | undefined, now: number): KeyCheck {
    const state = keyState(row, now);
    if (state.ok) this.touch(state.key, now);
    return state;
  }

  /** Records use at most once a minute per key, off the request's critical path. */
  private touch(row: StoredKey, now: number): void {
    const last = Math.max(row.last_used_at ?? 0, this.lastUsedWritten.get(row.id) ?? 0);
    if (now - last < LAST_USED_RESOLUTION_MS) return;
    this.lastUsedWritten.set(row.id, now);
    void this.db
      .updateTable(row.kind === 'admin' ? 'admin_keys' : 'api_keys')
      .set({ last_used_at: now })
      .where('id', '=', row.id)
      .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', now - LAST_USED_RESOLUTION_MS)]))
      .execute()
      .catch(() => this.lastUsedWritten.delete(row.id));
  }
}
