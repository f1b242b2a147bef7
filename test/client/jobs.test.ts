// FolioClient against a real Folio server: every job method, a job's changes and the project's usage,
// pagination, events (paged, live, resumed after a dropped connection), waitForJob, retries after
// network errors and 5xx answers.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FolioClient, FolioError, type Job } from '../../src/client/index.ts';

/** The scripted handler records `step` events, a type Folio does not declare: read them untyped. */
type SeenEvent = { id: number; type: string; data: unknown };
const stepOf = (e: SeenEvent) => (e.data as { n?: number }).n;
import { COMPLETED_CHANGES, COMPLETED_CHECKS, PR_LINK, ScriptedHandler } from './fixtures/handler.ts';
import { startProxy, type Proxy } from './fixtures/proxy.ts';

let server: TestServer;
let handler: ScriptedHandler;
let projectId: string;
let key: string;
let client: FolioClient;

/** Polls `check` until it returns true (the test's own deadline is the vitest timeout). */
async function until(check: () => boolean | Promise<boolean>, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

/** A fetch that records each request's method, URL and headers, then really sends it. */
function recordingFetch(log: { method: string; url: string; headers: Record<string, string> }[]): typeof fetch {
  return async (input, init) => {
    const headers: Record<string, string> = {};
    new Headers(init?.headers).forEach((value, name) => (headers[name] = value));
    log.push({ method: init?.method ?? 'GET', url: String(input), headers });
    return fetch(input, init);
  };
}

beforeAll(async () => {
  handler = new ScriptedHandler();
  server = await startTestServer({ jobHandler: handler });
  projectId = await server.createProject();
  key = await server.createKey(projectId, 'write');
  client = new FolioClient({ baseUrl: server.url, apiKey: key, projectId });
});

afterAll(async () => {
  await server?.close();
});

describe('job methods', () => {
  it('creates a job, gets it and waits until it completes with the pull request', async () => {
    const created = await client.createJob({ prompt: 'complete: document --dry-run' });
    expect(created.id).toMatch(/^job_/);
    expect(created.status).toBe('active');
    expect(created.source.repository).toBe('https://github.com/acme/docs');
    expect(created.prLink).toBeNull();

    const updates: Job[] = [];
    const done = await client.waitForJob(created.id, { intervalMs: 100, onUpdate: (j) => updates.push(j) });
    expect(done.status).toBe('completed');
    expect(done.prLink).toBe(PR_LINK);
    expect(updates.at(-1)).toEqual(done);
    expect(updates.length).toBeGreaterThanOrEqual(1);

    const got = await client.getJob(created.id);
    expect(got).toEqual(done);
  });

  it('accepts a plain string prompt and a model, and a per-call projectId', async () => {
    const other = new FolioClient({ baseUrl: server.url, apiKey: key });
    const job = await other.createJob('complete: plain string', { projectId });
    expect((await other.getJob(job.id, { projectId })).id).toBe(job.id);
    await expect(other.getJob(job.id)).rejects.toMatchObject({ name: 'FolioError', code: 'missing_project', status: 0 });

    const err = await client.createJob({ prompt: 'complete', model: 'nobody/no-such-model' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(FolioError);
    expect(err).toMatchObject({ status: 400, code: 'model_not_allowed' });
    expect((err as FolioError).details?.[0]).toMatchObject({ path: '/body/model' });
  });

  it('reports a failed job with its error', async () => {
    const job = await client.createJob('fail: this one');
    const done = await client.waitForJob(job.id, { intervalMs: 100 });
    expect(done.status).toBe('failed');
    expect(done.error).toEqual({ code: 'model_error', message: 'The model gave up on this prompt.' });
  });

  it('sends a follow-up that reopens the job, and archives it', async () => {
    const job = await client.createJob('complete: first');
    await client.waitForJob(job.id, { intervalMs: 100 });
    const reopened = await client.sendMessage(job.id, 'hold: second turn');
    expect(reopened.status).toBe('active');
    await handler.whenHeld(job.id);
    const archived = await client.archiveJob(job.id);
    expect(archived.status).toBe('archived');
    expect(archived.archivedAt).not.toBeNull();
    // Archiving again is harmless; a message to an archived job is a 409.
    expect((await client.archiveJob(job.id)).status).toBe('archived');
    await expect(client.sendMessage(job.id, 'more')).rejects.toMatchObject({ status: 409, code: 'job_archived' });
    expect((await client.waitForJob(job.id)).status).toBe('archived');
  });

  it('turns error bodies into FolioError with status, code, message and request id', async () => {
    const err = (await client.getJob('job_00000000000000000000000000').catch((e: unknown) => e)) as FolioError;
    expect(err).toBeInstanceOf(FolioError);
    expect(err.status).toBe(404);
    expect(err.code).toBe('job_not_found');
    expect(err.message).toContain('does not exist');
    expect(err.requestId).toBeTruthy();

    const bad = new FolioClient({ baseUrl: server.url, apiKey: 'folio_wrong', projectId });
    await expect(bad.getJob('job_x')).rejects.toMatchObject({ status: 401 });

    await expect(client.sendMessage('job_x', '')).rejects.toMatchObject({ status: 400 });
  });

  it('sends an Idempotency-Key on every POST, and a caller-given key replays the first job', async () => {
    const log: { method: string; url: string; headers: Record<string, string> }[] = [];
    const c = new FolioClient({ baseUrl: server.url, apiKey: key, projectId, fetch: recordingFetch(log) });
    const a = await c.createJob('complete: idem a');
    const b = await c.createJob('complete: idem a');
    expect(a.id).not.toBe(b.id);
    const keys = log.filter((r) => r.method === 'POST').map((r) => r.headers['idempotency-key']);
    expect(keys).toHaveLength(2);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[0]).not.toBe(keys[1]);

    const first = await c.createJob('complete: fixed key', { idempotencyKey: 'ci-run-42' });
    const again = await c.createJob('complete: fixed key', { idempotencyKey: 'ci-run-42' });
    expect(again.id).toBe(first.id);
    await expect(c.createJob('complete: other body', { idempotencyKey: 'ci-run-42' })).rejects.toMatchObject({
      status: 422,
      code: 'idempotency_key_reused',
    });

    log.length = 0;
    await c.createJob('complete: no key', { idempotencyKey: false });
    expect(log[0].headers['idempotency-key']).toBeUndefined();
  });

  it('lists jobs newest first across pages, by status', async () => {
    const p = await server.createProject({ name: 'List' });
    const c = new FolioClient({ baseUrl: server.url, apiKey: await server.createKey(p), projectId: p });
    const made: string[] = [];
    for (let i = 0; i < 5; i++) made.push((await c.createJob(`fail: list ${i}`)).id);
    for (const id of made) await c.waitForJob(id, { intervalMs: 100 });

    const pages = [];
    for await (const page of c.listJobs({ limit: 2 }).pages()) pages.push(page);
    expect(pages.map((pg) => pg.jobs.length)).toEqual([2, 2, 1]);
    expect(pages.map((pg) => pg.hasMore)).toEqual([true, true, false]);

    const ids: string[] = [];
    for await (const job of c.listJobs({ limit: 2 })) ids.push(job.id);
    expect(ids).toEqual([...made].reverse());

    const failed: string[] = [];
    for await (const job of c.listJobs({ status: 'failed', limit: 100 })) failed.push(job.id);
    expect(failed.sort()).toEqual([...made].sort());
    const none: Job[] = [];
    for await (const job of c.listJobs({ status: 'active' })) none.push(job);
    expect(none).toEqual([]);

    const one = await c.listJobsPage({ limit: 1 });
    expect(one.jobs[0].id).toBe(made[4]);
    expect(one.nextCursor).toBeTruthy();
  });
});

describe("a job's changes and the project's usage", () => {
  // A project of its own, so its usage is only what these jobs used.
  let own: FolioClient;
  beforeAll(async () => {
    const id = await server.createProject();
    own = new FolioClient({ baseUrl: server.url, apiKey: await server.createKey(id, 'write'), projectId: id });
  });

  it('getJobChanges returns the branch diff, its files and the checks report; nothing yet while the first turn runs', async () => {
    const held = await own.createJob('hold: not done yet');
    await handler.whenHeld(held.id);
    expect(await own.getJobChanges(held.id)).toEqual({ baseSha: null, headSha: null, files: [], diff: '', diffTruncated: false, checks: null, updatedAt: null });
    await handler.finish(held.id);

    const job = await own.waitForJob((await own.createJob('complete: a new guide')).id, { intervalMs: 100 });
    const changes = await own.getJobChanges(job.id);
    const { baseSha, headSha, files, diff } = COMPLETED_CHANGES;
    expect(changes).toEqual({ baseSha, headSha, files, diff, diffTruncated: false, checks: COMPLETED_CHECKS, updatedAt: expect.any(String) });
    // The same files as on the job; stored while the turn ran.
    expect(changes.files).toEqual(job.files);
    expect(Date.parse(changes.updatedAt!)).toBeGreaterThanOrEqual(Date.parse(job.createdAt));
    expect(Date.parse(changes.updatedAt!)).toBeLessThanOrEqual(Date.parse(job.updatedAt));

    await expect(own.getJobChanges('job_00000000000000000000000000')).rejects.toMatchObject({ name: 'FolioError', status: 404, code: 'job_not_found' });
  });

  it("usage sums each job's tokens per day and per job (most tokens first) and prices them", async () => {
    const before = await own.usage();
    const twice = await own.waitForJob((await own.createJob('complete: first turn')).id, { intervalMs: 100 });
    await own.sendMessage(twice.id, 'complete: second turn');
    const done = await own.waitForJob(twice.id, { intervalMs: 100 });
    expect(done.usage).toEqual({ inputTokens: 2000, outputTokens: 400, totalTokens: 2400, estimatedCostUsd: 0.012 });

    // The default model (anthropic/claude-sonnet-4-5) costs $3 / $15 per million input / output tokens.
    const figures = (turns: number) => ({ inputTokens: 1000 * turns, outputTokens: 200 * turns, totalTokens: 1200 * turns, estimatedCostUsd: (6000 * turns) / 1e6, unpricedTokens: 0 });
    const usage = await own.usage({ days: 7 });
    // The job of the test before (one turn) and this one (two turns); the held job used nothing.
    expect(before.jobs).toHaveLength(1);
    const earlier = before.jobs[0];
    expect(usage).toEqual({
      days: [{ date: new Date().toISOString().slice(0, 10), jobs: 2, ...figures(3) }],
      jobs: [
        { id: done.id, title: done.title, status: 'completed', model: done.model, createdAt: done.createdAt, ...figures(2) },
        { ...earlier, ...figures(1) },
      ],
      totals: figures(3),
      // This month against the project's budgets (none set).
      month: { from: expect.stringMatching(/^\d{4}-\d{2}-01$/), resetsOn: expect.stringMatching(/^\d{4}-\d{2}-01$/), costUsd: 0.018, totalTokens: 3600, budgetUsd: null, tokenBudget: null },
    });
    expect(earlier).toMatchObject({ status: 'completed', model: 'anthropic/claude-sonnet-4-5', ...figures(1) });
    // `days` is checked by the server: the client passes its answer on as a FolioError.
    await expect(own.usage({ days: 0 })).rejects.toMatchObject({ name: 'FolioError', status: 400, code: 'invalid_request' });
  });
});

describe('job events', () => {
  it('pages through every event recorded so far', async () => {
    const job = await client.createJob('hold: paged events');
    for (let n = 1; n <= 7; n++) await handler.emit(job.id, 'step', { n });
    const events: SeenEvent[] = [];
    for await (const e of client.jobEvents(job.id)) events.push(e);
    const steps = events.filter((e) => e.type === 'step').map((e) => stepOf(e));
    expect(steps).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
    expect(events[0].type).toBe('job.created');
    const ids = events.map((e) => e.id);
    expect(ids).toEqual([...ids].sort((a, b) => a - b));

    const later: SeenEvent[] = [];
    for await (const e of client.jobEvents(job.id, { after: ids[3] })) later.push(e);
    expect(later.map((e) => e.id)).toEqual(ids.slice(4));

    const page = await client.jobEventsPage(job.id, { after: 0, limit: 2 });
    expect(page.events).toHaveLength(2);
    expect(page.hasMore).toBe(true);
    expect(page.nextAfter).toBe(page.events[1].id);
    await client.archiveJob(job.id);
  });

  it('follows live events over SSE and ends when the job completes', async () => {
    const job = await client.createJob('hold: live events');
    await handler.whenHeld(job.id);
    const seen: SeenEvent[] = [];
    const follow = (async () => {
      for await (const e of client.jobEvents(job.id, { follow: true, statusIntervalMs: 300 })) seen.push(e);
    })();
    await until(() => seen.some((e) => e.type === 'step'), 'the first step');
    await handler.emit(job.id, 'step', { n: 1 });
    await until(() => seen.some((e) => stepOf(e) === 1), 'a live event');
    await handler.finish(job.id);
    await follow; // ends by itself once the job has left `active`
    expect(seen.map((e) => e.type)).toContain('turn.completed');
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    expect((await client.getJob(job.id)).status).toBe('completed');
  });

  it('replays a finished job\'s events and ends when following a job that is already done', async () => {
    const job = await client.createJob('complete: already done');
    await client.waitForJob(job.id, { intervalMs: 100 });
    const events: SeenEvent[] = [];
    for await (const e of client.jobEvents(job.id, { follow: true })) events.push(e);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(['job.created', 'step', 'turn.completed']));
  });

  it('resumes after a dropped connection with Last-Event-ID, losing and repeating nothing', async () => {
    const proxy = await startProxy(server.url);
    try {
      const c = new FolioClient({ baseUrl: proxy.url, apiKey: key, projectId, retryBaseMs: 50 });
      const job = await c.createJob('hold: resumable');
      await handler.whenHeld(job.id);
      const seen: SeenEvent[] = [];
      const follow = (async () => {
        for await (const e of c.jobEvents(job.id, { follow: true, statusIntervalMs: 300 })) seen.push(e);
      })();
      for (let n = 1; n <= 3; n++) await handler.emit(job.id, 'step', { n });
      await until(() => seen.some((e) => stepOf(e) === 3), 'events before the cut');
      const lastBeforeCut = seen.at(-1)!.id;

      proxy.cutAll();
      for (let n = 4; n <= 6; n++) await handler.emit(job.id, 'step', { n });
      await until(() => seen.some((e) => stepOf(e) === 6), 'events after the cut');
      await handler.finish(job.id);
      await follow;

      expect(seen.filter((e) => e.type === 'step').map((e) => stepOf(e))).toEqual([0, 1, 2, 3, 4, 5, 6]);
      const ids = seen.map((e) => e.id);
      expect(ids).toEqual([...new Set(ids)].sort((a, b) => a - b));
      const streams = proxy.heads.filter((h) => /accept: text\/event-stream/i.test(h));
      expect(streams.length).toBeGreaterThanOrEqual(2);
      const resumed = streams.find((h) => new RegExp(`last-event-id: ${lastBeforeCut}\\b`, 'i').test(h));
      expect(resumed, `a reconnect with Last-Event-ID ${lastBeforeCut}`).toBeDefined();
    } finally {
      await proxy.close();
    }
  });

  it('treats a stream that goes quiet as dropped and resumes it without repeating events', async () => {
    const streams: number[] = [];
    const c = new FolioClient({
      baseUrl: server.url,
      apiKey: key,
      projectId,
      onResponse: (r) => {
        if (r.url.includes('/events')) streams.push(r.status);
      },
    });
    const job = await c.createJob('hold: quiet stream');
    await handler.whenHeld(job.id);
    const controller = new AbortController();
    const seen: SeenEvent[] = [];
    const follow = (async () => {
      // Folio's keepalive comes every 15 s, so 200 ms of silence trips the watchdog.
      for await (const e of c.jobEvents(job.id, { follow: true, untilDone: false, idleTimeoutMs: 200, signal: controller.signal })) {
        seen.push(e);
        if (stepOf(e) === 1) controller.abort();
      }
    })();
    await until(() => streams.length >= 2, 'a new connection after the idle timeout');
    await handler.emit(job.id, 'step', { n: 1 });
    await expect(follow).rejects.toMatchObject({ name: 'AbortError' });
    expect(streams.every((s) => s === 200)).toBe(true);
    expect(seen.filter((e) => e.type === 'step').map((e) => stepOf(e))).toEqual([0, 1]);
    const ids = seen.map((e) => e.id);
    expect(new Set(ids).size).toBe(ids.length);
    await c.archiveJob(job.id);
  });

  it('streams until aborted when untilDone is false', async () => {
    const job = await client.createJob('hold: endless');
    await handler.whenHeld(job.id);
    const controller = new AbortController();
    const seen: SeenEvent[] = [];
    const follow = (async () => {
      for await (const e of client.jobEvents(job.id, { follow: true, untilDone: false, signal: controller.signal })) {
        seen.push(e);
        if (stepOf(e) === 2) controller.abort();
      }
    })();
    await handler.emit(job.id, 'step', { n: 1 });
    await handler.emit(job.id, 'step', { n: 2 });
    await expect(follow).rejects.toMatchObject({ name: 'AbortError' });
    expect(seen.filter((e) => e.type === 'step').map((e) => stepOf(e))).toEqual([0, 1, 2]);
    await client.archiveJob(job.id);
  });
});

describe('waitForJob limits', () => {
  it('times out with a FolioError while the job stays active', async () => {
    const job = await client.createJob('hold: never finishes in time');
    const err = (await client.waitForJob(job.id, { timeoutMs: 800, intervalMs: 100 }).catch((e: unknown) => e)) as FolioError;
    expect(err).toBeInstanceOf(FolioError);
    expect(err.code).toBe('timeout');
    expect(err.message).toContain('still active');
    await client.archiveJob(job.id);
  });

  it('stops at once when its signal aborts', async () => {
    const job = await client.createJob('hold: abort the wait');
    const controller = new AbortController();
    let updates = 0;
    const waiting = client.waitForJob(job.id, {
      signal: controller.signal,
      intervalMs: 100,
      onUpdate: () => {
        updates++;
        controller.abort();
      },
    });
    await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    expect(updates).toBe(1);
    const already = AbortSignal.abort();
    await expect(client.waitForJob(job.id, { signal: already })).rejects.toMatchObject({ name: 'AbortError' });
    await client.archiveJob(job.id);
  });
});

describe('retries', () => {
  let proxy: Proxy;
  beforeAll(async () => {
    proxy = await startProxy(server.url);
  });
  afterAll(async () => {
    await proxy.close();
  });

  it('retries a GET after network errors and succeeds', async () => {
    const statuses: number[] = [];
    const c = new FolioClient({ baseUrl: proxy.url, apiKey: key, projectId, retryBaseMs: 20, onResponse: (r) => statuses.push(r.status) });
    const job = await client.createJob('complete: retry get');
    proxy.dropNext(2);
    expect((await c.getJob(job.id)).id).toBe(job.id);
    expect(statuses).toEqual([200]);
  });

  it('retries a POST on 503 reusing one Idempotency-Key, so the job is created once', async () => {
    const log: { method: string; url: string; headers: Record<string, string> }[] = [];
    const statuses: number[] = [];
    const c = new FolioClient({
      baseUrl: proxy.url,
      apiKey: key,
      projectId,
      retryBaseMs: 20,
      fetch: recordingFetch(log),
      onResponse: (r) => statuses.push(r.status),
    });
    proxy.answerNext(2, 503, { error: 'Not ready.', code: 'not_ready' }, { 'retry-after': '0' });
    const job = await c.createJob('complete: retry post');
    expect(job.status).toBe('active');
    expect(statuses).toEqual([503, 503, 201]);
    const keys = new Set(log.map((r) => r.headers['idempotency-key']));
    expect(keys.size).toBe(1);
  });

  it('gives up after `retries` and throws the last error', async () => {
    const statuses: number[] = [];
    const c = new FolioClient({ baseUrl: proxy.url, apiKey: key, projectId, retries: 2, retryBaseMs: 20, onResponse: (r) => statuses.push(r.status) });
    proxy.answerNext(3, 502, { error: 'Bad gateway.' });
    await expect(c.getJob('job_x')).rejects.toMatchObject({ status: 502, code: 'http_502', message: 'Bad gateway.' });
    expect(statuses).toEqual([502, 502, 502]);
  });

  it('does not retry a POST sent without an Idempotency-Key', async () => {
    const statuses: number[] = [];
    const c = new FolioClient({ baseUrl: proxy.url, apiKey: key, projectId, retryBaseMs: 20, onResponse: (r) => statuses.push(r.status) });
    proxy.answerNext(1, 503, { error: 'Not ready.', code: 'not_ready' });
    await expect(c.createJob('complete: unsafe', { idempotencyKey: false })).rejects.toMatchObject({ status: 503, code: 'not_ready' });
    expect(statuses).toEqual([503]);
  });

  it('reports a network error when the server cannot be reached', async () => {
    const closed = await startProxy(server.url);
    const url = closed.url;
    await closed.close();
    const c = new FolioClient({ baseUrl: url, apiKey: key, projectId, retries: 1, retryBaseMs: 20 });
    const err = (await c.getJob('job_x').catch((e: unknown) => e)) as FolioError;
    expect(err).toBeInstanceOf(FolioError);
    expect(err).toMatchObject({ status: 0, code: 'network_error' });
    expect(err.message).toContain('Could not reach');
  });
});
