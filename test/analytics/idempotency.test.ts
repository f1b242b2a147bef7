// Idempotent event ingest: a batch retried with the same Idempotency-Key (same body) changes no count
// and gets the same answer; other keys are counted; bad keys are refused. Runs on DuckDB and, on the
// scale leg, on ClickHouse.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FolioClient } from '../../src/client/index.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

describe('events API with Idempotency-Key', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId, 'write');
  });
  afterAll(async () => server?.close());

  const post = (events: unknown[], idem?: string) =>
    server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events }, headers: idem === undefined ? {} : { 'idempotency-key': idem } });

  async function counts(prefix: string) {
    const v = await server.api('GET', `/v1/analytics/${projectId}/views?limit=250`, { key });
    const u = await server.api('GET', `/v1/analytics/${projectId}/visitors?limit=250`, { key });
    type Row = { path: string; human: number; ai: number; total: number };
    const pick = (rows: Row[]) => rows.filter((r) => r.path.startsWith(prefix));
    return { views: pick(v.body.views), visitors: pick(u.body.visitors) };
  }

  function batch(prefix: string) {
    const t = '2025-06-01T10:00:00Z';
    return [
      { timestamp: t, path: `${prefix}/a`, userAgent: HUMAN, visitorId: 'v1' },
      { timestamp: t, path: `${prefix}/a`, userAgent: HUMAN, visitorId: 'v1' }, // identical event: a second view
      { timestamp: t, path: `${prefix}/a`, userAgent: AI, ip: '203.0.113.5' },
      { timestamp: t, path: 'no-slash', userAgent: HUMAN, visitorId: 'v2' }, // rejected
      { path: `${prefix}/now`, userAgent: HUMAN, visitorId: 'v3' }, // timestamp defaults to now
    ];
  }

  it('stores a batch once when it is retried with the same key, and answers the retry the same way', async () => {
    const events = batch('/same');
    const first = await post(events, 'retry-me-1');
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ accepted: 4, rejected: [{ index: 3, code: 'invalid_path', error: expect.any(String) }] });
    expect(first.headers.get('idempotent-replayed')).toBeNull();
    const once = await counts('/same');
    expect(once.views).toEqual([
      { path: '/same/a', human: 2, ai: 1, total: 3 },
      { path: '/same/now', human: 1, ai: 0, total: 1 },
    ]);
    for (let i = 0; i < 3; i++) {
      const again = await post(events, 'retry-me-1');
      expect(again.status).toBe(202);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    }
    await server.services.analytics.compact();
    const retried = await post(events, 'retry-me-1');
    expect(retried.body).toEqual(first.body);
    expect(await counts('/same')).toEqual(once);
  });

  it('counts the same batch again under a different key, or without a key', async () => {
    const events = batch('/other');
    expect((await post(events, 'key-A')).body.accepted).toBe(4);
    expect((await post(events, 'key-B')).body.accepted).toBe(4);
    expect((await post(events)).body.accepted).toBe(4);
    const c = await counts('/other');
    expect(c.views).toEqual([
      { path: '/other/a', human: 6, ai: 3, total: 9 },
      { path: '/other/now', human: 3, ai: 0, total: 3 },
    ]);
    expect(c.visitors).toEqual([
      { path: '/other/a', human: 1, ai: 1, total: 2 },
      { path: '/other/now', human: 1, ai: 0, total: 1 },
    ]);
  });

  it('counts a different batch sent under a key used before (the key is bound to the body)', async () => {
    expect((await post([{ timestamp: '2025-06-02T00:00:00Z', path: '/reuse/x', userAgent: HUMAN, visitorId: 'r1' }], 'reused')).status).toBe(202);
    const second = await post([{ timestamp: '2025-06-02T00:00:00Z', path: '/reuse/y', userAgent: HUMAN, visitorId: 'r1' }], 'reused');
    expect(second.status).toBe(202);
    expect(second.headers.get('idempotent-replayed')).toBeNull();
    expect((await counts('/reuse')).views).toEqual([
      { path: '/reuse/x', human: 1, ai: 0, total: 1 },
      { path: '/reuse/y', human: 1, ai: 0, total: 1 },
    ]);
  });

  it('stores a batch once when retries with the same key arrive concurrently', async () => {
    const events = Array.from({ length: 300 }, (_, i) => ({ timestamp: '2025-06-03T12:00:00Z', path: `/conc/${i % 7}`, userAgent: HUMAN, visitorId: `c${i}` }));
    const answers = await Promise.all(Array.from({ length: 6 }, () => post(events, 'concurrent-key')));
    for (const a of answers) expect(a.body).toEqual({ accepted: 300, rejected: [] });
    expect(answers.filter((a) => a.headers.get('idempotent-replayed') === null)).toHaveLength(1);
    const c = await counts('/conc');
    expect(c.views.reduce((n, r) => n + r.total, 0)).toBe(300);
  });

  it('refuses a malformed Idempotency-Key with 400 invalid_idempotency_key and stores nothing', async () => {
    const events = [{ timestamp: '2025-06-04T00:00:00Z', path: '/badkey', userAgent: HUMAN, visitorId: 'b' }];
    for (const bad of ['', 'x'.repeat(256), 'has space', 'tab\there', 'caf\u00e9']) {
      const res = await post(events, bad);
      expect(res.status, JSON.stringify(bad)).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_idempotency_key', error: 'Idempotency-Key must be 1 to 255 visible ASCII characters.' });
    }
    expect((await post(events, 'x'.repeat(255))).status).toBe(202);
    expect((await post(events, '!~')).status).toBe(202);
    expect((await counts('/badkey')).views).toEqual([{ path: '/badkey', human: 2, ai: 0, total: 2 }]);
  });

  it('makes the typed client safe to retry: a lost response does not double-count', async () => {
    let lost = 0;
    // The first POST reaches the server and is stored, but its response never reaches the client.
    const lossy: typeof fetch = async (input, init) => {
      const res = await fetch(input, init);
      if (init?.method === 'POST' && lost === 0) {
        lost++;
        await res.arrayBuffer();
        throw new TypeError('fetch failed: connection reset');
      }
      return res;
    };
    const client = new FolioClient({ baseUrl: server.url, apiKey: key, projectId, fetch: lossy, retryBaseMs: 1, retryMaxMs: 5 });
    const events = Array.from({ length: 40 }, (_, i) => ({ timestamp: '2025-06-05T08:00:00Z', path: `/client/${i % 4}`, userAgent: i % 3 ? HUMAN : AI, visitorId: `k${i % 9}` }));
    const result = await client.ingestEvents(events);
    expect(lost).toBe(1);
    expect(result).toEqual({ accepted: 40, rejected: [] });
    const c = await counts('/client');
    expect(c.views.reduce((n, r) => n + r.total, 0)).toBe(40);
  });
});
