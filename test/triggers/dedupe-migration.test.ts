// Migration 007 on a store as 006 left it, with deliveries recorded: every row is kept with its id,
// new rows are numbered after them, and a delivery's dedupe key is unique per project instead of
// across the installation. Migration 009 (meanings) on a store with trigger settings: a meaning is
// claimed once per project and outlives delivery records; refusals are counted on old settings.
// Both backends.
import { rmSync } from 'node:fs';
import { Migrator, type Kysely, type Migration } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/store/database.ts';
import { createStoreDialect } from '../../src/store/dialect.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { newId } from '../../src/store/ids.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { TriggerStore, type DeliveryRecord } from '../../src/store/triggers.ts';
import { backendDatabases } from '../helpers/backend.ts';
import { tempDir } from '../helpers/server.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

/** A project row as the store had it before the later migrations (the store's own insert writes today's columns). */
async function projectAsBefore(db: Kysely<any>, name: string, repositoryUrl: string): Promise<string> {
  const id = newId('prj');
  const now = Date.now();
  const row = { id, name, repository_url: repositoryUrl, base_branch: 'main', code_host: 'github', default_model: null, draft_prs: 0, repo_token: null, webhook_url: null, webhook_secret: null, site_origins: '[]', checks: 'warn', created_at: now, updated_at: now };
  await db.insertInto('projects').values(row).execute();
  return id;
}

describe('migration 007: trigger deliveries deduplicated per project', () => {
  it('keeps every delivery and its id, and lets two projects hold the same dedupe key', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const config = loadConfig({ ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'dedupe-secret-0123456789' });
    const dialect = createStoreDialect(config);
    cleanups.push(() => dialect.close());
    const box = createSecretBox(config.secret);

    // The store as the version before left it: every migration up to 006.
    const before: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(migrations)) if (name < '007') before[name] = { up: (db) => m.up(db, dialect, box) };
    const upTo006 = new Migrator({ db: dialect.db, migrationTableName: 'folio_migrations', migrationLockTableName: 'folio_migrations_lock', provider: { getMigrations: async () => before } });
    expect((await upTo006.migrateToLatest()).error).toBeUndefined();

    const a = await projectAsBefore(dialect.db, 'A', 'https://github.com/acme/docs-a');
    const b = await projectAsBefore(dialect.db, 'B', 'https://github.com/acme/docs-b');
    const triggers = new TriggerStore(dialect.db, box);
    const delivery = (projectId: string, r: Partial<DeliveryRecord>): DeliveryRecord => ({
      projectId,
      host: 'github',
      deliveryId: 'd-1',
      event: 'pull_request',
      outcome: 'ignored',
      statusCode: 202,
      reason: 'Nothing to do.',
      ...r,
    });
    await triggers.recordDelivery(dialect.db, delivery(a, { outcome: 'started', statusCode: 201, reason: 'Started job job_a.', jobId: 'job_a', dedupeKey: 'github:d-1' }));
    await triggers.recordDelivery(dialect.db, delivery(a, { outcome: 'rejected', statusCode: 401, deliveryId: null }));
    await triggers.recordDelivery(dialect.db, delivery(b, { deliveryId: 'd-2' }));
    // Before: one key across the installation.
    await expect(triggers.recordDelivery(dialect.db, delivery(b, { outcome: 'started', dedupeKey: 'github:d-1' }))).rejects.toSatisfy((err) => dialect.isUniqueViolation(err));
    const rows = () => dialect.db.selectFrom('trigger_deliveries').selectAll().orderBy('id').execute();
    const old = await rows();
    expect(old).toHaveLength(3);

    // 007 and every later migration.
    expect(await migrate(dialect, config.secret)).toEqual(Object.keys(migrations).filter((name) => name >= '007'));
    expect(await rows()).toEqual(old);
    expect(await triggers.acted(dialect.db, a, ['github:d-1'])).toEqual({ jobId: 'job_a', outcome: 'started' });
    expect(await triggers.acted(dialect.db, b, ['github:d-1'])).toBeUndefined();

    // Project B's copy of the same delivery holds the same key; a second copy for A is still refused.
    await triggers.recordDelivery(dialect.db, delivery(b, { outcome: 'started', statusCode: 201, jobId: 'job_b', dedupeKey: 'github:d-1' }));
    expect(await triggers.acted(dialect.db, b, ['github:d-1'])).toEqual({ jobId: 'job_b', outcome: 'started' });
    await expect(triggers.recordDelivery(dialect.db, delivery(a, { outcome: 'started', dedupeKey: 'github:d-1' }))).rejects.toSatisfy((err) => dialect.isUniqueViolation(err));
    // New rows are numbered after the kept ones.
    const after = await rows();
    expect(after.map((r) => Number(r.id))).toEqual([...old.map((r) => Number(r.id)), Number(old.at(-1)!.id) + 1]);
    // Deleting a project still takes its deliveries (the foreign key survived the rebuild).
    await dialect.db.deleteFrom('projects').where('id', '=', b).execute();
    expect((await rows()).map((r) => r.project_id)).toEqual([a, a]);
  });
});

describe('migration 009: what a change means, and refused deliveries counted', () => {
  it('claims a meaning once per project, and counts refusals on settings made before it', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const config = loadConfig({ ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'meaning-secret-0123456789' });
    const dialect = createStoreDialect(config);
    cleanups.push(() => dialect.close());
    const box = createSecretBox(config.secret);

    const before: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(migrations)) if (name < '009_trigger_meaning_dedupe') before[name] = { up: (db) => m.up(db, dialect, box) };
    const upToIt = new Migrator({ db: dialect.db, migrationTableName: 'folio_migrations', migrationLockTableName: 'folio_migrations_lock', provider: { getMigrations: async () => before } });
    expect((await upToIt.migrateToLatest()).error).toBeUndefined();
    const a = await projectAsBefore(dialect.db, 'A', 'https://github.com/acme/docs-a');
    const b = await projectAsBefore(dialect.db, 'B', 'https://github.com/acme/docs-b');
    const triggers = new TriggerStore(dialect.db, box);
    await triggers.rotateSecret(a);

    expect((await migrate(dialect, config.secret))[0]).toBe('009_trigger_meaning_dedupe');
    // Settings made before start at no refusals; counts add up, the latest time is kept.
    expect(await triggers.settings(a)).toMatchObject({ hasSecret: true, refusedDeliveries: 0, lastRefusedAt: null });
    const at = Date.UTC(2026, 0, 2);
    await triggers.countRefusals(a, 2, at);
    await triggers.countRefusals(a, 1, at - 60_000);
    expect(await triggers.settings(a)).toMatchObject({ refusedDeliveries: 3, lastRefusedAt: new Date(at).toISOString() });

    const key = 'github:acme/api#1:merged:abcdef1';
    const claim = (projectId: string) => dialect.db.transaction().execute((trx) => triggers.claimMeaning(trx, projectId, key));
    expect([await claim(a), await claim(a), await claim(b)]).toEqual([true, false, true]);
    await dialect.db.transaction().execute((trx) => triggers.settleMeaning(trx, a, key, 'job_a'));
    expect(await triggers.meaningHandled(dialect.db, a, key)).toEqual({ jobId: 'job_a' });
    // Kept when delivery records are pruned; gone with its project.
    await triggers.pruneDeliveries(Date.now() + 1);
    expect(await triggers.meaningHandled(dialect.db, a, key)).toEqual({ jobId: 'job_a' });
    await dialect.db.deleteFrom('projects').where('id', '=', a).execute();
    expect(await triggers.meaningHandled(dialect.db, a, key)).toBeUndefined();
    expect(await triggers.meaningHandled(dialect.db, b, key)).toEqual({ jobId: null });
  });
});
