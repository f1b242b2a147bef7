// Project webhooks through the durable outbox: signed deliveries of every status change, in order per
// job, retried with backoff and recorded attempt by attempt, listed and sent again through the API,
// and still delivered after the server is SIGKILLed with deliveries pending.
import { createHmac } from 'node:crypto';
import http from 'node:http';
import { rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually, failingScript } from '../helpers/handlers.ts';
import { runCli, startProcess, type Child } from '../helpers/process.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
  status: number;
}

/** A webhook receiver on loopback that answers with `next()` (200 by default) and records every request. */
async function startReceiver() {
  const hits: Hit[] = [];
  let answers: number[] = [];
  let fallback = 200;
  const server = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const status = answers.shift() ?? fallback;
    hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), status });
    res.writeHead(status);
    res.end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    hits,
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hook`,
    answer(list: number[], then = 200) {
      answers = list;
      fallback = then;
    },
    close: () => new Promise((r) => server.close(r)),
  };
}

type Receiver = Awaited<ReturnType<typeof startReceiver>>;
const eventsOf = (hits: Hit[], jobId: string) => hits.filter((h) => JSON.parse(h.body).job.id === jobId);

describe('webhooks', () => {
  let server: TestServer;
  let receiver: Receiver;
  const handler = new ScriptedHandler();

  beforeAll(async () => {
    receiver = await startReceiver();
    server = await startTestServer({ jobHandler: handler, env: { FOLIO_WEBHOOK_ATTEMPTS: '3', FOLIO_WEBHOOK_TIMEOUT: '2s', FOLIO_WEBHOOK_RETRY_BASE: '20ms' } });
  });
  afterAll(async () => {
    await server.close();
    await receiver.close();
  });

  it('signs each status change, retries with backoff under one delivery id, and records every attempt', async () => {
    const projectId = await server.createProject({ webhookUrl: receiver.url, webhookSecret: 'whsec_abc' });
    const key = await server.createKey(projectId);
    receiver.answer([500, 503]);
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'hello' } })).body;
    const deliveries = await eventually(async () => {
      const list = (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}/webhooks`, { key })).body.deliveries;
      return list.length === 2 && list.every((d: { status: string }) => d.status === 'delivered') ? list : null;
    });
    expect(deliveries.map((d: { event: string }) => d.event)).toEqual(['job.active', 'job.completed']);
    expect(deliveries[0]).toMatchObject({ attempts: 3, lastStatusCode: 200, lastError: null, nextAttemptAt: null });
    expect(deliveries[1]).toMatchObject({ attempts: 1, lastStatusCode: 200 });

    const hits = eventsOf(receiver.hits, job.id);
    expect(hits.map((h) => [h.headers['x-folio-event'], h.status])).toEqual([
      ['job.active', 500],
      ['job.active', 503],
      ['job.active', 200],
      ['job.completed', 200],
    ]);
    for (const h of hits) {
      expect(h.headers['x-folio-signature']).toBe('sha256=' + createHmac('sha256', 'whsec_abc').update(h.body).digest('hex'));
      expect(h.headers['content-type']).toBe('application/json');
      expect(JSON.parse(h.body).id).toBe(h.headers['x-folio-delivery']);
    }
    expect(new Set(hits.slice(0, 3).map((h) => h.headers['x-folio-delivery'])).size).toBe(1);
    expect(JSON.parse(hits[3].body)).toMatchObject({ event: 'job.completed', job: { id: job.id, status: 'completed', projectId } });

    const attempts = await server.services.store.db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', job.id).orderBy('id').execute();
    expect(attempts.map((a) => [a.delivery_id, a.attempt, a.status_code, a.error])).toEqual([
      [deliveries[0].id, 1, 500, 'HTTP 500'],
      [deliveries[0].id, 2, 503, 'HTTP 503'],
      [deliveries[0].id, 3, 200, null],
      [deliveries[1].id, 1, 200, null],
    ]);
  });

  it('gives up after the last attempt, at once on a 4xx refusal, and sends a delivery again on request', async () => {
    const projectId = await server.createProject({ webhookUrl: receiver.url });
    const key = await server.createKey(projectId);
    receiver.answer([500, 500, 500, 410], 200);
    handler.script = failingScript('model_error', 'no');
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body;
    const list = await eventually(async () => {
      const l = (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}/webhooks`, { key })).body.deliveries;
      return l.length === 2 && l.every((d: { status: string }) => d.status === 'failed') ? l : null;
    });
    handler.script = undefined;
    expect(list[0]).toMatchObject({ event: 'job.active', attempts: 3, lastStatusCode: 500, lastError: 'HTTP 500' });
    expect(list[1]).toMatchObject({ event: 'job.failed', attempts: 1, lastStatusCode: 410 });

    const again = await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/webhooks/${list[1].id}/redeliver`, { key });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ id: list[1].id, status: 'pending', attempts: 0 });
    await eventually(async () => (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}/webhooks`, { key })).body.deliveries[1].status === 'delivered');
    const resent = eventsOf(receiver.hits, job.id).filter((h) => h.headers['x-folio-delivery'] === list[1].id);
    expect(resent.map((h) => h.status)).toEqual([410, 200]);
    expect(resent[0].body).toBe(resent[1].body);

    const missing = await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/webhooks/whd_nope/redeliver`, { key });
    expect(missing.status).toBe(404);
    expect(missing.body.code).toBe('delivery_not_found');
    const reader = await server.createKey(projectId, 'read');
    expect((await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/webhooks/${list[1].id}/redeliver`, { key: reader })).status).toBe(403);
    const other = await server.createProject();
    const otherKey = await server.createKey(other);
    expect((await server.api('GET', `/v2/agent/${other}/job/${job.id}/webhooks`, { key: otherKey })).status).toBe(404);
  });

  it('delivers the status changes of one job in order, and nothing for a project without a webhook URL', async () => {
    const projectId = await server.createProject({ webhookUrl: receiver.url });
    const quiet = await server.createProject();
    const key = await server.createKey(projectId);
    const quietKey = await server.createKey(quiet);
    receiver.answer([503, 503]);
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'one' } })).body;
    await eventually(async () => (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.status === 'completed');
    await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/message`, { key, body: { prompt: 'two' } });
    await eventually(async () => (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.status === 'completed');
    await server.api('POST', `/v2/agent/${projectId}/job/${job.id}/archive`, { key });
    await eventually(async () => eventsOf(receiver.hits, job.id).filter((h) => h.status === 200).length === 5);
    // The first delivery needed three attempts; the later ones waited for it.
    expect(eventsOf(receiver.hits, job.id).map((h) => h.headers['x-folio-event'])).toEqual([
      'job.active',
      'job.active',
      'job.active',
      'job.completed',
      'job.active',
      'job.completed',
      'job.archived',
    ]);
    const q = (await server.api('POST', `/v2/agent/${quiet}/job`, { key: quietKey, body: { prompt: 'x' } })).body;
    await eventually(async () => (await server.api('GET', `/v2/agent/${quiet}/job/${q.id}`, { key: quietKey })).body.status === 'completed');
    expect((await server.api('GET', `/v2/agent/${quiet}/job/${q.id}/webhooks`, { key: quietKey })).body.deliveries).toEqual([]);
  });
});

describe('webhooks across a SIGKILL', () => {
  const children: Child[] = [];
  let databases: BackendDatabases | undefined;
  let dir = '';
  let receiver: Receiver;
  afterEach(async () => {
    for (const c of children.splice(0)) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    await receiver?.close();
    await databases?.drop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every pending delivery arrives after a restart, each accepted once', async () => {
    dir = tempDir();
    databases = await backendDatabases();
    receiver = await startReceiver();
    const env = {
      ...databases.env,
      FOLIO_DATA_DIR: dir,
      PORT: '0',
      LOG_LEVEL: 'warn',
      ANTHROPIC_API_KEY: 'x',
      FOLIO_POLL: '100',
      FOLIO_WORKERS: '0',
      FOLIO_OUTBOUND_ALLOW: '127.0.0.0/8',
      FOLIO_WEBHOOK_TIMEOUT: '1s',
      FOLIO_WEBHOOK_RETRY_BASE: '300ms',
      FOLIO_WEBHOOK_ATTEMPTS: '20',
    };
    const project = JSON.parse((await runCli(['project', 'create', '--name', 'W', '--repository', 'https://github.com/acme/docs', '--webhook-url', receiver.url, '--json'], env)).stdout);
    const key = JSON.parse((await runCli(['key', 'create', '--project', project.id, '--json'], env)).stdout).key;

    // The receiver is down: every delivery stays pending, retrying.
    receiver.answer([], 503);
    const a = await startProcess('test/fixtures/serve-with-handler.ts', [], env);
    children.push(a);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await fetch(`${a.url}/v2/agent/${project.id}/job`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ prompt: `job ${i}` }),
      });
      ids.push(((await res.json()) as { id: string }).id);
    }
    await eventually(async () => new Set(receiver.hits.map((h) => h.headers['x-folio-delivery'])).size === 5);
    a.proc.kill('SIGKILL');
    await a.exited;

    receiver.answer([], 200);
    const before = receiver.hits.length;
    const b = await startProcess('test/fixtures/serve-with-handler.ts', [], env);
    children.push(b);
    await eventually(async () => receiver.hits.slice(before).filter((h) => h.status === 200).length >= 5, 30_000);
    // Give a duplicate the chance to show up, then count.
    await new Promise((r) => setTimeout(r, 1000));
    const accepted = receiver.hits.filter((h) => h.status === 200);
    const perDelivery = new Map<string, number>();
    for (const h of accepted) perDelivery.set(String(h.headers['x-folio-delivery']), (perDelivery.get(String(h.headers['x-folio-delivery'])) ?? 0) + 1);
    expect(perDelivery.size).toBe(5);
    expect([...perDelivery.values()]).toEqual([1, 1, 1, 1, 1]);
    expect(accepted.map((h) => JSON.parse(h.body).job.id).sort()).toEqual([...ids].sort());
    // Attempts are never sent twice at once: a delivery's attempts are numbered without gaps or repeats.
    for (const id of ids) {
      const list = await (await fetch(`${b.url}/v2/agent/${project.id}/job/${id}/webhooks`, { headers: { authorization: `Bearer ${key}` } })).json();
      expect((list as { deliveries: { status: string }[] }).deliveries.map((d) => d.status)).toEqual(['delivered']);
    }
  }, 90_000);
});
