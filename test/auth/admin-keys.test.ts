// Keys that cover many projects: same format, hashing, scopes, expiry and revocation as a project's
// keys; admitted on the projects they cover and refused (403) elsewhere; a revocation ends access on
// every project at once, also in other processes. Dashboard API and CLI create and list both kinds.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { runCli } from '../helpers/process.ts';
import { backendDatabases, isScale, NEEDS_POSTGRES } from '../helpers/backend.ts';
import { hashKey } from '../../src/store/api-keys.ts';

describe('keys that cover many projects', () => {
  let server: TestServer;
  let b: Browser;
  let a: string;
  let bee: string;
  let c: string;
  const jobs = (projectId: string, key: string) => server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
  const create = (projectId: string, key: string) => server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Document the flag' } });

  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
    b = await setUp(server);
    a = await server.createProject({ name: 'A' });
    bee = await server.createProject({ name: 'B' });
    c = await server.createProject({ name: 'C' });
  });
  afterAll(async () => {
    await server?.close();
  });

  it('a key for a list of projects works on each of them and is refused on a third', async () => {
    const res = await b.req('POST', '/api/keys', { body: { name: 'Fleet', projectIds: [a, bee], expiresInDays: 30 } });
    expect(res.status, res.text).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const { key, ...view } = res.body;
    expect(key).toMatch(/^folio_[A-Za-z0-9]{40}$/);
    expect(view).toMatchObject({ kind: 'admin', projectId: null, allProjects: false, projectIds: [a, bee], scope: 'write', name: 'Fleet', prefix: key.slice(0, 12) });
    // Stored like any key: only its hash.
    const row = await server.services.store.db.selectFrom('admin_keys').selectAll().where('id', '=', view.id).executeTakeFirstOrThrow();
    expect(row.hash).toBe(hashKey(key));
    expect(JSON.stringify(row)).not.toContain(key);

    for (const p of [a, bee]) {
      expect((await create(p, key)).status).toBe(201);
      expect((await jobs(p, key)).status).toBe(200);
      expect((await server.api('GET', `/v1/analytics/${p}/visitors`, { key })).status).toBe(200);
    }
    for (const res of [await jobs(c, key), await create(c, key), await server.api('GET', `/v1/analytics/${c}/visitors`, { key })]) {
      expect(res.status).toBe(403);
      expect(res.body.code).toBe('wrong_project');
    }
    // The project-key listing of A shows it, with what it covers; C's does not.
    const listed = (await b.req('GET', `/api/projects/${a}/keys`)).body.keys;
    expect(listed.map((k: any) => k.id)).toContain(view.id);
    expect((await b.req('GET', `/api/projects/${c}/keys`)).body.keys.map((k: any) => k.id)).not.toContain(view.id);
  });

  it('a client written for the hosted service drives several projects with one key, unchanged', async () => {
    const { FolioClient } = await import('../../src/client/index.ts');
    const { key } = (await b.req('POST', '/api/keys', { body: { projectIds: [a, bee] } })).body;
    const client = new FolioClient({ baseUrl: server.url, apiKey: key });
    const jobA = await client.createJob('Document A', { projectId: a });
    const jobB = await client.createJob('Document B', { projectId: bee });
    expect((await client.getJob(jobA.id, { projectId: a })).id).toBe(jobA.id);
    expect((await client.getJob(jobB.id, { projectId: bee })).id).toBe(jobB.id);
    // A job of one project is not found through another, even with a key that covers both.
    await expect(client.getJob(jobA.id, { projectId: bee })).rejects.toMatchObject({ status: 404 });
    await expect(client.listJobsPage({}, { projectId: c })).rejects.toMatchObject({ status: 403, code: 'wrong_project' });
  });

  it('an all-projects key covers every project, also one made after it; scopes and expiry hold', async () => {
    const all = (await b.req('POST', '/api/keys', { body: { allProjects: true, scope: 'read' } })).body;
    expect(all).toMatchObject({ kind: 'admin', allProjects: true, projectIds: [], scope: 'read' });
    const later = await server.createProject({ name: 'Later' });
    for (const p of [a, bee, c, later]) expect((await jobs(p, all.key)).status).toBe(200);
    const write = await create(a, all.key);
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_scope');

    const expired = await server.services.keys.store.createAdmin({ projectIds: null, expiresAt: Date.now() - 1 });
    const res = await jobs(a, expired.key);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('expired_api_key');
  });

  it('revoking it ends access on every project at once', async () => {
    const { key, id } = (await b.req('POST', '/api/keys', { body: { projectIds: [a, bee] } })).body;
    // Warm every cache: the key is verified and remembered.
    for (let i = 0; i < 3; i++) for (const p of [a, bee]) expect((await jobs(p, key)).status).toBe(200);
    const revoked = await b.req('POST', `/api/keys/${id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    for (const p of [a, bee]) {
      const res = await jobs(p, key);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('revoked_api_key');
    }
    expect((await b.req('POST', '/api/keys/key_nope/revoke')).status).toBe(404);
  });

  it('lists both kinds with what each covers', async () => {
    const own = await server.createKey(a);
    void own;
    const res = await b.req('GET', '/api/keys');
    expect(res.status).toBe(200);
    const kinds = new Set(res.body.keys.map((k: any) => k.kind));
    expect(kinds).toEqual(new Set(['project', 'admin']));
    const projectKey = res.body.keys.find((k: any) => k.kind === 'project');
    expect(projectKey).toMatchObject({ projectId: a, allProjects: false, projectIds: [a] });
    expect(res.text).not.toMatch(/folio_[A-Za-z0-9]{40}/);
  });

  it('refuses a key body that does not say what it covers', async () => {
    for (const body of [{}, { allProjects: true, projectIds: [a] }, { allProjects: false }, { projectIds: [] }, { projectIds: ['prj_missing'] }, { allProjects: true, extra: 1 }, { allProjects: true, name: '  ' }]) {
      const res = await b.req('POST', '/api/keys', { body });
      expect([400, 404], JSON.stringify(body)).toContain(res.status);
      expect(res.body.error).toBeTruthy();
    }
    expect((await server.api('POST', '/api/keys', { body: { allProjects: true } })).status).toBe(401);
  });
});

describe('folio key create --all-projects / --projects, list, revoke (CLI)', () => {
  it('creates, lists and revokes keys of both kinds; a revocation by the CLI is seen by the server at once', async () => {
    const dir = tempDir();
    const databases = await backendDatabases();
    const server = await startTestServer({ workers: 0, dataDir: dir, databases });
    try {
      const env = server.env;
      const a = await server.createProject({ name: 'A' });
      const bb = await server.createProject({ name: 'B' });
      const c = await server.createProject({ name: 'C' });
      const listed = await runCli(['key', 'create', '--projects', `${a}, ${bb}`, '--name', 'Fleet', '--json'], env);
      expect(listed.code, listed.stderr).toBe(0);
      const k = JSON.parse(listed.stdout);
      expect(k).toMatchObject({ kind: 'admin', projectIds: [a, bb], name: 'Fleet' });
      const human = await runCli(['key', 'create', '--all-projects', '--scope', 'read'], env);
      expect(human.stdout).toMatch(/^folio_[A-Za-z0-9]{40}\n/);
      expect(human.stdout).toContain('for every project');

      const table = (await runCli(['key', 'list'], env)).stdout;
      expect(table).toMatch(/COVERS/);
      expect(table).toContain(`projects ${a}, ${bb}`);
      expect(table).toContain('every project');
      const forC = JSON.parse((await runCli(['key', 'list', '--project', c, '--json'], env)).stdout);
      expect(forC.map((x: any) => x.kind)).toEqual(['admin']); // only the all-projects key
      expect(forC[0].allProjects).toBe(true);

      for (const [args, message] of [
        [['key', 'create'], /exactly one of/],
        [['key', 'create', '--project', a, '--all-projects'], /exactly one of/],
        [['key', 'create', '--projects', `${a},prj_missing`], /does not exist/],
        [['key', 'create', '--projects', ' , '], /at least one/],
      ] as const) {
        const r = await runCli([...args], env);
        expect(r.code, args.join(' ')).toBe(1);
        expect(r.stderr).toMatch(message);
      }

      for (const p of [a, bb]) expect((await server.api('GET', `/v2/agent/${p}/jobs`, { key: k.key })).status).toBe(200);
      expect((await server.api('GET', `/v2/agent/${c}/jobs`, { key: k.key })).status).toBe(403);
      const revoked = await runCli(['key', 'revoke', k.id, '--json'], env);
      expect(JSON.parse(revoked.stdout).revokedAt).not.toBeNull();
      // SQLite: the commit changes the data version; PostgreSQL: NOTIFY folio_keys (or the 1 s bound).
      const deadline = Date.now() + (isScale ? 1_500 : 0);
      for (const p of [a, bb]) {
        let res;
        do res = await server.api('GET', `/v2/agent/${p}/jobs`, { key: k.key });
        while (res.status === 200 && Date.now() < deadline);
        expect(res.status).toBe(401);
      }
    } finally {
      await server.close();
      await databases.drop();
    }
  });
});

describe.skipIf(!isScale)(`revocation across processes on PostgreSQL ${NEEDS_POSTGRES}`, () => {
  it('a key revoked through one server is refused by another at once, not after its cache expires', async () => {
    const databases = await backendDatabases();
    const one = await startTestServer({ workers: 0, databases });
    const two = await startTestServer({ workers: 0, databases });
    try {
      const p = await one.createProject();
      const q = await one.createProject();
      const { key, row } = await one.services.keys.store.createAdmin({ projectIds: [p, q] });
      expect((await two.api('GET', `/v2/agent/${p}/jobs`, { key })).status).toBe(200); // cached by `two` for 1 s
      await one.services.keys.revoke(row.id);
      const start = Date.now();
      let status = 200;
      while (status === 200 && Date.now() - start < 900) {
        status = (await two.api('GET', `/v2/agent/${q}/jobs`, { key })).status;
        if (status === 200) await new Promise((r) => setTimeout(r, 10));
      }
      expect(status).toBe(401);
      expect(Date.now() - start).toBeLessThan(500);
    } finally {
      await two.close();
      await one.close();
      await databases.drop();
    }
  });
});
