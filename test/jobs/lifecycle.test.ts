// Each transition of a job writes its row, its event and its webhook outbox entry in one transaction:
// when the store refuses the event or the outbox entry (a real trigger on the table), the status
// does not change and nothing is announced; once the store takes them, all three are there.
import { afterEach, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import pino from 'pino';
import { sql } from 'kysely';
import { loadConfig } from '../../src/config.ts';
import { createServices, type Services } from '../../src/services.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';
import { tempDir } from '../helpers/server.ts';
import { backendDatabases, isScale, type BackendDatabases } from '../helpers/backend.ts';

let s: Services | undefined;
let dir: string | undefined;
let databases: BackendDatabases | undefined;
afterEach(async () => {
  await s?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  await databases?.drop();
  s = dir = databases = undefined;
});

async function setUp() {
  dir = tempDir();
  databases = await backendDatabases();
  const env = { ...databases.env, FOLIO_DATA_DIR: dir, FOLIO_SECRET: 'lifecycle-test-secret-123', ANTHROPIC_API_KEY: 'x', LOG_LEVEL: 'silent', FOLIO_LEASE: '1000', FOLIO_MAX_LOST_LEASES: '2' };
  s = await createServices(loadConfig(env), { jobHandler: new ScriptedHandler(), workers: 0, log: pino({ level: 'silent' }) });
  const projectId = (await s.projects.create({ name: 'L', repositoryUrl: 'https://github.com/acme/docs' })).id;
  // Written here rather than through the settings' outbound check: only the outbox entry matters.
  await s.store.db.updateTable('projects').set({ webhook_url: 'https://hooks.example.invalid/folio' }).where('id', '=', projectId).execute();
  const announced: string[] = [];
  s.jobs.onStatusChange((job) => announced.push(`${job.id}:${job.status}`));
  return { s, projectId, announced };
}

type Table = 'job_events' | 'webhook_outbox';

/** Makes the store refuse every insert into `table` until the returned function is called. */
async function refuseInserts(s: Services, table: Table): Promise<() => Promise<void>> {
  const { db } = s.store;
  if (isScale) {
    await sql.raw(`create or replace function folio_refuse() returns trigger as $$ begin raise exception 'refused by the test'; end $$ language plpgsql`).execute(db);
    await sql.raw(`create trigger folio_refuse before insert on ${table} for each row execute procedure folio_refuse()`).execute(db);
    return async () => void (await sql.raw(`drop trigger folio_refuse on ${table}`).execute(db));
  }
  await sql.raw(`create trigger folio_refuse before insert on ${table} begin select raise(abort, 'refused by the test'); end`).execute(db);
  return async () => void (await sql.raw('drop trigger folio_refuse').execute(db));
}

/** What a transition may change: the job's status and lease, its events, its outbox entries. */
async function stateOf(s: Services, jobId: string) {
  const { db } = s.store;
  const job = await db.selectFrom('jobs').select(['status', 'lease_owner', 'lost_leases', 'error_code']).where('id', '=', jobId).executeTakeFirstOrThrow();
  const events = (await db.selectFrom('job_events').select('type').where('job_id', '=', jobId).orderBy('seq').execute()).map((e) => e.type);
  const outbox = (await db.selectFrom('webhook_outbox').select('event').where('job_id', '=', jobId).orderBy('id').execute()).map((o) => o.event);
  return { ...job, events, outbox };
}

/**
 * Runs `transition` with `table` refused (it must fail and leave everything as it was, announcing
 * nothing), then again with the store taking it; returns the state after.
 */
async function atomically(ctx: { s: Services; announced: string[] }, jobId: string, tables: Table[], transition: () => Promise<unknown>) {
  for (const table of tables) {
    const before = await stateOf(ctx.s, jobId);
    const announced = ctx.announced.length;
    const allow = await refuseInserts(ctx.s, table);
    await expect(transition()).rejects.toThrow(/refused by the test/);
    await allow();
    expect(await stateOf(ctx.s, jobId)).toEqual(before);
    expect(ctx.announced.length).toBe(announced);
  }
  await transition();
  return stateOf(ctx.s, jobId);
}

const BOTH: Table[] = ['job_events', 'webhook_outbox'];

describe('job lifecycle: row, event and outbox entry commit together', () => {
  it('create, claim, complete, reopen by a follow-up, fail, archive', async () => {
    const ctx = await setUp();
    const { s, projectId } = ctx;
    // create: refused, no job is left behind at all.
    const allow = await refuseInserts(s, 'webhook_outbox');
    await expect(s.jobs.create(projectId, { prompt: 'first' })).rejects.toThrow(/refused by the test/);
    await allow();
    expect(await s.store.db.selectFrom('jobs').select('id').execute()).toEqual([]);
    const { job } = await s.jobs.create(projectId, { prompt: 'first' });
    expect(await stateOf(s, job.id)).toMatchObject({ status: 'active', events: ['job.created'], outbox: ['job.active'] });

    let claimed = await atomically(ctx, job.id, ['job_events'], () => s.queue.claim('w1'));
    expect(claimed).toMatchObject({ status: 'active', lease_owner: 'w1', events: ['job.created', 'run.started'] });

    const done = await atomically(ctx, job.id, BOTH, () => s.queue.finishTurn(job.id, 'w1', 1, { kind: 'completed', title: 't', summary: 's', prLink: null }));
    expect(done).toMatchObject({ status: 'completed', lease_owner: null, events: ['job.created', 'run.started', 'turn.completed'], outbox: ['job.active', 'job.completed'] });
    expect(ctx.announced).toEqual([`${job.id}:active`, `${job.id}:completed`]);

    const reopened = await atomically(ctx, job.id, BOTH, () => s.jobs.sendMessage(projectId, job.id, 'again'));
    expect(reopened).toMatchObject({ status: 'active', outbox: ['job.active', 'job.completed', 'job.active'] });
    expect(reopened.events.at(-1)).toBe('message.queued');

    claimed = await stateOf(s, job.id);
    await s.queue.claim('w2');
    const failed = await atomically(ctx, job.id, BOTH, () => s.queue.finishTurn(job.id, 'w2', 2, { kind: 'failed', code: 'model_error', message: 'no' }));
    expect(failed).toMatchObject({ status: 'failed', error_code: 'model_error', outbox: [...claimed.outbox, 'job.failed'] });
    expect(failed.events.at(-1)).toBe('error');

    const archived = await atomically(ctx, job.id, BOTH, () => s.jobs.archive(projectId, job.id));
    expect(archived).toMatchObject({ status: 'archived', outbox: [...failed.outbox, 'job.archived'] });
    expect(archived.events.at(-1)).toBe('job.archived');
    expect(ctx.announced.slice(-2)).toEqual([`${job.id}:failed`, `${job.id}:archived`]);
    // The run that was stopped by the archive records why, with no status change.
    const stopped = await atomically(ctx, job.id, ['job_events'], () => s.queue.stopped(job.id, 'archived'));
    expect(stopped).toMatchObject({ status: 'archived', outbox: archived.outbox });
    expect(stopped.events.at(-1)).toBe('run.stopped');
  });

  it('a job that loses its worker too often fails with worker_lost, its event and its outbox entry together', async () => {
    const ctx = await setUp();
    const { s, projectId } = ctx;
    const { job } = await s.jobs.create(projectId, { prompt: 'x' });
    const t0 = Date.now();
    expect((await s.queue.claim('dead-1', t0))?.id).toBe(job.id);
    expect((await s.queue.claim('dead-2', t0 + 2_000))?.lost_leases).toBe(1);
    // The second lost lease ends the job (FOLIO_MAX_LOST_LEASES=2); the claim then finds nothing.
    const lost = await atomically(ctx, job.id, BOTH, () => s.queue.claim('dead-3', t0 + 4_000));
    expect(lost).toMatchObject({ status: 'failed', error_code: 'worker_lost', lease_owner: null, outbox: ['job.active', 'job.failed'] });
    expect(lost.events.at(-1)).toBe('error');
    expect(ctx.announced.at(-1)).toBe(`${job.id}:failed`);
  });
});
