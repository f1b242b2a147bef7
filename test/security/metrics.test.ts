// /metrics is for whoever scrapes it with FOLIO_METRICS_TOKEN, and nobody else (issue 30: it was open
// to anyone through the proxy: per-route counts, job counts, queue depth, trigger refusals).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

const TOKEN = 'scrape-me-0123456789-abcdef';

describe('without FOLIO_METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
  });
  afterAll(() => server?.close());

  it('/metrics is off: 404 route_not_found, as an unknown route, whatever is sent', async () => {
    const unknown = await server.api('GET', '/no-such-route');
    for (const headers of [{}, { authorization: `Bearer ${TOKEN}` }] as Record<string, string>[]) {
      const res = await server.api('GET', '/metrics', { headers });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ code: 'route_not_found', error: 'There is no route GET /metrics.' });
      expect(res.headers.get('www-authenticate')).toBeNull();
      expect(Object.keys(res.body)).toEqual(Object.keys(unknown.body));
    }
    expect(server.app.routeCatalog.some((r) => r.url === '/metrics')).toBe(false);
  });
});

describe('with FOLIO_METRICS_TOKEN', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_METRICS_TOKEN: TOKEN } });
  });
  afterAll(() => server?.close());

  it('answers 401 with WWW-Authenticate: Bearer without the token, with a wrong one, or another scheme, revealing nothing', async () => {
    const refusals: [Record<string, string>, string][] = [
      [{}, 'missing_metrics_token'],
      [{ authorization: 'Bearer' }, 'missing_metrics_token'],
      [{ authorization: `Basic ${Buffer.from(`metrics:${TOKEN}`).toString('base64')}` }, 'missing_metrics_token'],
      [{ authorization: 'Bearer wrong-token-0123456789' }, 'invalid_metrics_token'],
      [{ authorization: `Bearer ${TOKEN.slice(0, -1)}` }, 'invalid_metrics_token'],
      [{ authorization: `Bearer ${TOKEN}x` }, 'invalid_metrics_token'],
      [{ authorization: `Bearer ${TOKEN.toUpperCase()}` }, 'invalid_metrics_token'],
      // An API key is not the metrics token, whatever it may do elsewhere.
      [{ authorization: `Bearer ${await server.createKey(await server.createProject())}` }, 'invalid_metrics_token'],
    ];
    for (const [headers, code] of refusals) {
      const res = await server.api('GET', '/metrics', { headers });
      expect(res.status, JSON.stringify(headers)).toBe(401);
      expect(res.body.code, JSON.stringify(headers)).toBe(code);
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
      expect(res.text).not.toContain('folio_');
      expect(res.text).not.toContain(TOKEN);
    }
    const head = await fetch(`${server.url}/metrics`, { method: 'HEAD' });
    expect(head.status).toBe(401);
  });

  it('answers the holder of the token with the Prometheus text', async () => {
    const res = await server.api('GET', '/metrics', { headers: { authorization: `Bearer ${TOKEN}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(res.text).toContain('folio_queue_depth');
    // The refused scrapes above were counted like any request.
    expect(res.text).toMatch(/folio_http_requests_total\{method="GET",route="\/metrics",status="401"\} \d+/);
    expect((await server.api('GET', '/metrics', { headers: { authorization: `bearer   ${TOKEN}  ` } })).status).toBe(200);
  });
});
