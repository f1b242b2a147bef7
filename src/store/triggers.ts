// Persistence of code-change triggers: a project's secret and template, its watched repositories,
// the record of every delivery, and which job tracks which pull request. Secrets are stored only
// sealed by the secret box; they are opened here for the caller and never returned by a view.
import { randomBytes } from 'node:crypto';
import { sql, type Kysely, type Selectable, type Transaction } from 'kysely';
import type { Database, TriggerDeliveriesTable, TriggerHost, TriggerRepositoriesTable } from './schema.ts';
import type { SecretBox } from './secret-box.ts';
import type { TriggerDelivery, WatchedRepository } from '../contracts/triggers.ts';
import { newId } from './ids.ts';

export type TriggerEvent = 'merged' | 'opened' | 'push';
type Db = Kysely<Database> | Transaction<Database>;

export type { WatchedRepository };

export interface WatchedRepositoryInput {
  /** Keeps the stored token of this repository when `token` is not given. */
  id?: string;
  host: TriggerHost;
  repositoryUrl: string;
  fullPath: string;
  events: TriggerEvent[];
  paths: string[];
  labels: string[];
  /** A new token; null removes it; undefined keeps the one stored. */
  token?: string | null;
}

export interface DeliveryRecord {
  projectId: string;
  host: TriggerHost;
  deliveryId: string | null;
  event: string | null;
  outcome: 'started' | 'followed_up' | 'ignored' | 'duplicate' | 'rejected' | 'failed';
  statusCode: number;
  reason: string;
  repository?: string | null;
  changeUrl?: string | null;
  jobId?: string | null;
  dedupeKey?: string | null;
}

/** A recorded delivery as the dashboard shows it. */
export type DeliveryView = TriggerDelivery;

const SECRET_COLUMN = 'trigger_settings.secret';
const TOKEN_COLUMN = 'trigger_repositories.token';
const parseList = (json: string): string[] => {
  const v: unknown = JSON.parse(json);
  return Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : [];
};

function repositoryView(row: Selectable<TriggerRepositoriesTable>): WatchedRepository {
  return {
    id: row.id,
    host: row.host,
    repositoryUrl: row.repository_url,
    fullPath: row.full_path,
    events: parseList(row.events) as TriggerEvent[],
    paths: parseList(row.paths),
    labels: parseList(row.labels),
    hasToken: row.token !== null,
    createdAt: new Date(Number(row.created_at)).toISOString(),
  };
}

function deliveryView(row: Selectable<TriggerDeliveriesTable>): DeliveryView {
  return {
    id: Number(row.id),
    host: row.host,
    deliveryId: row.delivery_id,
    event: row.event,
    outcome: row.outcome,
    statusCode: row.status_code,
    reason: row.reason,
    repository: row.repository,
    changeUrl: row.change_url,
    jobId: row.job_id,
    receivedAt: new Date(Number(row.received_at)).toISOString(),
  };
}

export class TriggerStore {
  readonly db: Kysely<Database>;
  private readonly box: SecretBox;
  constructor(db: Kysely<Database>, box: SecretBox) {
    this.db = db;
    this.box = box;
  }

  async projectExists(projectId: string): Promise<boolean> {
    return !!(await this.db.selectFrom('projects').select('id').where('id', '=', projectId).executeTakeFirst());
  }

  async settings(projectId: string): Promise<{ hasSecret: boolean; secretCreatedAt: string | null; template: string | null; refusedDeliveries: number; lastRefusedAt: string | null }> {
    const row = await this.db.selectFrom('trigger_settings').selectAll().where('project_id', '=', projectId).executeTakeFirst();
    const date = (ms: number | null | undefined) => (ms ? new Date(Number(ms)).toISOString() : null);
    return {
      hasSecret: !!row?.secret,
      secretCreatedAt: date(row?.secret_created_at),
      template: row?.template ?? null,
      refusedDeliveries: Number(row?.refused_deliveries ?? 0),
      lastRefusedAt: date(row?.last_refused_at),
    };
  }

  /**
   * Adds `count` deliveries refused before their signature checked out, the last at `at` (epoch ms):
   * one atomic increment, so processes sharing the store add up. A project without trigger settings
   * (no secret ever made) has nothing to count on.
   */
  async countRefusals(projectId: string, count: number, at: number): Promise<void> {
    await this.db
      .updateTable('trigger_settings')
      .set({
        refused_deliveries: sql<number>`refused_deliveries + ${count}`,
        last_refused_at: sql<number>`case when last_refused_at is null or last_refused_at < ${at} then ${at} else last_refused_at end`,
      })
      .where('project_id', '=', projectId)
      .execute();
  }

  /** The project's webhook secret in plain text (to verify a delivery); null when none was made. */
  async secret(projectId: string): Promise<string | null> {
    const row = await this.db.selectFrom('trigger_settings').select('secret').where('project_id', '=', projectId).executeTakeFirst();
    return row?.secret ? this.box.open(row.secret, SECRET_COLUMN) : null;
  }

  /** Makes a new secret (the old one stops working) and returns it: the only time it is shown. */
  async rotateSecret(projectId: string): Promise<string> {
    const secret = `fts_${randomBytes(32).toString('base64url')}`;
    const now = Date.now();
    const sealed = this.box.seal(secret, SECRET_COLUMN);
    await this.db
      .insertInto('trigger_settings')
      .values({ project_id: projectId, secret: sealed, secret_created_at: now, template: null, updated_at: now })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ secret: sealed, secret_created_at: now, updated_at: now }))
      .execute();
    return secret;
  }

  async setTemplate(projectId: string, template: string | null): Promise<void> {
    const now = Date.now();
    await this.db
      .insertInto('trigger_settings')
      .values({ project_id: projectId, secret: null, secret_created_at: null, template, updated_at: now })
      .onConflict((oc) => oc.column('project_id').doUpdateSet({ template, updated_at: now }))
      .execute();
  }

  async repositories(projectId: string): Promise<WatchedRepository[]> {
    const rows = await this.db.selectFrom('trigger_repositories').selectAll().where('project_id', '=', projectId).orderBy('created_at').orderBy('id').execute();
    return rows.map(repositoryView);
  }

  /** The watched repository a delivery comes from, with its token opened; undefined when not watched. */
  async watched(projectId: string, host: TriggerHost, fullPath: string): Promise<(WatchedRepository & { token: string | null }) | undefined> {
    const row = await this.db
      .selectFrom('trigger_repositories')
      .selectAll()
      .where('project_id', '=', projectId)
      .where('host', '=', host)
      .where('full_path', '=', fullPath.toLowerCase())
      .executeTakeFirst();
    return row && { ...repositoryView(row), token: row.token ? this.box.open(row.token, TOKEN_COLUMN) : null };
  }

  /** Replaces the watched repositories of a project in one transaction. */
  async replaceRepositories(projectId: string, input: WatchedRepositoryInput[]): Promise<WatchedRepository[]> {
    await this.db.transaction().execute(async (trx) => {
      const old = await trx.selectFrom('trigger_repositories').select(['id', 'token', 'created_at']).where('project_id', '=', projectId).execute();
      await trx.deleteFrom('trigger_repositories').where('project_id', '=', projectId).execute();
      const now = Date.now();
      for (const [i, r] of input.entries()) {
        const kept = r.id ? old.find((o) => o.id === r.id) : undefined;
        const token = r.token === undefined ? (kept?.token ?? null) : r.token === null ? null : this.box.seal(r.token, TOKEN_COLUMN);
        await trx
          .insertInto('trigger_repositories')
          .values({
            id: kept?.id ?? newId('trg'),
            project_id: projectId,
            host: r.host,
            repository_url: r.repositoryUrl,
            full_path: r.fullPath.toLowerCase(),
            events: JSON.stringify(r.events),
            paths: JSON.stringify(r.paths),
            labels: JSON.stringify(r.labels),
            token,
            // Order of the list is kept: later entries are a millisecond younger.
            created_at: kept ? Number(kept.created_at) : now + i,
          })
          .execute();
      }
    });
    return this.repositories(projectId);
  }

  async recordDelivery(db: Db, r: DeliveryRecord): Promise<void> {
    // Text from senders never carries NUL into the store (PostgreSQL refuses it).
    const text = <T extends string | null | undefined>(v: T): T => (typeof v === 'string' ? (v.replaceAll('\u0000', '').slice(0, 2000) as T) : v);
    r = { ...r, deliveryId: text(r.deliveryId), event: text(r.event), reason: text(r.reason), repository: text(r.repository), changeUrl: text(r.changeUrl) };
    await db
      .insertInto('trigger_deliveries')
      .values({
        project_id: r.projectId,
        host: r.host,
        delivery_id: r.deliveryId,
        event: r.event,
        outcome: r.outcome,
        status_code: r.statusCode,
        reason: r.reason,
        repository: r.repository ?? null,
        change_url: r.changeUrl ?? null,
        job_id: r.jobId ?? null,
        dedupe_key: r.dedupeKey ?? null,
        received_at: Date.now(),
      })
      .execute();
  }

  /**
   * The delivery of this project that already acted on one of these dedupe keys (`host:delivery id`),
   * if any. Per project: projects watching the same code repository each get their own copy of an
   * event, with the same delivery id.
   */
  async acted(db: Db, projectId: string, dedupeKeys: string[]): Promise<{ jobId: string | null; outcome: string } | undefined> {
    const row = await db
      .selectFrom('trigger_deliveries')
      .select(['job_id', 'outcome'])
      .where('project_id', '=', projectId)
      .where('dedupe_key', 'in', dedupeKeys)
      .executeTakeFirst();
    return row && { jobId: row.job_id, outcome: row.outcome };
  }

  /** The job that handled this meaning of a change for the project, if one was claimed (see claimMeaning). */
  async meaningHandled(db: Db, projectId: string, meaningKey: string): Promise<{ jobId: string | null } | undefined> {
    const row = await db.selectFrom('trigger_meanings').select('job_id').where('project_id', '=', projectId).where('meaning_key', '=', meaningKey).executeTakeFirst();
    return row && { jobId: row.job_id };
  }

  /**
   * Claims what a change means for the project, in the caller's transaction: true for the first
   * delivery of that meaning, false when another already claimed it. Insert-or-nothing on the
   * table's unique key, so two processes racing on PostgreSQL cannot both win (the second waits for
   * the first to commit). The job is named later in the same transaction (settleMeaning).
   */
  async claimMeaning(trx: Transaction<Database>, projectId: string, meaningKey: string): Promise<boolean> {
    const claimed = await trx
      .insertInto('trigger_meanings')
      .values({ project_id: projectId, meaning_key: meaningKey, job_id: null, created_at: Date.now() })
      .onConflict((oc) => oc.columns(['project_id', 'meaning_key']).doNothing())
      .returning('meaning_key')
      .executeTakeFirst();
    return claimed !== undefined;
  }

  async settleMeaning(trx: Transaction<Database>, projectId: string, meaningKey: string, jobId: string): Promise<void> {
    await trx.updateTable('trigger_meanings').set({ job_id: jobId }).where('project_id', '=', projectId).where('meaning_key', '=', meaningKey).execute();
  }

  async recentDeliveries(projectId: string, limit: number): Promise<DeliveryView[]> {
    const rows = await this.db
      .selectFrom('trigger_deliveries')
      .selectAll()
      .where('project_id', '=', projectId)
      .orderBy('received_at', 'desc')
      .orderBy('id', 'desc')
      .limit(limit)
      .execute();
    return rows.map(deliveryView);
  }

  async changeJob(db: Db, projectId: string, changeKey: string): Promise<string | undefined> {
    const row = await db.selectFrom('trigger_changes').select('job_id').where('project_id', '=', projectId).where('change_key', '=', changeKey).executeTakeFirst();
    return row?.job_id;
  }

  async linkChange(db: Db, projectId: string, changeKey: string, jobId: string): Promise<void> {
    await db.deleteFrom('trigger_changes').where('project_id', '=', projectId).where('change_key', '=', changeKey).execute();
    await db.insertInto('trigger_changes').values({ project_id: projectId, change_key: changeKey, job_id: jobId, created_at: Date.now() }).execute();
  }

  /** Forgets deliveries received before `before` (epoch ms). */
  async pruneDeliveries(before: number): Promise<void> {
    await this.db.deleteFrom('trigger_deliveries').where('received_at', '<', before).execute();
  }
}
