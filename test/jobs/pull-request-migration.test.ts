// Migration 016 on a store as 015 left it: the merge state suggestion jobs kept (pr_state, merged_at,
// pr_checked_at on suggestion_jobs) moves to job_pull_requests, the one store of every job's, and the
// suggestions read it from there; a suggestion job never asked stays unasked; job_changes gets
// `pages`. Both backends.
import { rmSync } from 'node:fs';
import { Migrator, type Kysely, type Migration } from 'kysely';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/store/database.ts';
import { createStoreDialect } from '../../src/store/dialect.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { newId } from '../../src/store/ids.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { suggestionJobs } from '../../src/store/suggestions.ts';
import { pullRequestStates } from '../../src/store/job-pull-requests.ts';
import { backendDatabases } from '../helpers/backend.ts';
import { tempDir } from '../helpers/server.ts';

const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

async function jobAsBefore(db: Kysely<any>, projectId: string, now: number): Promise<string> {
  const id = newId('job');
  await db
    .insertInto('jobs')
    .values({ id, project_id: projectId, status: 'completed', model: 'openai/gpt-5', repository: 'https://github.com/acme/docs', ref: `folio/${id}`, base_ref: 'main', pr_link: 'https://github.com/acme/docs/pull/1', created_at: now, updated_at: now })
    .execute();
  return id;
}

describe('migration 016: every job\'s pull request state in one table', () => {
  it('moves the suggestion jobs\' states, keeps unasked ones unasked, and adds job_changes.pages', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const config = loadConfig({ ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'migration-016-secret-0123456789' });
    const dialect = createStoreDialect(config);
    cleanups.push(() => dialect.close());
    const box = createSecretBox(config.secret);
    const before: Record<string, Migration> = {};
    for (const [name, m] of Object.entries(migrations)) if (name < '016') before[name] = { up: (db) => m.up(db, dialect, box) };
    const upTo015 = new Migrator({ db: dialect.db, migrationTableName: 'folio_migrations', migrationLockTableName: 'folio_migrations_lock', provider: { getMigrations: async () => before } });
    expect((await upTo015.migrateToLatest()).error).toBeUndefined();

    const db = dialect.db as Kysely<any>;
    const now = Date.now();
    const projectId = newId('prj');
    await db.insertInto('projects').values({ id: projectId, name: 'Docs', repository_url: 'https://github.com/acme/docs', base_branch: 'main', code_host: 'github', default_model: null, draft_prs: 0, repo_token: null, webhook_url: null, webhook_secret: null, site_origins: '[]', checks: 'warn', created_at: now, updated_at: now }).execute();
    const merged = await jobAsBefore(db, projectId, now);
    const unasked = await jobAsBefore(db, projectId, now + 1);
    const suggestion = (jobId: string, pr: { pr_state: string | null; merged_at: number | null; pr_checked_at: number | null }) => ({
      job_id: jobId, project_id: projectId, suggestion_id: 'sug_1', kind: 'broken_paths', title: 'Redirect', paths: '[]', range_from: 0, range_to: 1, automatic: 0, created_at: now, ...pr,
    });
    await db.insertInto('suggestion_jobs').values(suggestion(merged, { pr_state: 'merged', merged_at: now - 5000, pr_checked_at: now - 1000 })).execute();
    await db.insertInto('suggestion_jobs').values({ ...suggestion(unasked, { pr_state: null, merged_at: null, pr_checked_at: null }), created_at: now + 1 }).execute();
    await db.insertInto('job_changes').values({ job_id: merged, base_sha: 'a'.repeat(40), head_sha: 'b'.repeat(40), diff: '', diff_truncated: 0, checks: null, updated_at: now }).execute();

    expect(await migrate(dialect, config.secret)).toEqual(['016_job_pull_requests']);
    const states = await pullRequestStates(dialect.db, [merged, unasked]);
    expect(states.get(merged)).toEqual({ prState: 'merged', mergedAt: now - 5000, checkedAt: now - 1000 });
    expect(states.has(unasked)).toBe(false);
    const rows = await suggestionJobs(dialect.db, projectId);
    expect(rows.map((r) => [r.job_id, r.pr_state, r.merged_at === null ? null : Number(r.merged_at)])).toEqual([
      [unasked, null, null],
      [merged, 'merged', now - 5000],
    ]);
    const changes = await dialect.db.selectFrom('job_changes').selectAll().where('job_id', '=', merged).executeTakeFirstOrThrow();
    expect(changes.pages).toBeNull();
  });
});
