// Where readers come from: referring hosts of page views with exact visitors (against plain Sets),
// classed by the source list, per class, and per day the humans sent by AI answers. Only the host of
// a referrer is stored; the project's own pages are no referrers. On DuckDB, and on ClickHouse in the scale leg.
import { referrers } from '../../src/analytics/reports/referrers.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { clf, rng, utf8Compare } from './helpers.ts';
import { SOURCE } from '../../src/analytics/engine.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 5, 2);
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const CRAWLER_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
/** Referrers as sent, and the host and class each must be counted under. */
const REFERRERS: [string | undefined, string | null, string][] = [
  [undefined, null, 'other'],
  ['https://chatgpt.com/c/68a?model=x', 'chatgpt.com', 'ai_assistant'],
  ['https://www.perplexity.ai/search/abc', 'www.perplexity.ai', 'ai_assistant'],
  ['https://claude.ai/chat/1', 'claude.ai', 'ai_assistant'],
  ['https://www.google.com/search?q=folio', 'www.google.com', 'search'],
  ['https://news.ycombinator.com/item?id=1', 'news.ycombinator.com', 'social'],
  ['https://Blog.Example.org/post', 'blog.example.org', 'other'],
  ['not a url', null, 'other'],
  // Only a valid host name is kept, in its ASCII (IDNA) form; anything else counts as no referrer.
  ['https://Bücher.example/seite', 'xn--bcher-kva.example', 'other'],
  ['https://www.google.com./search?q=x', 'www.google.com', 'search'],
  ['https://evil\u202e.example/x', null, 'other'],
  ['https://chat\u2028gpt.com/', null, 'other'],
  ['https://exa mple.com/', null, 'other'],
  ['https://-bad-.example/', null, 'other'],
  ['https://a..b.example/', null, 'other'],
];

interface Ref {
  ts: number;
  visitor: string;
  cls: 'human' | 'ai';
  host: string | null;
  source: string;
}

function generate(seed: number, n: number) {
  const r = rng(seed);
  const events: Record<string, unknown>[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = D0 + Math.floor(r() * 4 * DAY);
    const [referrer, host, source] = REFERRERS[Math.floor(r() * REFERRERS.length)];
    const who = r();
    const [ua, cls] = who < 0.6 ? [HUMAN_UA, 'human' as const] : who < 0.9 ? [AI_UA, 'ai' as const] : [CRAWLER_UA, null];
    const visitor = `v${Math.floor(r() * 50)}`;
    events.push({ timestamp: new Date(ts).toISOString(), path: `/p${Math.floor(r() * 5)}`, userAgent: ua, visitorId: visitor, ...(referrer ? { referrer } : {}) });
    if (cls) ref.push({ ts, visitor, cls, host, source });
  }
  return { events, ref };
}

function expected(ref: Ref[]) {
  const counts = (list: Ref[]) => ({
    human: new Set(list.filter((e) => e.cls === 'human').map((e) => e.visitor)).size,
    ai: new Set(list.filter((e) => e.cls === 'ai').map((e) => e.visitor)).size,
    total: new Set(list.map((e) => e.visitor)).size,
  });
  const referred = ref.filter((e) => e.host !== null);
  const hosts = [...new Set(referred.map((e) => e.host!))].map((host) => {
    const list = referred.filter((e) => e.host === host);
    return { host, source: list[0].source, ...counts(list) };
  });
  hosts.sort((a, b) => b.total - a.total || utf8Compare(a.host, b.host));
  const classes = ['ai_assistant', 'search', 'social', 'other'].map((source) => ({ source, ...counts(referred.filter((e) => e.source === source)) }));
  const days = [...new Set(ref.map((e) => Math.floor(e.ts / DAY)))].sort((a, b) => a - b).flatMap((day) => {
    const humans = ref.filter((e) => e.cls === 'human' && Math.floor(e.ts / DAY) === day);
    if (humans.length === 0) return [];
    const fromAi = new Set(humans.filter((e) => e.source === 'ai_assistant').map((e) => e.visitor)).size;
    return [{ start: new Date(day * DAY).toISOString(), humans: new Set(humans.map((e) => e.visitor)).size, fromAiAssistant: fromAi }];
  });
  return { classes, hosts, days };
}

describe('referrers', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  const data = generate(7, 800);

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId);
    const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: data.events } });
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(async () => server?.close());

  it('counts each referring host and class exactly, and the humans sent by AI answers per day', async () => {
    const want = expected(data.ref);
    const hosts: unknown[] = [];
    let body: { classes: unknown; aiShare: unknown; hasMore: boolean; referrers: unknown[] } | undefined;
    for (let offset = 0; !body || body.hasMore; offset += 2) {
      body = (await server.api('GET', `/v1/analytics/${projectId}/referrers?limit=2&offset=${offset}`, { key })).body;
      hosts.push(...body!.referrers);
    }
    expect(hosts).toEqual(want.hosts);
    expect(body!.classes).toEqual(want.classes);
    expect(body!.aiShare).toEqual(want.days);
  });

  it('keeps only the referrer’s host', async () => {
    const res = await server.api('GET', `/v1/analytics/${projectId}/referrers?limit=250`, { key });
    expect(res.body.referrers.map((r: { host: string }) => r.host).every((h: string) => !/[/?:]/.test(h))).toBe(true);
  });
});

describe('a project’s own pages are no referrers', () => {
  const SITE = 'https://docs.example.com';
  const DEV = 'http://127.0.0.1:5173';
  const AT = Date.now() - 120_000;
  let server: TestServer;
  let projectId: string;
  let key: string;

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject({ siteOrigins: [SITE, DEV] });
    key = await server.createKey(projectId, 'write');
  });
  afterAll(async () => server?.close());

  it('counts a page view referred by the site’s own pages as direct, on every way in, and stores no referrer for it', async () => {
    const at = new Date(AT).toISOString();
    const events = [
      { visitorId: 'v1', referrer: 'https://chatgpt.com/c/1' },
      { visitorId: 'v2', referrer: `${SITE}/guide/start?x=1` },
      { visitorId: 'v3', referrer: `${DEV}/docs/` },
      { visitorId: 'v4' },
    ].map((e) => ({ timestamp: at, path: '/docs/a', userAgent: HUMAN_UA, ...e }));
    expect((await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } })).body.rejected).toEqual([]);
    for (const [visitorId, referrer] of [['c1', `${SITE}/guide`], ['c2', 'https://www.google.com/']]) {
      const res = await server.api('POST', `/v1/analytics/${projectId}/collect`, {
        body: JSON.stringify({ path: '/docs/b', visitorId, referrer }),
        headers: { origin: SITE, 'content-type': 'text/plain', 'user-agent': HUMAN_UA },
      });
      expect(res.status).toBe(204);
    }
    const ndjson = [{ v: 'n1', r: `${SITE}/x` }, { v: 'n2', r: 'https://news.ycombinator.com/item?id=1' }].map((e) => JSON.stringify({ t: AT, p: '/docs/c', ua: HUMAN_UA, ...e }));
    const nd = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body: ndjson.join('\n') + '\n', headers: { 'content-type': 'application/x-ndjson' } });
    expect(nd.body).toMatchObject({ recorded: 2, rejected: 0 });
    const log = [
      `203.0.113.5 - - [${clf(AT)}] "GET /docs/d HTTP/1.1" 200 512 "${SITE}/docs/a" "${HUMAN_UA}"`,
      `203.0.113.6 - - [${clf(AT)}] "GET /docs/d HTTP/1.1" 200 512 "https://chatgpt.com/" "${HUMAN_UA}"`,
      // A not-found view referred by the site's own page keeps it: a link on the site is broken.
      `203.0.113.7 - - [${clf(AT)}] "GET /docs/gone HTTP/1.1" 404 512 "${SITE}/docs/a" "${HUMAN_UA}"`,
    ];
    const raw = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body: log.join('\n') + '\n', headers: { 'content-type': 'text/plain' } });
    expect(raw.body).toMatchObject({ recorded: 3, rejected: 0 });

    const report = (await server.api('GET', `/v1/analytics/${projectId}/referrers?limit=50`, { key })).body;
    expect(report.referrers).toEqual([
      { host: 'chatgpt.com', source: 'ai_assistant', human: 2, ai: 0, total: 2 },
      { host: 'news.ycombinator.com', source: 'social', human: 1, ai: 0, total: 1 },
      { host: 'www.google.com', source: 'search', human: 1, ai: 0, total: 1 },
    ]);
    expect(report.classes).toEqual([
      { source: 'ai_assistant', human: 2, ai: 0, total: 2 },
      { source: 'search', human: 1, ai: 0, total: 1 },
      { source: 'social', human: 1, ai: 0, total: 1 },
      { source: 'other', human: 0, ai: 0, total: 0 },
    ]);
    // Every reader still counts among the humans of the day (each has one view, so days add up).
    const days = report.aiShare as { humans: number; fromAiAssistant: number }[];
    expect(days.reduce((n, d) => n + d.humans, 0)).toBe(10);
    expect(days.reduce((n, d) => n + d.fromAiAssistant, 0)).toBe(2);
    // Dropped at ingest: read without the rule, the stored rows name no own host either.
    const engine = server.services.analytics.engine;
    const stored = await engine.run(referrers, { projectId: projectId, range: { from: null, to: null }, limit: 50, offset: 0, rules: ClassificationRules.load() });
    expect(stored.rows.map((r) => r.host)).toEqual(['chatgpt.com', 'news.ycombinator.com', 'www.google.com']);
    const missing = await server.api('GET', `/v1/analytics/${projectId}/not-found`, { key });
    expect(missing.body.paths[0].referrers).toEqual([{ host: 'docs.example.com', visitors: 1 }]);
  });

  it('reads rows stored with an own referrer before the rule as having none', async () => {
    const other = await server.createProject({ name: 'Older rows', siteOrigins: [SITE] });
    const otherKey = await server.createKey(other);
    const engine = server.services.analytics.engine;
    // As ingest stored them before: the host, or (older still) the whole URL.
    const base = { projectId: other, ts: AT, path: '/docs/a', cls: CLASS_CODE.human, agent: null, source: SOURCE.api, importKey: null, group: 0 };
    await engine.write([
      { ...base, visitor: 1n, referrer: 'docs.example.com' },
      { ...base, visitor: 2n, referrer: `${SITE}/guide/start` },
      { ...base, visitor: 3n, referrer: 'www.google.com' },
      { ...base, visitor: 4n, referrer: null },
    ]);
    const report = (await server.api('GET', `/v1/analytics/${other}/referrers?limit=50`, { key: otherKey })).body;
    expect(report.referrers).toEqual([{ host: 'www.google.com', source: 'search', human: 1, ai: 0, total: 1 }]);
    expect(report.classes.find((c: { source: string }) => c.source === 'other')).toEqual({ source: 'other', human: 0, ai: 0, total: 0 });
    expect(report.aiShare.reduce((n: number, d: { humans: number }) => n + d.humans, 0)).toBe(4);
    // The rows themselves are unchanged: without the rule they still name the site.
    const plain = await engine.run(referrers, { projectId: other, range: { from: null, to: null }, limit: 50, offset: 0, rules: ClassificationRules.load() });
    expect(plain.rows.map((r) => [r.host, r.total])).toEqual([['docs.example.com', 2], ['www.google.com', 1]]);
  });
});
