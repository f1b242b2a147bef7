// The durable queue and workers on real SQLite: exclusive claims, ordered follow-ups, leases.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import pino from 'pino';
import { loadConfig } from '../../src/config.ts';
import { createServices, type Services } from '../../src/services.ts';
import { ScriptedHandler, eventually, gatedScript } from '../helpers/handlers.ts';
import { JobFailure } from '../../src/jobs/handler.ts';
import { tempDir } from '../helpers/server.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';

const open: Services[] = [];
const dirs: string[] = [];
/** One set of backend databases per data dir: services sharing a dir share the store. */
const databases = new Map<string, BackendDatabases>();
afterEach(async () => {
  for (const s of open.splice(0)) await s.close();
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  for (const db of databases.values()) await db.drop();
  databases.clear();
});

async function env(dataDir: string, extra: Record<string, string> = {}) {
  if (!databases.has(dataDir)) databases.set(dataDir, await backendDatabases());
  return { ...databases.get(dataDir)!.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'queue-test-secret-123456', ANTHROPIC_API_KEY: 'x', LOG_LEVEL: 'silent', FOLIO_POLL: '50', FOLIO_RATE_LIMIT_CREATE: '0', FOLIO_RATE_LIMIT_FOLLOW_UP: '0', ...extra };
}

async function services(dataDir: string, handler: ScriptedHandler, workers: number, extra: Record<string, string> = {}) {
  const s = await createServices(loadConfig(await env(dataDir, extra)), { jobHandler: handler, workers, log: pino({ level: 'silent' }) });
  open.push(s);
  return s;
}

async function project(s: Services) {
  return (await s.projects.create({ name: 'Q', repositoryUrl: 'https://github.com/acme/docs' })).id;
}

const statusOf = async (s: Services, projectId: string, id: string) => (await s.jobs.get(projectId, id)).status;

describe('queue and workers', () => {
  // Several processes on one SQLite file are covered by the restart tests and, on PostgreSQL, by the
  // multi-process suite; in one thread a second SQLite connection would only wait on the first.
  it('runs each of many jobs exactly once across six workers, never two at once', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const handler = new ScriptedHandler({ delayMs: 2 });
    const s = await services(dir, handler, 6);
    const p = await project(s);
    const ids: string[] = [];
    for (let i = 0; i < 60; i++) ids.push((await s.jobs.create(p, { prompt: `job ${i}` })).job.id);
    // Follow-ups while they run must not start a second run of the same job.
    for (const id of ids.slice(0, 20)) await s.jobs.sendMessage(p, id, 'and more');
    await eventually(async () => {
      for (const id of ids) if ((await statusOf(s, p, id)) !== 'completed') return false;
      return true;
    }, 30_000);
    expect(handler.turns).toHaveLength(80);
    expect(new Set(handler.turns.map((t) => t.jobId)).size).toBe(60);
    expect(Math.max(...handler.maxConcurrentPerJob.values())).toBe(1);
  });

  it('handles follow-ups queued while a job runs, all in order, before the job leaves active', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const gate = gatedScript();
    const handler = new ScriptedHandler();
    let first = true;
    handler.script = async (ctx) => {
      if (first) {
        first = false;
        return gate.script(ctx);
      }
      return { title: 't', summary: `done ${ctx.message.seq}`, prLink: null };
    };
    const s = await services(dir, handler, 2);
    const p = await project(s);
    const { job } = await s.jobs.create(p, { prompt: 'm1' });
    await gate.started;
    for (let i = 2; i <= 6; i++) await s.jobs.sendMessage(p, job.id, `m${i}`);
    expect(await statusOf(s, p, job.id)).toBe('active');
    gate.open();
    await eventually(async () => (await statusOf(s, p, job.id)) === 'completed');
    expect(handler.turns.map((t) => t.prompt)).toEqual(['m1', 'm2', 'm3', 'm4', 'm5', 'm6']);
    expect(handler.maxConcurrentPerJob.get(job.id)).toBe(1);
    const msgs = await s.jobs.messages(p, job.id);
    expect(msgs.every((m) => m.handledAt !== null && m.outcome === 'completed')).toBe(true);
  });

  it('reclaims an expired lease, and fails the job with worker_lost after 3 lost leases', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const s = await services(dir, new ScriptedHandler(), 0, { FOLIO_LEASE: '1000' });
    const p = await project(s);
    const { job } = await s.jobs.create(p, { prompt: 'x' });
    const t0 = Date.now();
    const c1 = await s.queue.claim('dead-worker-1', t0);
    expect(c1?.id).toBe(job.id);
    expect(await s.queue.claim('other', t0 + 10)).toBeUndefined(); // held
    const c2 = await s.queue.claim('dead-worker-2', t0 + 2_000); // lease expired: reclaimed
    expect(c2?.lost_leases).toBe(1);
    const c3 = await s.queue.claim('dead-worker-3', t0 + 4_000);
    expect(c3?.lost_leases).toBe(2);
    expect(await s.queue.claim('dead-worker-4', t0 + 6_000)).toBeUndefined();
    const failed = await s.jobs.get(p, job.id);
    expect(failed.status).toBe('failed');
    expect(failed.error?.code).toBe('worker_lost');
  });

  it('heartbeats stop a run whose job was archived by another process', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const gate = gatedScript();
    const handler = new ScriptedHandler({ script: gate.script });
    const worker = await services(dir, handler, 1, { FOLIO_HEARTBEAT: '100' });
    const p = await project(worker);
    const { job } = await worker.jobs.create(p, { prompt: 'x' });
    await gate.started;
    // What another process's archive leaves in the store, without this process's in-memory signal.
    await worker.store.db.updateTable('jobs').set({ status: 'archived', archived_at: Date.now() }).where('id', '=', job.id).execute();
    await eventually(async () => worker.workers!.activeRuns === 0, 10_000);
    expect((await worker.jobs.get(p, job.id)).status).toBe('archived');
    const events = await worker.store.db.selectFrom('job_events').select('type').where('job_id', '=', job.id).execute();
    expect(events.map((e) => e.type)).toContain('run.stopped');
  });

  it('graceful shutdown releases the lease so the job resumes at once elsewhere', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const gate = gatedScript();
    const first = await services(dir, new ScriptedHandler({ script: gate.script }), 1);
    const p = await project(first);
    const { job } = await first.jobs.create(p, { prompt: 'x' });
    await gate.started;
    await first.close();
    open.splice(open.indexOf(first), 1);
    const inspect = await services(dir, new ScriptedHandler(), 0);
    const row = await inspect.store.db.selectFrom('jobs').selectAll().where('id', '=', job.id).executeTakeFirstOrThrow();
    expect(row.lease_owner).toBeNull();
    expect(row.status).toBe('active');
    await inspect.close();
    open.splice(open.indexOf(inspect), 1);
    const second = await services(dir, new ScriptedHandler(), 1);
    await eventually(async () => (await statusOf(second, p, job.id)) === 'completed');
  });

  it('a failed turn does not drop follow-ups queued meanwhile: they run, and the last turn decides', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const gate = gatedScript();
    const handler = new ScriptedHandler();
    handler.script = async (ctx) => {
      if (ctx.message.seq === 1) {
        await gate.script(ctx);
        throw new JobFailure('model_error', 'provider said no');
      }
      return { title: 't', summary: `done ${ctx.message.seq}`, prLink: null };
    };
    const s = await services(dir, handler, 1);
    const p = await project(s);
    const { job } = await s.jobs.create(p, { prompt: 'first' });
    await gate.started;
    await s.jobs.sendMessage(p, job.id, 'second');
    gate.open();
    await eventually(async () => (await statusOf(s, p, job.id)) === 'completed');
    const msgs = await s.jobs.messages(p, job.id);
    expect(msgs.map((m) => m.outcome)).toEqual(['failed', 'completed']);
    const events = await s.store.db.selectFrom('job_events').select(['type', 'data']).where('job_id', '=', job.id).execute();
    expect(events.some((e) => e.type === 'error' && JSON.parse(e.data).code === 'model_error')).toBe(true);
  });

  it('follow-ups racing the end of a turn are never left unhandled', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const s = await services(dir, new ScriptedHandler({ delayMs: 1 }), 2);
    const p = await project(s);
    const ids: string[] = [];
    for (let i = 0; i < 10; i++) ids.push((await s.jobs.create(p, { prompt: 'x' })).job.id);
    await Promise.all(ids.flatMap((id) => Array.from({ length: 5 }, (_, i) => s.jobs.sendMessage(p, id, `f${i}`))));
    await eventually(async () => {
      for (const id of ids) if ((await statusOf(s, p, id)) !== 'completed') return false;
      return true;
    }, 30_000);
    const unhandled = await s.store.db.selectFrom('job_messages').select('seq').where('job_id', 'in', ids).where('handled_at', 'is', null).execute();
    expect(unhandled).toHaveLength(0);
  });

  it('archive racing follow-ups: archived stays final and no accepted message is left open', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const s = await services(dir, new ScriptedHandler({ delayMs: 20 }), 1);
    const p = await project(s);
    const { job } = await s.jobs.create(p, { prompt: 'x' });
    const results = await Promise.allSettled([
      ...Array.from({ length: 10 }, (_, i) => s.jobs.sendMessage(p, job.id, `m${i}`)),
      s.jobs.archive(p, job.id),
      ...Array.from({ length: 10 }, (_, i) => s.jobs.sendMessage(p, job.id, `n${i}`)),
    ]);
    for (const r of results) if (r.status === 'rejected') expect((r.reason as { code?: string }).code).toBe('job_archived');
    await eventually(async () => s.workers!.activeRuns === 0);
    const final = await s.jobs.get(p, job.id);
    expect(final.status).toBe('archived');
    const open = await s.store.db.selectFrom('job_messages').select('seq').where('job_id', '=', job.id).where('handled_at', 'is', null).execute();
    expect(open).toHaveLength(0);
  });
});
