// Revocation reaches open event streams: a stream re-checks, every FOLIO_STREAM_RECHECK and before
// each batch it sends, from the store, that what admitted it still holds — the key (revoked,
// expired, no longer covering the project), the dashboard session (signed out), the project and
// the job — and ends with a last `error` event saying why. No event written after the revocation
// reaches it. Across processes on PostgreSQL, a revocation through one server ends a stream held by
// another.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { backendDatabases, isScale, NEEDS_POSTGRES, type BackendDatabases } from '../helpers/backend.ts';
import { setUp } from '../dashboard/session.ts';
import { eventually } from '../helpers/handlers.ts';
import { startProcess, type Child } from '../helpers/process.ts';
import { recordUntyped } from '../helpers/untyped-events.ts';

interface OpenStream {
  /** Raw SSE text received so far. */
  text(): string;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  abort(): void;
}

async function openStream(server: { url: string }, projectId: string, jobId: string, headers: Record<string, string>): Promise<OpenStream> {
  const controller = new AbortController();
  const res = await fetch(`${server.url}/v2/agent/${projectId}/job/${jobId}/events`, {
    headers: { ...headers, accept: 'text/event-stream' },
    signal: controller.signal,
  });
  expect(res.status).toBe(200);
  let got = '';
  const decoder = new TextDecoder();
  const ended = (async () => {
    try {
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) got += decoder.decode(chunk, { stream: true });
    } catch {
      // aborted by the test
    }
  })();
  return { text: () => got, ended, abort: () => controller.abort() };
}

/** Waits up to `ms` for the stream to end; true when it did. */
async function endsWithin(stream: OpenStream, ms: number): Promise<boolean> {
  return Promise.race([stream.ended.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), ms))]);
}

const waitFor = (cond: () => boolean) => eventually(async () => cond(), 5000);

describe('revocation ends open event streams', () => {
  let server: TestServer;
  let projectId: string;
  let jobId: string;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
    projectId = await server.createProject();
    const key = await server.createKey(projectId);
    jobId = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Stay active' } })).body.id;
  });
  afterAll(async () => server?.close());

  /**
   * Opens a stream, checks it delivers, runs `revoke`, writes an event at once (before the stream's
   * periodic check could have run), and expects the stream's end with `code` without that event.
   */
  async function endsAfter(headers: Record<string, string>, revoke: () => Promise<unknown>, code: string): Promise<void> {
    const stream = await openStream(server, projectId, jobId, headers);
    try {
      await recordUntyped(server.services.jobs, jobId, 'test.before', { n: 1 });
      await waitFor(() => stream.text().includes('event: test.before'));
      await revoke();
      const secret = `file contents written after the revocation ${Math.random()}`;
      await recordUntyped(server.services.jobs, jobId, 'test.after-revocation', { content: secret });
      expect(await endsWithin(stream, 8000)).toBe(true);
      expect(stream.text()).not.toContain(secret);
      const last = stream.text().trim().split('\n\n').at(-1)!;
      expect(last).toMatch(/^event: error\ndata: /);
      expect(JSON.parse(last.split('\ndata: ')[1])).toMatchObject({ code });
      // Nothing written afterwards reaches it.
      const marker = `file contents ${Math.random()}`;
      await recordUntyped(server.services.jobs, jobId, 'test.after', { marker });
      await new Promise((r) => setTimeout(r, 300));
      expect(stream.text()).not.toContain(marker);
    } finally {
      stream.abort();
    }
  }

  it('revoking the key', async () => {
    const key = await server.createKey(projectId, 'read');
    const [row] = await server.services.keys.store.list(projectId).then((ks) => ks.filter((k) => key.startsWith(k.prefix)));
    await endsAfter({ authorization: `Bearer ${key}` }, () => server.services.keys.revoke(row.id), 'revoked_api_key');
  });

  it('the key expiring', async () => {
    const key = await server.createKey(projectId, 'read', Date.now() + 60_000);
    const [row] = await server.services.keys.store.list(projectId).then((ks) => ks.filter((k) => key.startsWith(k.prefix)));
    const expire = () => server.services.store.db.updateTable('api_keys').set({ expires_at: Date.now() - 1 }).where('id', '=', row.id).execute();
    await endsAfter({ authorization: `Bearer ${key}` }, expire, 'expired_api_key');
  });

  it('the project taken from a many-project key', async () => {
    const other = await server.createProject();
    const { key, row } = await server.services.keys.store.createAdmin({ projectIds: [projectId, other], scope: 'read' });
    const narrow = () => server.services.store.db.updateTable('admin_keys').set({ project_ids: JSON.stringify([other]) }).where('id', '=', row.id).execute();
    await endsAfter({ authorization: `Bearer ${key}` }, narrow, 'wrong_project');
  });

  it("signing out the dashboard session that opened it", async () => {
    const browser = await setUp(server);
    await endsAfter({ cookie: browser.cookie! }, () => browser.req('POST', '/api/logout'), 'session_ended');
  });

  it('deleting the project, for a key that covers every project', async () => {
    const doomedProject = await server.createProject();
    const { key } = await server.services.keys.store.createAdmin({ projectIds: null, scope: 'write' });
    const doomed = (await server.api('POST', `/v2/agent/${doomedProject}/job`, { key, body: { prompt: 'Short-lived' } })).body.id as string;
    const stream = await openStream(server, doomedProject, doomed, { authorization: `Bearer ${key}` });
    try {
      await waitFor(() => stream.text().includes('id: 1\n'));
      // No product path deletes a project yet; the store's cascade is what one would do.
      await server.services.store.db.deleteFrom('projects').where('id', '=', doomedProject).execute();
      expect(await endsWithin(stream, 8000)).toBe(true);
      const last = stream.text().trim().split('\n\n').at(-1)!;
      expect(last).toMatch(/^event: error\ndata: /);
      expect(JSON.parse(last.split('\ndata: ')[1])).toMatchObject({ code: 'project_not_found' });
    } finally {
      stream.abort();
    }
  });

  it('the job or its project going away', async () => {
    const key = await server.createKey(projectId, 'read');
    const gone = server.api('POST', `/v2/agent/${projectId}/job`, { key: await server.createKey(projectId), body: { prompt: 'Short-lived' } });
    const doomed = (await gone).body.id as string;
    const stream = await openStream(server, projectId, doomed, { authorization: `Bearer ${key}` });
    try {
      const db = server.services.store.db;
      await db.transaction().execute(async (trx) => {
        for (const table of ['job_events', 'job_messages', 'webhook_outbox'] as const) await trx.deleteFrom(table).where('job_id', '=', doomed).execute().catch(() => undefined);
        await trx.deleteFrom('jobs').where('id', '=', doomed).execute();
      });
      expect(await endsWithin(stream, 8000)).toBe(true);
      expect(stream.text()).toContain('"code":"job_not_found"');
    } finally {
      stream.abort();
    }
  });
});

describe('the periodic check', () => {
  it('reads a key once per round, however many of its streams are open', async () => {
    const server = await startTestServer({ workers: 0, env: { FOLIO_STREAM_RECHECK: '200ms' } });
    const streams: OpenStream[] = [];
    try {
      const projectId = await server.createProject();
      const key = await server.createKey(projectId, 'read');
      const jobId = (await server.api('POST', `/v2/agent/${projectId}/job`, { key: await server.createKey(projectId), body: { prompt: 'Stay' } })).body.id;
      for (let i = 0; i < 4; i++) streams.push(await openStream(server, projectId, jobId, { authorization: `Bearer ${key}` }));
      await waitFor(() => streams.every((s) => s.text().includes('id: 1\n')));
      // Count the store reads each kind of check makes from now on (the real methods still run).
      const reads = { key: 0, job: 0 };
      const { jobs } = server.services;
      const keys = server.services.keys.store;
      const readKey = keys.get.bind(keys);
      const readJob = jobs.exists.bind(jobs);
      keys.get = (id) => (reads.key++, readKey(id));
      jobs.exists = (project, job) => (reads.job++, readJob(project, job));
      await eventually(async () => reads.job >= 12, 10_000);
      // Each stream's job is checked every round; the key the four share, once per round.
      expect(reads.key).toBeGreaterThan(0);
      expect(reads.key * 2).toBeLessThanOrEqual(reads.job);
      expect(streams.every((s) => !s.text().includes('event: error'))).toBe(true);
    } finally {
      for (const s of streams) s.abort();
      await server.close();
    }
  });
});

describe.runIf(isScale)(`revocation across processes ${NEEDS_POSTGRES}`, () => {
  let databases: BackendDatabases;
  let a: TestServer;
  let b: TestServer;
  beforeAll(async () => {
    databases = await backendDatabases();
    a = await startTestServer({ databases, workers: 0 });
    b = await startTestServer({ databases, workers: 0 });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
    await databases?.drop();
  });

  it('a key revoked through one server ends the stream another server holds', async () => {
    const projectId = await a.createProject();
    const key = await a.createKey(projectId, 'read');
    const jobId = (await a.api('POST', `/v2/agent/${projectId}/job`, { key: await a.createKey(projectId), body: { prompt: 'Stay' } })).body.id;
    const stream = await openStream(b, projectId, jobId, { authorization: `Bearer ${key}` });
    try {
      await recordUntyped(a.services.jobs, jobId, 'test.before', {});
      await waitFor(() => stream.text().includes('event: test.before'));
      const [row] = (await a.services.keys.store.list(projectId)).filter((k) => key.startsWith(k.prefix));
      await a.services.keys.revoke(row.id);
      expect(await endsWithin(stream, 8000)).toBe(true);
      expect(stream.text()).toContain('"code":"revoked_api_key"');
    } finally {
      stream.abort();
    }
  });

  it('a key revoked through one process ends the stream a separate server process holds, and nothing written after it arrives', async () => {
    const dir = tempDir();
    // A real second process on the same database: nothing in memory is shared with this one.
    const child: Child = await startProcess('test/fixtures/serve-with-handler.ts', [], {
      ...databases.env,
      FOLIO_DATA_DIR: dir,
      PORT: '0',
      HOST: '127.0.0.1',
      LOG_LEVEL: 'warn',
      FOLIO_SECRET: a.env.FOLIO_SECRET,
      ANTHROPIC_API_KEY: 'x',
      TEST_MODE: 'api',
    });
    let stream: OpenStream | undefined;
    try {
      const projectId = await a.createProject();
      const key = await a.createKey(projectId, 'read');
      const jobId = (await a.api('POST', `/v2/agent/${projectId}/job`, { key: await a.createKey(projectId), body: { prompt: 'Stay' } })).body.id;
      stream = await openStream(child, projectId, jobId, { authorization: `Bearer ${key}` });
      const opened = Date.now();
      await recordUntyped(a.services.jobs, jobId, 'test.before', {});
      await waitFor(() => stream!.text().includes('event: test.before'));
      // Revoke halfway between two of the stream's periodic checks (every 2 s from its start) and
      // before its next read of the store (every second): only a check of each batch before it is
      // sent keeps the next event out.
      await new Promise((r) => setTimeout(r, Math.max(0, opened + 2_500 - Date.now())));
      const [row] = (await a.services.keys.store.list(projectId)).filter((k) => key.startsWith(k.prefix));
      await a.services.keys.revoke(row.id);
      const secret = `file contents written after the revocation ${Math.random()}`;
      await recordUntyped(a.services.jobs, jobId, 'test.after-revocation', { content: secret });
      expect(await endsWithin(stream, 8000)).toBe(true);
      expect(stream.text()).toContain('"code":"revoked_api_key"');
      expect(stream.text()).not.toContain(secret);
    } finally {
      stream?.abort();
      child.proc.kill('SIGTERM');
      await child.exited;
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
