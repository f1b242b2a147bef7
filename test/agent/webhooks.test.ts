import { createHmac } from 'node:crypto';
import { rmSync } from 'node:fs';
import http from 'node:http';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { startWebhookDispatcher } from '../../src/jobs/webhooks.ts';
import { openStore, type Store } from '../../src/store/database.ts';
import { ProjectStore } from '../../src/store/projects.ts';
import { tempDir } from '../helpers/server.ts';

interface Hit {
  headers: http.IncomingHttpHeaders;
  body: string;
}

let store: Store;
let config: Config;
let dataDir: string;
let receiver: http.Server;
let receiverUrl = '';
const hits: Hit[] = [];
let statuses: number[] = [];

beforeAll(async () => {
  dataDir = tempDir('folio-webhooks-');
  config = loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'webhook-test-secret-0123', FOLIO_WEBHOOK_ATTEMPTS: '3', FOLIO_WEBHOOK_TIMEOUT: '2s', FOLIO_OUTBOUND_ALLOW: '127.0.0.0/8' });
  store = await openStore(config);
  receiver = http.createServer(async (req, res) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    hits.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
    res.writeHead(statuses.shift() ?? 200);
    res.end();
  });
  await new Promise<void>((r) => receiver.listen(0, '127.0.0.1', r));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hook`;
});
afterAll(async () => {
  await new Promise((r) => receiver.close(r));
  await store.close();
  rmSync(dataDir, { recursive: true, force: true });
});

async function deliveries(jobId: string) {
  return store.db.selectFrom('webhook_deliveries').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
}

async function until(fn: () => Promise<boolean>) {
  const deadline = Date.now() + 10_000;
  while (!(await fn())) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe('webhooks', () => {
  it('signs the body, retries with backoff and records each attempt', async () => {
    const p = await new ProjectStore(store.db, config).create({ name: 'W', repositoryUrl: 'https://github.com/a/b', webhookUrl: receiverUrl, webhookSecret: 'whsec_abc' });
    const d = startWebhookDispatcher({ db: store.db, config, projects: new ProjectStore(store.db, config), log: pino({ level: 'silent' }), retryBaseMs: 10 });
    hits.length = 0;
    statuses = [500, 503, 200];
    d.notify({ id: 'job_1', projectId: p.id, status: 'completed', prLink: 'https://x/pull/1' });
    await until(async () => (await deliveries('job_1')).length === 3);
    await d.close();
    const rows = await deliveries('job_1');
    expect(rows.map((r) => [r.attempt, r.status_code, r.error])).toEqual([
      [1, 500, 'HTTP 500'],
      [2, 503, 'HTTP 503'],
      [3, 200, null],
    ]);
    expect(rows.every((r) => r.event === 'job.completed' && r.project_id === p.id)).toBe(true);
    expect(hits).toHaveLength(3);
    for (const h of hits) {
      const expected = 'sha256=' + createHmac('sha256', 'whsec_abc').update(h.body).digest('hex');
      expect(h.headers['x-folio-signature']).toBe(expected);
      expect(h.headers['x-folio-event']).toBe('job.completed');
      expect(h.headers['content-type']).toBe('application/json');
    }
    // One delivery id across retries, and the job in the payload.
    expect(new Set(hits.map((h) => h.headers['x-folio-delivery'])).size).toBe(1);
    const payload = JSON.parse(hits[0].body);
    expect(payload).toMatchObject({ event: 'job.completed', job: { id: 'job_1', status: 'completed', prLink: 'https://x/pull/1' } });
    expect(payload.id).toBe(hits[0].headers['x-folio-delivery']);
  });

  it('gives up after maxAttempts, and at once on a 4xx refusal', async () => {
    const p = await new ProjectStore(store.db, config).create({ name: 'W2', repositoryUrl: 'https://github.com/a/b', webhookUrl: receiverUrl, webhookSecret: 's' });
    const d = startWebhookDispatcher({ db: store.db, config, projects: new ProjectStore(store.db, config), log: pino({ level: 'silent' }), retryBaseMs: 5 });
    statuses = [500, 500, 500, 500];
    d.notify({ id: 'job_2', projectId: p.id, status: 'failed' });
    await until(async () => (await deliveries('job_2')).length === 3);
    statuses = [410];
    d.notify({ id: 'job_3', projectId: p.id, status: 'active' });
    await until(async () => (await deliveries('job_3')).length === 1);
    await d.close();
    expect((await deliveries('job_2')).length).toBe(3);
    expect((await deliveries('job_3')).map((r) => r.status_code)).toEqual([410]);
  });

  it('records connection errors and delivers status changes of one job in order', async () => {
    const p = await new ProjectStore(store.db, config).create({ name: 'W3', repositoryUrl: 'https://github.com/a/b', webhookUrl: 'http://127.0.0.1:1/nothing' });
    const q = await new ProjectStore(store.db, config).create({ name: 'W4', repositoryUrl: 'https://github.com/a/b', webhookUrl: receiverUrl });
    const none = await new ProjectStore(store.db, config).create({ name: 'W5', repositoryUrl: 'https://github.com/a/b' });
    const d = startWebhookDispatcher({ db: store.db, config, projects: new ProjectStore(store.db, config), log: pino({ level: 'silent' }), retryBaseMs: 5 });
    hits.length = 0;
    statuses = [];
    d.notify({ id: 'job_4', projectId: p.id, status: 'completed' });
    for (const s of ['active', 'completed', 'active', 'archived']) d.notify({ id: 'job_5', projectId: q.id, status: s });
    d.notify({ id: 'job_6', projectId: none.id, status: 'completed' });
    await until(async () => (await deliveries('job_4')).length === 3 && (await deliveries('job_5')).length === 4);
    await d.close();
    expect((await deliveries('job_4')).every((r) => r.status_code === null && (r.error ?? '').length > 0)).toBe(true);
    expect(hits.map((h) => h.headers['x-folio-event'])).toEqual(['job.active', 'job.completed', 'job.active', 'job.archived']);
    expect(hits[0].headers['x-folio-signature']).toBeUndefined();
    expect(await deliveries('job_6')).toEqual([]);
  });
});
