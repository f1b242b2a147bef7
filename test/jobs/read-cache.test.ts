// Job reads are served from a cache validated by the store's data version: a commit by any other
// connection or process is seen on the next read.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import path from 'node:path';
import { DatabaseSync } from 'node:sqlite';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';
import { isScale } from '../helpers/backend.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { ProjectsService } from '../../src/admin/projects.ts';
import { tempDir } from '../helpers/server.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ jobHandler: new ScriptedHandler(), workers: 0 });
});
afterAll(() => server.close());

describe.skipIf(isScale)('job read cache (SQLite: PostgreSQL reads are not cached)', () => {
  it('sees a commit made by another process on the next read', async () => {
    const projectId = await server.createProject();
    const key = await server.createKey(projectId);
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body;
    expect((await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.status).toBe('active');
    expect((await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.status).toBe('active'); // cached
    // Another process (here: another connection) changes the job.
    const other = new DatabaseSync(path.join(server.dataDir, 'folio.db'));
    other.exec('PRAGMA busy_timeout = 5000');
    other.prepare('update jobs set status = ?, pr_link = ? where id = ?').run('completed', 'https://github.com/acme/docs/pull/9', job.id);
    other.close();
    const after = (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body;
    expect(after).toMatchObject({ status: 'completed', prLink: 'https://github.com/acme/docs/pull/9' });
  });

  it("sees this process's own writes at once", async () => {
    const projectId = await server.createProject();
    const key = await server.createKey(projectId);
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body;
    await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key });
    await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/archive`, { key });
    expect((await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.status).toBe('archived');
  });

  it('a key revoked by another process is refused on the next request', async () => {
    const projectId = await server.createProject();
    const key = await server.createKey(projectId);
    expect((await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).status).toBe(200);
    const other = new DatabaseSync(path.join(server.dataDir, 'folio.db'));
    other.exec('PRAGMA busy_timeout = 5000');
    other.prepare('update api_keys set revoked_at = ? where project_id = ?').run(Date.now(), projectId);
    other.close();
    const res = await server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('revoked_api_key');
  });
});

describe.skipIf(isScale)('SQLite data version', () => {
  it('changes on every commit, by this process or another, and never on a read', async () => {
    const dir = tempDir('folio-version-');
    const config = loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_REPOSITORY_CHECK: 'false' });
    const store = await openStore(config);
    try {
      const { dialect } = store;
      const seen = new Set<number | null>();
      const v0 = dialect.dataVersion();
      seen.add(v0);
      await store.db.selectFrom('jobs').selectAll().execute();
      expect(dialect.dataVersion()).toBe(v0);
      // This process's writer, twenty commits in a row: each one is a new version.
      const projects = new ProjectsService(store.db, config);
      for (let i = 0; i < 20; i++) {
        await projects.create({ name: `P${i}`, repositoryUrl: 'https://github.com/acme/docs' });
        const v = dialect.dataVersion();
        expect(seen.has(v)).toBe(false);
        seen.add(v);
      }
      // Another process's commit, also after the WAL was checkpointed and restarted from its start.
      const other = new DatabaseSync(path.join(dir, 'folio.db'));
      other.exec('PRAGMA busy_timeout = 5000');
      for (const checkpoint of [false, true]) {
        if (checkpoint) other.exec('PRAGMA wal_checkpoint(TRUNCATE)');
        const before = dialect.dataVersion();
        other.prepare("update projects set name = name || '!' where name like 'P0%'").run();
        expect(dialect.dataVersion()).not.toBe(before);
      }
      other.close();
    } finally {
      await store.close();
    }
  });

  it('a value read after `since` is reused; one read before it is not', async () => {
    const dir = tempDir('folio-version-');
    const config = loadConfig({ FOLIO_DATA_DIR: dir, FOLIO_REPOSITORY_CHECK: 'false' });
    const store = await openStore(config);
    try {
      const { dialect } = store;
      const arrived = performance.now();
      const first = dialect.dataVersion(arrived);
      await new ProjectsService(store.db, config).create({ name: 'P', repositoryUrl: 'https://github.com/acme/docs' });
      // The same request may keep the value it read after it arrived…
      expect(dialect.dataVersion(arrived)).toBe(first);
      // …a request that arrived after the commit reads again.
      expect(dialect.dataVersion(performance.now())).not.toBe(first);
    } finally {
      await store.close();
    }
  });
});
