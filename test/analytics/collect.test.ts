// The browser path: script.js, the keyless collect endpoint (CORS from site origins only, size and
// per-client rate limits, bots dropped), and the timeseries, agents and retention features.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const ORIGIN = 'https://docs.example.com';
const BROWSER = 'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

describe('browser script and collect', () => {
  let server: TestServer;
  let projectId: string;
  let readKey: string;

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_COLLECT: '5', FOLIO_RATE_LIMIT_ANALYTICS: '0', FOLIO_TRUST_PROXY: 'true' } });
    projectId = await server.createProject({ siteOrigins: [ORIGIN] });
    readKey = await server.createKey(projectId, 'read');
  });
  afterAll(async () => server?.close());

  const collect = (body: unknown, headers: Record<string, string> = {}) =>
    server.api('POST', `/v1/analytics/${projectId}/collect`, {
      body: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { origin: ORIGIN, 'user-agent': BROWSER, 'content-type': 'text/plain;charset=UTF-8', 'x-forwarded-for': '198.51.100.1', ...headers },
    });

  it('serves a small script with caching headers that tracks SPA navigation', async () => {
    const res = await server.api('GET', '/v1/analytics/script.js');
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/javascript/);
    expect(res.headers.get('cache-control')).toMatch(/max-age=\d+/);
    expect(res.text.length).toBeLessThan(4000);
    expect(res.text).toContain('pushState');
    expect(res.text).toContain('popstate');
    expect(res.text).not.toMatch(/\bimport\b|require\(/);
    const etag = res.headers.get('etag')!;
    const again = await server.api('GET', '/v1/analytics/script.js', { headers: { 'if-none-match': etag } });
    expect(again.status).toBe(304);
    expect(() => new Function(res.text)).not.toThrow();
  });

  it('documents the analytics operations in /openapi.json', async () => {
    const res = await server.api('GET', '/openapi.json');
    expect(res.status).toBe(200);
    for (const p of ['visitors', 'views', 'timeseries', 'agents', 'events', 'import', 'collect']) {
      expect(Object.keys(res.body.paths), p).toContain(`/v1/analytics/{projectId}/${p}`);
    }
    const visitors = res.body.paths['/v1/analytics/{projectId}/visitors'].get;
    expect(visitors.parameters.map((x: { name: string }) => x.name).sort()).toEqual(['dateFrom', 'dateTo', 'limit', 'offset', 'projectId']);
  });

  it('answers the CORS preflight only for the project origins', async () => {
    const ok = await server.api('OPTIONS', `/v1/analytics/${projectId}/collect`, { headers: { origin: ORIGIN, 'access-control-request-method': 'POST' } });
    expect(ok.status).toBe(204);
    expect(ok.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const bad = await server.api('OPTIONS', `/v1/analytics/${projectId}/collect`, { headers: { origin: 'https://evil.example', 'access-control-request-method': 'POST' } });
    expect(bad.status).toBe(403);
    expect(bad.body.code).toBe('origin_not_allowed');
    expect(bad.headers.get('access-control-allow-origin')).toBeNull();
    expect(ok.headers.get('access-control-allow-methods')).toBe('POST');
    expect(ok.headers.get('access-control-max-age')).toBe('86400');
    expect(ok.headers.get('vary')).toMatch(/Origin/);
    const preflight = { origin: ORIGIN, 'access-control-request-method': 'POST' };
    const unknown = await server.api('OPTIONS', '/v1/analytics/prj_nope/collect', { headers: preflight });
    expect([unknown.status, unknown.body.code]).toEqual([404, 'project_not_found']);
    const longer = await server.api('OPTIONS', `/v1/analytics/${projectId}/collect/x`, { headers: preflight });
    expect(longer.status).toBe(404);
    expect(longer.headers.get('access-control-allow-origin')).toBeNull();
    const elsewhere = await server.api('OPTIONS', `/v1/analytics/${projectId}/visitors`, { headers: preflight });
    expect([elsewhere.status, elsewhere.body.code]).toEqual([405, 'method_not_allowed']);
    expect(elsewhere.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('records views from allowed origins (text/plain and JSON), with and without a first-party id', async () => {
    expect((await collect({ path: '/docs/start?utm=x', visitorId: 'abcdef0123456789', referrer: 'https://google.com/' })).status).toBe(204);
    expect((await collect({ path: '/docs/start', visitorId: 'abcdef0123456789' }, { 'content-type': 'application/json', 'x-forwarded-for': '198.51.100.2' })).status).toBe(204);
    const res = await collect({ path: '/docs/other' }, { 'x-forwarded-for': '198.51.100.3' });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(ORIGIN);
    const v = await server.api('GET', `/v1/analytics/${projectId}/visitors`, { key: readKey });
    expect(v.body.totals).toEqual({ human: 2, ai: 0, total: 2 });
    expect(v.body.visitors).toEqual([
      { path: '/docs/other', human: 1, ai: 0, total: 1 },
      { path: '/docs/start', human: 1, ai: 0, total: 1 },
    ]);
  });

  it('refuses other origins, missing origins, unknown projects, bad and oversized bodies', async () => {
    const cases: [Promise<{ status: number; body: any }>, number, string][] = [
      [collect({ path: '/x' }, { origin: 'https://evil.example', 'x-forwarded-for': '198.51.100.10' }), 403, 'origin_not_allowed'],
      [server.api('POST', `/v1/analytics/${projectId}/collect`, { body: '{"path":"/x"}', headers: { 'content-type': 'text/plain', 'x-forwarded-for': '198.51.100.11' } }), 403, 'origin_not_allowed'],
      [server.api('POST', `/v1/analytics/prj_nope/collect`, { body: '{"path":"/x"}', headers: { origin: ORIGIN, 'content-type': 'text/plain' } }), 404, 'project_not_found'],
      [collect('{nope', { 'x-forwarded-for': '198.51.100.12' }), 400, 'invalid_json'],
      [collect({ path: '/x', extra: 1 }, { 'x-forwarded-for': '198.51.100.13' }), 400, 'unknown_field'],
      [collect({ path: 'x' }, { 'x-forwarded-for': '198.51.100.14' }), 400, 'invalid_path'],
      [collect({ path: '/x', visitorId: 'a\u0001b' }, { 'x-forwarded-for': '198.51.100.15' }), 400, 'invalid_visitor_id'],
      [collect({ path: '/x\u0000' }, { 'x-forwarded-for': '198.51.100.17' }), 400, 'invalid_path'],
      [collect({ path: '/x' }, { 'user-agent': '', 'x-forwarded-for': '198.51.100.18' }), 400, 'invalid_user_agent'],
      [collect({ path: '/' + 'a'.repeat(5000) }, { 'x-forwarded-for': '198.51.100.16' }), 413, 'payload_too_large'],
    ];
    for (const [p, status, code] of cases) {
      const res = await p;
      expect(res.status, code).toBe(status);
      expect(res.body.code).toBe(code);
    }
  });

  it('drops bots and crawlers without storing them', async () => {
    for (const ua of ['Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', 'Mozilla/5.0 HeadlessChrome/131.0.0.0', 'GPTBot/1.2']) {
      expect((await collect({ path: '/bot-page' }, { 'user-agent': ua, 'x-forwarded-for': '198.51.100.20' })).status).toBe(204);
    }
    const v = await server.api('GET', `/v1/analytics/${projectId}/views`, { key: readKey });
    expect(v.body.views.map((r: { path: string }) => r.path)).not.toContain('/bot-page');
    const agents = await server.api('GET', `/v1/analytics/${projectId}/agents`, { key: readKey });
    expect(agents.body.agents).toEqual([]);
  });

  it('limits requests per client per minute', async () => {
    const statuses: number[] = [];
    for (let i = 0; i < 7; i++) statuses.push((await collect({ path: '/rate' }, { 'x-forwarded-for': '198.51.100.99' })).status);
    expect(statuses.slice(0, 5)).toEqual([204, 204, 204, 204, 204]);
    expect(statuses.slice(5)).toEqual([429, 429]);
    const limited = await collect({ path: '/rate' }, { 'x-forwarded-for': '198.51.100.99' });
    expect([limited.status, limited.body.code]).toEqual([429, 'rate_limited']);
    expect(limited.body.error).toMatch(/at most 5 page views per client per minute/);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(limited.headers.get('ratelimit-limit')).toBe('5');
    expect(limited.headers.get('ratelimit-remaining')).toBe('0');
    const other = await collect({ path: '/rate' }, { 'x-forwarded-for': '198.51.100.98' });
    expect(other.status).toBe(204);
  });
});

describe('timeseries, agents and retention', () => {
  it('reports per-interval visitors, agents by name, and deletes old events', async () => {
    const server = await startTestServer({ workers: 0, env: { FOLIO_ANALYTICS_RETENTION_DAYS: '30', FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    try {
      const projectId = await server.createProject();
      const key = await server.createKey(projectId, 'write');
      const day = 86_400_000;
      const today = Math.floor(Date.now() / day) * day;
      const iso = (ms: number) => new Date(ms).toISOString();
      const chatgpt = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
      const claude = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
      const events = [
        { timestamp: iso(today - 2 * day + 3_600_000), path: '/a', userAgent: BROWSER, ip: '203.0.113.1' },
        { timestamp: iso(today - 2 * day + 7_200_000), path: '/b', userAgent: BROWSER, ip: '203.0.113.1' },
        { timestamp: iso(today - 2 * day + 7_200_000), path: '/a', userAgent: chatgpt, ip: '203.0.113.2' },
        { timestamp: iso(today - day + 60_000), path: '/a', userAgent: claude, ip: '203.0.113.3' },
        { timestamp: iso(today - day + 60_000), path: '/a', userAgent: claude, ip: '203.0.113.4' },
        { timestamp: iso(today - day + 60_000), path: '/a', userAgent: 'CCBot/2.0 (https://commoncrawl.org/faq/)', ip: '203.0.113.5' },
        { timestamp: iso(today - 40 * day), path: '/old', userAgent: BROWSER, ip: '203.0.113.6' },
      ];
      const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
      expect(res.body).toEqual({ accepted: 7, rejected: [] });

      const from = iso(today - 2 * day).slice(0, 10);
      const to = iso(today).slice(0, 10);
      const daily = await server.api('GET', `/v1/analytics/${projectId}/timeseries?dateFrom=${from}&dateTo=${to}`, { key });
      expect(daily.status).toBe(200);
      expect(daily.body).toEqual({
        interval: 'day',
        series: [
          { start: iso(today - 2 * day), human: 1, ai: 1, total: 2, views: 3, humanViews: 2, aiViews: 1 },
          { start: iso(today - day), human: 0, ai: 2, total: 2, views: 2, humanViews: 0, aiViews: 2 },
        ],
      });
      const hourly = await server.api('GET', `/v1/analytics/${projectId}/timeseries?dateFrom=${from}&dateTo=${to}&interval=hour`, { key });
      expect(hourly.body.series.map((p: { start: string; views: number }) => [p.start, p.views])).toEqual([
        [iso(today - 2 * day + 3_600_000), 1],
        [iso(today - 2 * day + 7_200_000), 2],
        [iso(today - day), 2],
      ]);
      const agents = await server.api('GET', `/v1/analytics/${projectId}/agents`, { key });
      expect(agents.body.agents).toEqual([
        { agent: 'Claude-User', category: 'ai', visitors: 2, views: 2 },
        { agent: 'CCBot', category: 'training', visitors: 1, views: 1 },
        { agent: 'ChatGPT-User', category: 'ai', visitors: 1, views: 1 },
      ]);

      await server.services.analytics.compact();
      let all = await server.api('GET', `/v1/analytics/${projectId}/views`, { key });
      expect(all.body.views.map((r: { path: string }) => r.path)).toContain('/old');
      await server.services.analytics.applyRetention();
      all = await server.api('GET', `/v1/analytics/${projectId}/views`, { key });
      expect(all.body.views.map((r: { path: string }) => r.path)).toEqual(['/a', '/b']);
      expect(all.body.totals).toEqual({ human: 2, ai: 3, total: 5 });
    } finally {
      await server.close();
    }
  });
});
