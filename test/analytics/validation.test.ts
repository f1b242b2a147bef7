// Every invalid query parameter and every bad event gets a 4xx with the API error body (docs/errors.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { upstreamValidator } from './helpers.ts';

const UA = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15';

describe('analytics validation', () => {
  let server: TestServer;
  let projectId: string;
  let writeKey: string;
  let readKey: string;
  const upstreamError = upstreamValidator('AnalyticsErrorResponse');

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    writeKey = await server.createKey(projectId, 'write');
    readKey = await server.createKey(projectId, 'read');
  });
  afterAll(async () => server?.close());

  const bad: [string, string][] = [
    ['limit=0', 'invalid_request'],
    ['limit=251', 'invalid_request'],
    ['limit=abc', 'invalid_request'],
    ['limit=1.5', 'invalid_request'],
    ['limit=', 'invalid_request'],
    ['offset=-1', 'invalid_request'],
    ['offset=abc', 'invalid_request'],
    ['offset=0.5', 'invalid_request'],
    ['dateFrom=yesterday', 'invalid_date'],
    ['dateFrom=2025-02-30', 'invalid_date'],
    ['dateFrom=2025-13-01', 'invalid_date'],
    ['dateTo=2025-01-01T25:00:00Z', 'invalid_date'],
    ['dateTo=2025-01-01T10:00:00+25:00', 'invalid_date'],
    ['dateTo=01/02/2025', 'invalid_date'],
    ['dateFrom=', 'invalid_date'],
    ['dateFrom=2025-03-02&dateTo=2025-03-01', 'invalid_date_range'],
    ['dateFrom=2025-03-01T10:00:00Z&dateTo=2025-03-01T11:00:00%2B02:00', 'invalid_date_range'],
  ];

  for (const endpoint of ['visitors', 'views']) {
    for (const [query, code] of bad) {
      it(`${endpoint}?${query} → 400 ${code}`, async () => {
        const res = await server.api('GET', `/v1/analytics/${projectId}/${endpoint}?${query}`, { key: readKey });
        expect(res.status).toBe(400);
        expect(res.body.code).toBe(code);
        expect(typeof res.body.error).toBe('string');
        expect(res.body.error.length).toBeGreaterThan(10);
        expect(Array.isArray(res.body.details)).toBe(true);
        expect(upstreamError(res.body)).toBeNull();
      });
    }
  }

  it('accepts the boundary values and equal bounds', async () => {
    for (const q of ['limit=1', 'limit=250', 'offset=0', 'offset=100000', 'dateFrom=2025-03-01&dateTo=2025-03-01', 'dateFrom=2025-03-01T00:00:00.123456Z']) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/visitors?${q}`, { key: readKey });
      expect(res.status, q).toBe(200);
    }
  });

  it('rejects bad timeseries parameters', async () => {
    for (const [q, code] of [
      ['interval=week', 'invalid_request'],
      ['interval=hour', 'range_too_large'],
      ['interval=hour&dateFrom=2025-01-01&dateTo=2025-03-01', 'range_too_large'],
      ['dateFrom=nope', 'invalid_date'],
    ]) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/timeseries?${q}`, { key: readKey });
      expect(res.status, q).toBe(400);
      expect(res.body.code).toBe(code);
    }
  });

  it('needs a key of the project; reads need read scope, events need write scope', async () => {
    expect((await server.api('GET', `/v1/analytics/${projectId}/visitors`)).status).toBe(401);
    const other = await server.createProject();
    const otherKey = await server.createKey(other, 'write');
    expect((await server.api('GET', `/v1/analytics/${projectId}/visitors`, { key: otherKey })).status).toBe(403);
    const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key: readKey, body: { events: [] } });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe('insufficient_scope');
  });

  it('rejects every bad event with its index, code and reason, and keeps the good ones', async () => {
    const now = Date.now();
    const good = { path: '/ok', userAgent: UA, ip: '203.0.113.9' };
    const events: unknown[] = [
      good,
      'not an object',
      null,
      [good],
      { userAgent: UA, ip: '203.0.113.9' },
      { path: 'relative', userAgent: UA, ip: '203.0.113.9' },
      { path: '/x\u0000y', userAgent: UA, ip: '203.0.113.9' },
      { path: 42, userAgent: UA, ip: '203.0.113.9' },
      { path: '/x', ip: '203.0.113.9' },
      { path: '/x', userAgent: '   ', ip: '203.0.113.9' },
      { path: '/x', userAgent: UA, ip: '999.1.1.1' },
      { path: '/x', userAgent: UA },
      { path: '/x', userAgent: UA, ip: '203.0.113.9', timestamp: 'last tuesday' },
      { path: '/x', userAgent: UA, ip: '203.0.113.9', timestamp: new Date(now + 10 * 60_000).toISOString() },
      { path: '/x', userAgent: UA, ip: '203.0.113.9', timestamp: 1700000000000.5 },
      { path: '/x', userAgent: UA, ip: '203.0.113.9', color: 'red' },
      { path: '/x', userAgent: UA, visitorId: '' },
      { path: '/' + 'a'.repeat(3000), userAgent: UA, ip: '203.0.113.9' },
      { path: '/' + 'a'.repeat(2000) + '?' + 'q'.repeat(3000), userAgent: UA, ip: '203.0.113.9', timestamp: 1700000000000 },
      { path: '/x', userAgent: UA, ip: '2001:db8::1', timestamp: new Date(now + 60_000).toISOString(), visitorId: 'abc', referrer: 'https://example.com', accept: 'text/html' },
    ];
    const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key: writeKey, body: { events } });
    expect(res.status).toBe(202);
    // Also accepted: a timestamp in whole milliseconds, a path within the limit once its query string is gone.
    expect(res.body.accepted).toBe(3);
    expect(res.body.rejected.map((r: { index: number; code: string }) => [r.index, r.code])).toEqual([
      [1, 'invalid_event'],
      [2, 'invalid_event'],
      [3, 'invalid_event'],
      [4, 'missing_field'],
      [5, 'invalid_path'],
      [6, 'invalid_path'],
      [7, 'invalid_field'],
      [8, 'missing_field'],
      [9, 'invalid_user_agent'],
      [10, 'invalid_ip'],
      [11, 'missing_identity'],
      [12, 'invalid_timestamp'],
      [13, 'future_timestamp'],
      [14, 'invalid_timestamp'],
      [15, 'unknown_field'],
      [16, 'invalid_visitor_id'],
      [17, 'field_too_long'],
    ]);
    for (const r of res.body.rejected) expect(r.error.length).toBeGreaterThan(5);
    const v = await server.api('GET', `/v1/analytics/${projectId}/views`, { key: readKey });
    expect(v.body.totals).toEqual({ human: 3, ai: 0, total: 3 });
  });

  it('rejects bad request bodies as a whole', async () => {
    const url = `/v1/analytics/${projectId}/events`;
    const cases: [unknown, number, string][] = [
      [{}, 400, 'invalid_request'],
      [{ events: 'x' }, 400, 'invalid_request'],
      [{ events: [], extra: 1 }, 400, 'invalid_request'],
      [{ events: Array.from({ length: 1001 }, () => ({ path: '/', userAgent: UA, ip: '203.0.113.1' })) }, 400, 'too_many_events'],
      ['{not json', 400, 'invalid_json'],
    ];
    for (const [body, status, code] of cases) {
      const res = await server.api('POST', url, { key: writeKey, body });
      expect(res.status).toBe(status);
      expect(res.body.code).toBe(code);
    }
    const res = await server.api('POST', url, { key: writeKey, body: 'x', headers: { 'content-type': 'application/xml' } });
    expect(res.status).toBe(415);
    const views = await server.api('GET', `/v1/analytics/${projectId}/views`, { key: readKey });
    expect(views.body.totals.total).toBe(3);
  });
});

describe('analytics read rate limit', () => {
  it('counts reads per project per hour and answers 429 with Retry-After', async () => {
    const server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '3' } });
    try {
      const projectId = await server.createProject();
      const key = await server.createKey(projectId, 'read');
      for (let i = 0; i < 3; i++) {
        const ok = await server.api('GET', `/v1/analytics/${projectId}/visitors`, { key });
        expect(ok.status).toBe(200);
        expect(ok.headers.get('ratelimit-remaining')).toBe(String(2 - i));
      }
      const res = await server.api('GET', `/v1/analytics/${projectId}/agents`, { key });
      expect(res.status).toBe(429);
      expect(res.body.code).toBe('rate_limited');
      expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
    } finally {
      await server.close();
    }
  });
});
