// Several API and worker processes on one PostgreSQL database: every job runs exactly once, rate
// limits stay exact across processes, and a killed worker's job is resumed by another.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runCli, startProcess, type Child } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { eventually } from '../helpers/handlers.ts';
import { backendDatabases, isScale, NEEDS_POSTGRES, type BackendDatabases } from '../helpers/backend.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { createSecretBox } from '../../src/store/secret-box.ts';
import { TriggerStore } from '../../src/store/triggers.ts';
import { updateTriggerSettings } from '../../src/jobs/triggers/settings.ts';
import { startCodeHost } from '../fixtures/git-server.ts';
import { githubPullRequest, sendGitHub } from '../fixtures/code-host-sender.ts';

describe.skipIf(!isScale)(`several processes on PostgreSQL ${NEEDS_POSTGRES}`, () => {
  const children: Child[] = [];
  let dir: string;
  let databases: BackendDatabases;
  let env: Record<string, string>;
  let projectId: string;
  let key: string;
  let apis: Child[];

  const dirs: string[] = [];
  const start = async (mode: string, extra: Record<string, string> = {}) => {
    // Each process has its own data dir, as on separate machines: state is in PostgreSQL.
    const own = tempDir();
    dirs.push(own);
    const c = await startProcess('test/fixtures/serve-with-handler.ts', [], { ...env, FOLIO_DATA_DIR: own, TEST_MODE: mode, ...extra });
    children.push(c);
    return c;
  };
  const call = async (url: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(url + path, { method, headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) }, body: body ? JSON.stringify(body) : undefined });
    return { status: res.status, body: (await res.json()) as any };
  };

  beforeAll(async () => {
    dir = tempDir();
    databases = await backendDatabases();
    env = {
      ...databases.env,
      FOLIO_DATA_DIR: dir,
      // A made-up repository: not asked when the project is made.
      FOLIO_REPOSITORY_CHECK: 'false',
      PORT: '0',
      LOG_LEVEL: 'warn',
      ANTHROPIC_API_KEY: 'x',
      FOLIO_LEASE: '2s',
      FOLIO_HEARTBEAT: '300',
      FOLIO_POLL: '2s', // wake-ups must come from LISTEN/NOTIFY, not the poll
      FOLIO_RATE_LIMIT_CREATE: '0',
      FOLIO_WORKERS: '3',
      // Shared by every process, as in any multi-process deployment: sealed secrets open everywhere.
      FOLIO_SECRET: 'multiprocess-test-secret-0123456789',
    };
    const p = JSON.parse((await runCli(['project', 'create', '--name', 'M', '--repository', 'https://github.com/acme/docs', '--json'], env)).stdout);
    projectId = p.id;
    key = JSON.parse((await runCli(['key', 'create', '--project', projectId, '--json'], env)).stdout).key;
    apis = [await start('api'), await start('api')];
  });

  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    await Promise.all(children.map((c) => c.exited));
    await databases.drop();
    for (const d of [dir, ...dirs]) rmSync(d, { recursive: true, force: true });
  });

  it('200 jobs created across two APIs are each run exactly once by two worker processes', async () => {
    const workers = [await start('worker', { TEST_TURN_MS: '20' }), await start('worker', { TEST_TURN_MS: '20' })];
    const created = await Promise.all(Array.from({ length: 200 }, (_, i) => call(apis[i % 2].url, 'POST', `/v2/agent/${projectId}/job`, { prompt: `job ${i}` })));
    expect(created.every((r) => r.status === 201)).toBe(true);
    const ids = created.map((r) => r.body.id as string);
    await eventually(async () => {
      const page = await call(apis[0].url, 'GET', `/v2/agent/${projectId}/jobs?status=completed&limit=100`);
      const page2 = page.body.nextCursor ? await call(apis[0].url, 'GET', `/v2/agent/${projectId}/jobs?status=completed&limit=100&cursor=${page.body.nextCursor}`) : { body: { jobs: [] } };
      return page.body.jobs.length + page2.body.jobs.length === 200;
    }, 60_000, 200);
    const pids = new Map<number, number>();
    for (const id of ids) {
      const events = (await call(apis[1].url, 'GET', `/v2/agent/${projectId}/job/${id}/events`)).body.events;
      const turns = events.filter((e: any) => e.type === 'test.turn');
      expect(turns, id).toHaveLength(1);
      pids.set(turns[0].data.pid, (pids.get(turns[0].data.pid) ?? 0) + 1);
    }
    expect([...pids.keys()].sort()).toEqual(workers.map((w) => w.proc.pid).sort());
    for (const w of workers) w.proc.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
  });

  it('150 concurrent follow-ups split across both APIs: exactly 100 accepted', async () => {
    const job = (await call(apis[0].url, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'target' })).body;
    const results = await Promise.all(Array.from({ length: 150 }, (_, i) => call(apis[i % 2].url, 'POST', `/v2/agent/${projectId}/job/${job.id}/message`, { prompt: `m${i}` })));
    expect(results.filter((r) => r.status === 200)).toHaveLength(100);
    expect(results.filter((r) => r.status === 429)).toHaveLength(50);
    expect(results.filter((r) => r.status === 429).every((r) => r.body.code === 'rate_limited')).toBe(true);
    await call(apis[1].url, 'POST', `/v2/agent/${projectId}/job/${job.id}/archive`); // no worker runs it here
  });

  it('a SIGKILLed worker\'s job is resumed by the other worker', async () => {
    const a = await start('worker', { TEST_TURN_MS: '600000', FOLIO_WORKERS: '1' });
    const job = (await call(apis[0].url, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'long' })).body;
    await eventually(async () => {
      const events = (await call(apis[0].url, 'GET', `/v2/agent/${projectId}/job/${job.id}/events`)).body.events;
      return events.some((e: any) => e.type === 'test.turn' && e.data.pid === a.proc.pid);
    }, 20_000);
    const b = await start('worker', { TEST_TURN_MS: '20', FOLIO_WORKERS: '1' });
    a.proc.kill('SIGKILL');
    const done = await eventually(async () => {
      const j = (await call(apis[1].url, 'GET', `/v2/agent/${projectId}/job/${job.id}`)).body;
      return j.status !== 'active' ? j : null;
    }, 30_000);
    expect(done.status).toBe('completed');
    const turns = (await call(apis[0].url, 'GET', `/v2/agent/${projectId}/job/${job.id}/events`)).body.events.filter((e: any) => e.type === 'test.turn');
    expect(turns.map((t: any) => t.data.pid)).toEqual([a.proc.pid, b.proc.pid]);
    b.proc.kill('SIGTERM');
    await b.exited;
  });

  it('archiving through one API stops the run in a worker process at once (NOTIFY)', async () => {
    const w = await start('worker', { TEST_TURN_MS: '600000', FOLIO_WORKERS: '1', FOLIO_HEARTBEAT: '10s', FOLIO_LEASE: '60s' });
    const job = (await call(apis[0].url, 'POST', `/v2/agent/${projectId}/job`, { prompt: 'stop me' })).body;
    await eventually(async () => (await call(apis[0].url, 'GET', `/v2/agent/${projectId}/job/${job.id}/events`)).body.events.some((e: any) => e.type === 'test.turn'));
    await call(apis[1].url, 'POST', `/v2/agent/${projectId}/job/${job.id}/archive`);
    // With a 10 s heartbeat only the notification can stop it this soon.
    await eventually(async () => (await call(apis[0].url, 'GET', `/v2/agent/${projectId}/job/${job.id}/events`)).body.events.some((e: any) => e.type === 'run.stopped'), 5_000);
    w.proc.kill('SIGTERM');
    await w.exited;
  });

  it('the same webhook delivery, or the same change under two delivery ids, received by both APIs at once starts exactly one job', async () => {
    const host = await startCodeHost();
    const store = await openStore(loadConfig({ ...env, LOG_LEVEL: 'silent' }));
    try {
      host.createRepo('acme/api', { 'src/cli.ts': 'export {};\n' });
      const base = host.revParse('acme/api', 'main');
      const triggers = new TriggerStore(store.db, createSecretBox(env.FOLIO_SECRET));
      const secret = await triggers.rotateSecret(projectId);
      await updateTriggerSettings(triggers, projectId, { repositories: [{ host: 'github', repositoryUrl: `${host.origin}/acme/api`, events: ['merged'] }] });
      for (let n = 1; n <= 5; n++) {
        const head = host.commit('acme/api', `feature/${n}`, { [`src/f${n}.ts`]: `export const n = ${n};\n` }, `Change ${n}`);
        host.github.pulls.push({ number: n, owner: 'acme', repo: 'api', head: `feature/${n}`, base: 'main', title: `Change ${n}`, body: '', draft: false, state: 'closed' });
        const payload = githubPullRequest('closed', { repo: 'acme/api', number: n, title: `Change ${n}`, base: { ref: 'main', sha: base }, head: { ref: `feature/${n}`, sha: head } }, { merged: true });
        // Odd changes: one delivery sent twice; even ones: a replay under a new delivery id.
        const deliveryIdOf = (i: number) => (n % 2 ? `multi-${n}` : `multi-${n}-${i}`);
        const answers = await Promise.all(apis.map((api, i) => sendGitHub(`${api.url}/v1/triggers/${projectId}/github`, secret, 'pull_request', payload, { deliveryId: deliveryIdOf(i) })));
        expect(answers.map((a) => a.status).sort(), JSON.stringify(answers.map((a) => a.body))).toEqual([200, 201]);
        const started = answers.find((a) => a.status === 201)!.body;
        expect(answers.find((a) => a.status === 200)!.body).toMatchObject({ outcome: 'duplicate', jobId: started.jobId });
      }
      const triggered = await store.db.selectFrom('jobs').select(['id', 'trigger']).where('project_id', '=', projectId).where('trigger', 'is not', null).execute();
      expect(triggered).toHaveLength(5);
      expect(new Set(triggered.map((j) => JSON.parse(j.trigger!).url)).size).toBe(5);
      const acted = await store.db.selectFrom('trigger_deliveries').select(['outcome']).where('project_id', '=', projectId).execute();
      expect(acted.filter((d) => d.outcome === 'started')).toHaveLength(5);
      expect(acted.filter((d) => d.outcome === 'duplicate')).toHaveLength(5);
      for (const j of triggered) await call(apis[0].url, 'POST', `/v2/agent/${projectId}/job/${j.id}/archive`);
    } finally {
      await store.close();
      await host.close();
    }
  });
});
