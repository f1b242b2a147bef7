// Where readers come from: referring hosts of page views with exact visitors (against plain Sets),
// classed by the source list, per class, and per day the humans sent by AI answers. Only the host of
// a referrer is stored. On DuckDB, and on ClickHouse in the scale leg.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { rng, utf8Compare } from './helpers.ts';

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
