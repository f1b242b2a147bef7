// Process-level durability: data survives a restart, a SIGKILLed run is resumed, SIGTERM is graceful.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runCli, startProcess, type Child } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { eventually } from '../helpers/handlers.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';

const children: Child[] = [];
const dirs: string[] = [];
let databases: BackendDatabases | null = null;
afterEach(async () => {
  for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  await databases?.drop();
  databases = null;
});

function baseEnv(dataDir: string, extra: Record<string, string> = {}) {
  return { ...databases?.env, FOLIO_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'warn', ANTHROPIC_API_KEY: 'x', FOLIO_LEASE: '2s', FOLIO_HEARTBEAT: '300', FOLIO_POLL: '200', ...extra };
}

async function setup(dataDir: string) {
  databases = await backendDatabases();
  const env = { ...databases.env, FOLIO_DATA_DIR: dataDir };
  const p = JSON.parse((await runCli(['project', 'create', '--name', 'R', '--repository', 'https://github.com/acme/docs', '--json'], env)).stdout);
  const k = JSON.parse((await runCli(['key', 'create', '--project', p.id, '--json'], env)).stdout);
  return { projectId: p.id as string, key: k.key as string };
}

async function call(url: string, key: string, method: string, path: string, body?: unknown) {
  const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
  return { status: res.status, body: (await res.json()) as any };
}

async function start(dataDir: string, extra: Record<string, string> = {}) {
  const c = await startProcess('test/fixtures/serve-with-handler.ts', [], baseEnv(dataDir, extra));
  children.push(c);
  return c;
}

describe('restarts', () => {
  it('keeps projects, keys and jobs across a restart', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { projectId, key } = await setup(dir);
    const a = await start(dir);
    const created = await call(a.url, key, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'persist me' });
    await eventually(async () => (await call(a.url, key, 'GET', `/v2/agent/${projectId}/job/${created.body.id}`)).body.status === 'completed');
    a.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    const b = await start(dir);
    const got = await call(b.url, key, 'GET', `/v2/agent/${projectId}/job/${created.body.id}`);
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ id: created.body.id, status: 'completed' });
  });

  it('a job whose process is SIGKILLed mid-run is resumed after restart, not left active', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { projectId, key } = await setup(dir);
    const a = await start(dir, { TEST_TURN_MS: '60000' });
    const created = await call(a.url, key, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'long' });
    const id = created.body.id;
    await eventually(async () => {
      const ev = await call(a.url, key, 'GET', `/v2/agent/${projectId}/job/${id}/events`);
      return ev.body.events.some((e: any) => e.type === 'test.turn');
    });
    a.proc.kill('SIGKILL');
    await a.exited;
    // b takes the job once a's 2 s lease lapses; its own lease is long, so a heartbeat delayed on a
    // loaded machine cannot make it lose the job and start it a third time.
    const b = await start(dir, { TEST_TURN_MS: '50', FOLIO_LEASE: '10m' });
    const done = await eventually(async () => {
      const j = await call(b.url, key, 'GET', `/v2/agent/${projectId}/job/${id}`);
      return j.body.status !== 'active' ? j.body : null;
    }, 20_000);
    expect(done.status).toBe('completed');
    const events = (await call(b.url, key, 'GET', `/v2/agent/${projectId}/job/${id}/events`)).body.events;
    const starts = events.filter((e: any) => e.type === 'run.started');
    expect(starts).toHaveLength(2);
    expect(starts[1].data.resumed).toBe(true);
  });

  it('SIGTERM lets in-flight requests finish and releases leases', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { projectId, key } = await setup(dir);
    const a = await start(dir, { TEST_TURN_MS: '60000' });
    const { body } = await call(a.url, key, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'long' });
    await eventually(async () => (await call(a.url, key, 'GET', `/v2/agent/${projectId}/job/${body.id}/events`)).body.events.some((e: any) => e.type === 'test.turn'));
    a.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    // The lease was released, so a new process resumes at once rather than after the lease expires.
    const b = await start(dir, { TEST_TURN_MS: '50', FOLIO_LEASE: '10m' });
    await eventually(async () => (await call(b.url, key, 'GET', `/v2/agent/${projectId}/job/${body.id}`)).body.status === 'completed', 10_000);
  });
});

describe('graceful shutdown with live event streams', () => {
  it('SIGTERM ends open SSE streams and exits', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const { projectId, key } = await setup(dir);
    const a = await start(dir);
    const { body } = await call(a.url, key, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'x' });
    const res = await fetch(`${a.url}/v2/agent/${projectId}/job/${body.id}/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } });
    const reader = res.body!.getReader();
    await reader.read(); // the stream is open
    a.proc.kill('SIGTERM');
    expect(await a.exited).toBe(0);
    let done = false;
    while (!done) done = (await reader.read().catch(() => ({ done: true }))).done;
  });
});
