// Not-found views: events and collect calls that say the page answered 404 or 410 are stored apart
// and reported by GET …/not-found with exact visitors (against plain Sets), while /visitors and
// /views stay exactly what the same traffic without them gives. Each view also counts in the
// server-derived identities (address and user agent) when it came with an address, whatever visitorId
// it named. On DuckDB, and on ClickHouse in the scale leg (the test server follows the backend matrix).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { reference, rng, utf8Compare, type RefEvent } from './helpers.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 4, 5);
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const CRAWLER_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const PATHS = ['/docs/install', '/docs/old-install', '/guide/é', '/guide/😀', '/guide/z', '/api/v1', '/api/v1/', '/B', '/a'];
const REFERRERS = [undefined, 'https://chatgpt.com/c/abc?x=1', 'https://www.google.com/search?q=x', 'https://Docs.Example.com/page', 'not a url'];
const STATUSES = [undefined, 200, 301, 404, 410, 500];

interface NotFoundRef extends RefEvent {
  referrer: string | null;
  /** The (address, user agent) the server derives an identity from; null: sent without an address. */
  derived: string | null;
}

function generate(seed: number, n: number) {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: Record<string, unknown>[] = [];
  const views: RefEvent[] = [];
  const missing: NotFoundRef[] = [];
  for (let i = 0; i < n; i++) {
    const ts = D0 + Math.floor(r() * 6 * DAY);
    const path = pick(PATHS);
    const who = r();
    const [ua, cls] = who < 0.6 ? [HUMAN_UA, 'human' as const] : who < 0.9 ? [AI_UA, 'ai' as const] : [CRAWLER_UA, 'none' as const];
    const visitor = `v${Math.floor(r() * 40)}`;
    const status = pick(STATUSES);
    const referrer = pick(REFERRERS);
    // Most views name an address too, from a few addresses: many visitorIds share one (address, agent).
    const ip = r() < 0.7 ? `203.0.113.${Math.floor(r() * 6)}` : undefined;
    events.push({ timestamp: new Date(ts).toISOString(), path, userAgent: ua, visitorId: visitor, ...(ip ? { ip } : {}), ...(referrer ? { referrer } : {}), ...(status ? { status } : {}) });
    if (status === 404 || status === 410) {
      const derived = ip ? `${ip} ${ua}` : null;
      if (cls !== 'none') missing.push({ ts, path, visitor, cls, referrer: referrer && /^https?:/.test(referrer) ? new URL(referrer).hostname.toLowerCase() : null, derived });
    } else views.push({ ts, path, visitor, cls });
  }
  return { events, views, missing };
}

/** The not-found report computed with plain Sets. */
function notFoundReference(missing: NotFoundRef[], from: number | null, to: number | null) {
  const inRange = missing.filter((e) => (from === null || e.ts >= from) && (to === null || e.ts < to));
  const per = new Map<string, NotFoundRef[]>();
  for (const e of inRange) per.set(e.path, [...(per.get(e.path) ?? []), e]);
  const distinct = (list: NotFoundRef[], cls?: string) => new Set(list.filter((e) => !cls || e.cls === cls).map((e) => e.visitor)).size;
  const derived = (list: NotFoundRef[]) => new Set(list.filter((e) => e.derived !== null).map((e) => e.derived)).size;
  const paths = [...per.entries()].map(([path, list]) => {
    const hosts = new Map<string | null, Set<string>>();
    for (const e of list) hosts.set(e.referrer, (hosts.get(e.referrer) ?? new Set()).add(e.visitor));
    const referrers = [...hosts.entries()]
      .map(([host, v]) => ({ host, visitors: v.size }))
      .sort((a, b) => b.visitors - a.visitors || (a.host === null ? 1 : b.host === null ? -1 : a.host < b.host ? -1 : 1))
      .slice(0, 5);
    const ts = list.map((e) => e.ts);
    return {
      path,
      human: distinct(list, 'human'),
      ai: distinct(list, 'ai'),
      total: distinct(list),
      derivedVisitors: derived(list),
      views: list.length,
      firstSeen: new Date(Math.min(...ts)).toISOString(),
      lastSeen: new Date(Math.max(...ts)).toISOString(),
      referrers,
    };
  });
  paths.sort((x, y) => y.total - x.total || utf8Compare(x.path, y.path));
  return { totals: { human: distinct(inRange, 'human'), ai: distinct(inRange, 'ai'), total: distinct(inRange), derivedVisitors: derived(inRange), views: inRange.length }, paths };
}

describe('not-found views', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  const data = generate(404, 900);

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject({ siteOrigins: ['https://docs.example.com'] });
    key = await server.createKey(projectId);
    for (let i = 0; i < data.events.length; i += 300) {
      const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: data.events.slice(i, i + 300) } });
      expect(res.status).toBe(202);
      expect(res.body.rejected).toEqual([]);
    }
  });
  afterAll(async () => server?.close());

  /** Every page of a report, with `limit` rows a page. */
  async function allPages(query: string, limit: number): Promise<{ totals: unknown; paths: unknown[] }> {
    const paths: unknown[] = [];
    let totals: unknown;
    for (let offset = 0; ; offset += limit) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/not-found?${query}&limit=${limit}&offset=${offset}`, { key });
      expect(res.status).toBe(200);
      totals = res.body.totals;
      paths.push(...res.body.paths);
      if (!res.body.hasMore) return { totals, paths };
    }
  }

  it('reports each path that answered 404 or 410 with exact visitors, views, first and last seen and referrers', async () => {
    for (const [from, to] of [[null, null], [D0 + DAY, D0 + 4 * DAY], [D0 + 2 * DAY + 3_600_000, D0 + 2 * DAY + 7_200_000]] as const) {
      const query = [from === null ? '' : `dateFrom=${new Date(from).toISOString()}`, to === null ? '' : `dateTo=${new Date(to).toISOString()}`].filter(Boolean).join('&');
      const expected = notFoundReference(data.missing, from, to);
      expect(await allPages(query, 3)).toEqual(expected);
      expect(await allPages(query, 250)).toEqual(expected);
    }
  });

  it('leaves /visitors and /views exactly as the same traffic without the not-found views gives', async () => {
    const visitors = (await server.api('GET', `/v1/analytics/${projectId}/visitors?limit=250`, { key })).body;
    const views = (await server.api('GET', `/v1/analytics/${projectId}/views?limit=250`, { key })).body;
    const refVisitors = reference(data.views, null, null, 'visitors');
    const refViews = reference(data.views, null, null, 'views');
    expect({ totals: visitors.totals, rows: visitors.visitors }).toEqual(refVisitors);
    expect({ totals: views.totals, rows: views.views }).toEqual(refViews);
  });

  it('refuses a status that is not an HTTP status, one event at a time', async () => {
    const bad = [99, 600, 404.5, '404', true].map((status) => ({ path: '/x', userAgent: HUMAN_UA, visitorId: 'v', status }));
    const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: [...bad, { path: '/ok', userAgent: HUMAN_UA, visitorId: 'v', status: 404 }] } });
    expect(res.status).toBe(202);
    expect(res.body.accepted).toBe(1);
    expect(res.body.rejected.map((r: { index: number; code: string }) => [r.index, r.code])).toEqual([0, 1, 2, 3, 4].map((i) => [i, 'invalid_status']));
    expect(res.body.rejected[0].error).toBe('"status" must be an HTTP status code, a whole number from 100 to 599.');
  });

  it('the browser script’s 404 page reports through collect; a bad status there is a 400', async () => {
    const collect = (body: unknown) =>
      server.api('POST', `/v1/analytics/${projectId}/collect`, {
        body: JSON.stringify(body),
        headers: { origin: 'https://docs.example.com', 'user-agent': HUMAN_UA, 'content-type': 'text/plain', 'x-forwarded-for': '198.51.100.7' },
      });
    expect((await collect({ path: '/from-the-browser', status: 404, visitorId: 'b1' })).status).toBe(204);
    const refused = await collect({ path: '/x', status: 'missing' });
    expect(refused.status).toBe(400);
    expect(refused.body.code).toBe('invalid_status');
    const res = await server.api('GET', `/v1/analytics/${projectId}/not-found?limit=250`, { key });
    // The browser's own visitorId names the visitor; the request's address and agent the derived identity.
    expect(res.body.paths.find((p: { path: string }) => p.path === '/from-the-browser')).toMatchObject({ human: 1, total: 1, derivedVisitors: 1, views: 1 });
  });

  it('a batch sent again with its Idempotency-Key counts its not-found views once', async () => {
    const body = { events: [{ path: '/replayed', userAgent: AI_UA, visitorId: 'r1', status: 404 }, { path: '/replayed', userAgent: AI_UA, visitorId: 'r2', status: 410 }] };
    const headers = { 'idempotency-key': 'not-found-replay-1' };
    expect((await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body, headers })).body.accepted).toBe(2);
    const again = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body, headers });
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    const row = (await server.api('GET', `/v1/analytics/${projectId}/not-found?limit=250`, { key })).body.paths.find((p: { path: string }) => p.path === '/replayed');
    expect(row).toMatchObject({ ai: 2, total: 2, views: 2 });
  });
});
