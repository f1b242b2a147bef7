// A job's title: the prompt's first line until the agent opens a pull request, then its title; and the
// migration that gives jobs made before titles existed the same title (both backends).
import { rmSync } from 'node:fs';
import { Migrator, type Migration } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { jobTitle, JOB_TITLE_MAX } from '../../src/contracts/job-title.ts';
import { loadConfig } from '../../src/config.ts';
import { migrate } from '../../src/store/database.ts';
import { createStoreDialect } from '../../src/store/dialect.ts';
import { migrations } from '../../src/store/migrations/index.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { backendDatabases } from '../helpers/backend.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';

describe('jobTitle', () => {
  it('takes the first non-empty line, trimmed, with runs of spaces made one', () => {
    expect(jobTitle('\n\n   Document   the --dry-run flag  \nand the rest')).toBe('Document the --dry-run flag');
    expect(jobTitle('One line')).toBe('One line');
    expect(jobTitle('  \n ')).toBe('');
  });

  it(`caps at ${JOB_TITLE_MAX} characters with an ellipsis, never cutting a character in two`, () => {
    const long = 'Rewrite the getting started guide so that it covers installing, configuring and deploying 🚀 twice';
    const t = jobTitle(long);
    expect([...t]).toHaveLength(JOB_TITLE_MAX);
    expect(t.endsWith('…')).toBe(true);
    expect(long.startsWith(t.slice(0, -1))).toBe(true);
    expect(jobTitle('x'.repeat(JOB_TITLE_MAX))).toBe('x'.repeat(JOB_TITLE_MAX));
  });
});

describe('stored titles', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
  });
  afterAll(() => server?.close());

  it('the job list and the job view carry the title; a pull request title replaces it', async () => {
    const projectId = await server.createProject({});
    const key = await server.createKey(projectId, 'write');
    const created = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Fix the install page\n\nIt still says npm 8.' } });
    expect(created.body.title).toBe('Fix the install page');
    const listed = await server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(listed.body.jobs[0].title).toBe('Fix the install page');

    // What a worker does when the agent opens the pull request (queue.setPrLink with its title).
    const { db } = server.services.store;
    await db.updateTable('jobs').set({ lease_owner: 'w1' }).where('id', '=', created.body.id).execute();
    await server.services.queue.setPrLink(created.body.id, 'w1', 'https://github.com/acme/docs/pull/7', 'Install page: npm 10');
    const viewed = await server.api('GET', `/v2/agent/${projectId}/job/${created.body.id}`, { key });
    expect(viewed.body).toMatchObject({ title: 'Install page: npm 10', prLink: 'https://github.com/acme/docs/pull/7' });
  });
});

describe('migration 011: titles for the jobs made before', () => {
  it('gives each job its prompt\'s first line, or its first turn\'s title when it has a pull request', async () => {
    const dataDir = tempDir();
    const databases = await backendDatabases();
    const config = loadConfig({ ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'title-secret-0123456789' });
    const dialect = createStoreDialect(config);
    try {
      const box = createSecretBox(config.secret);
      const before: Record<string, Migration> = {};
      for (const [name, m] of Object.entries(migrations)) if (name < '011') before[name] = { up: (db) => m.up(db, dialect, box) };
      const upTo010 = new Migrator({ db: dialect.db, migrationTableName: 'folio_migrations', migrationLockTableName: 'folio_migrations_lock', provider: { getMigrations: async () => before } });
      expect((await upTo010.migrateToLatest()).error).toBeUndefined();

      const db = dialect.db as any;
      await db.insertInto('projects').values({ id: 'prj_1', name: 'Docs', repository_url: 'https://github.com/acme/docs', base_branch: 'main', code_host: 'github', created_at: 1, updated_at: 1 }).execute();
      const job = (id: string, prLink: string | null) => ({ id, project_id: 'prj_1', status: 'completed', model: 'm', repository: 'r', ref: `folio/${id}`, base_ref: 'main', pr_link: prLink, created_at: 1, updated_at: 1, files: '[]' });
      await db.insertInto('jobs').values([job('job_a', null), job('job_b', 'https://github.com/acme/docs/pull/1')]).execute();
      const message = (jobId: string, seq: number, prompt: string, title: string | null) => ({ job_id: jobId, seq, prompt, created_at: seq, handled_at: seq, outcome: 'completed', title, summary: null });
      await db
        .insertInto('job_messages')
        .values([message('job_a', 1, '  Fix the typo\nin the install page', 'Fixed it'), message('job_b', 1, 'Add a FAQ', null), message('job_b', 2, 'And SSO', 'FAQ with SSO'), message('job_b', 3, 'More', 'Later title')])
        .execute();

      expect(await migrate(dialect, config.secret)).toEqual(Object.keys(migrations).filter((name) => name >= '011'));
      const titles = await db.selectFrom('jobs').select(['id', 'title']).orderBy('id').execute();
      // job_a has no pull request: its prompt; job_b's pull request took the first title a turn gave.
      expect(titles).toEqual([
        { id: 'job_a', title: 'Fix the typo' },
        { id: 'job_b', title: 'FAQ with SSO' },
      ]);
    } finally {
      await dialect.close();
      await databases.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
