// End to end: events API → DuckDB → visitors/views queries, compared with an independent reference
// on generated edge-case data, before and after compaction, and paged through completely.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { reference, rng, upstreamValidator, type RefEvent } from './helpers.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 2, 10); // 2025-03-10
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';
const CODING_UA = 'claude-code/2.0.14 (external, cli)';
const CRAWLER_UA = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const TRAINING_UA = 'CCBot/2.0 (https://commoncrawl.org/faq/)';

const PATHS = ['/', '/docs', '/docs/', '/docs/install', '/docs/install?ref=nav', '/docs/install#step-2', '/guide/café', '/guide/日本語',
  '/guide/😀', '/guide/z', '/guide/ä', '/api/reference.md', '/llms.txt', '/a', '/b', '/B', '/docs/install/'];
const normalise = (p: string) => p.replace(/[?#].*$/, '');

/** ISO string of `ms` written with a UTC offset of `offsetMin` minutes. */
function isoWithOffset(ms: number, offsetMin: number): string {
  const local = new Date(ms + offsetMin * 60_000).toISOString().slice(0, 19);
  const sign = offsetMin >= 0 ? '+' : '-';
  const a = Math.abs(offsetMin);
  return `${local}${sign}${String(Math.floor(a / 60)).padStart(2, '0')}:${String(a % 60).padStart(2, '0')}`;
}

function generate(seed: number, n: number): { api: Record<string, unknown>[]; ref: RefEvent[] } {
  const r = rng(seed);
  const api: Record<string, unknown>[] = [];
  const ref: RefEvent[] = [];
  const add = (ts: number, rawPath: string, ua: string, visitor: string, cls: RefEvent['cls'], iso: string, accept?: string) => {
    const ev: Record<string, unknown> = { timestamp: iso, path: rawPath, userAgent: ua, visitorId: visitor };
    if (accept) ev.accept = accept;
    api.push(ev);
    // A human-looking client reading Markdown counts as AI.
    if (cls === 'human' && /\.md$|llms\.txt$/.test(normalise(rawPath))) cls = 'ai';
    ref.push({ ts, path: normalise(rawPath), visitor, cls });
  };
  // Edge cases: exactly on day bounds, one visitor human and AI, one visitor on every path.
  add(D0 + DAY, '/docs', HUMAN_UA, 'v-both', 'human', new Date(D0 + DAY).toISOString());
  add(D0 + DAY, '/docs', AI_UA, 'v-both', 'ai', isoWithOffset(D0 + DAY, 120));
  add(D0 + 2 * DAY - 1, '/docs', HUMAN_UA, 'v-edge', 'human', new Date(D0 + 2 * DAY - 1).toISOString());
  add(D0 + 2 * DAY, '/docs', HUMAN_UA, 'v-edge2', 'human', isoWithOffset(D0 + 2 * DAY, -300));
  PATHS.forEach((p, i) => add(D0 + DAY + i * 1000, p, HUMAN_UA, 'v-everywhere', 'human', new Date(D0 + DAY + i * 1000).toISOString()));
  add(D0 + 3 * DAY + 5, '/guide/notes', HUMAN_UA, 'v-md', 'ai', new Date(D0 + 3 * DAY + 5).toISOString(), 'text/markdown, text/html;q=0.5');
  for (let i = 0; i < n; i++) {
    const ts = D0 + Math.floor(r() * 5 * DAY);
    const p = PATHS[Math.floor(Math.pow(r(), 2) * PATHS.length)];
    const visitor = `v${Math.floor(Math.pow(r(), 1.5) * n * 0.2)}`;
    const kind = r();
    let ua = HUMAN_UA;
    let cls: RefEvent['cls'] = 'human';
    if (kind < 0.2) [ua, cls] = [AI_UA, 'ai'];
    else if (kind < 0.3) [ua, cls] = [CODING_UA, 'ai'];
    else if (kind < 0.35) [ua, cls] = [CRAWLER_UA, 'none'];
    else if (kind < 0.38) [ua, cls] = [TRAINING_UA, 'none'];
    const off = [0, 60, -240, 330, 545, -720][Math.floor(r() * 6)];
    add(ts, p, ua, visitor, cls, isoWithOffset(ts, off));
  }
  return { api, ref };
}

describe('visitors and views against a reference', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  let readKey: string;
  const all: RefEvent[] = [];
  const validVisitors = upstreamValidator('VisitorsByPageResponse');
  const validViews = upstreamValidator('ViewsByPageResponse');

  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
    projectId = await server.createProject();
    key = await server.createKey(projectId, 'write');
    readKey = await server.createKey(projectId, 'read');
  });
  afterAll(async () => server?.close());

  async function send(events: Record<string, unknown>[]) {
    for (let i = 0; i < events.length; i += 1000) {
      const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: events.slice(i, i + 1000) } });
      expect(res.status).toBe(202);
      expect(res.body.rejected).toEqual([]);
      expect(res.body.accepted).toBe(Math.min(1000, events.length - i));
    }
  }

  const ranges: [string | undefined, string | undefined][] = [
    [undefined, undefined],
    ['2025-03-11', '2025-03-12'],
    ['2025-03-11', undefined],
    [undefined, '2025-03-12'],
    ['2025-03-10', '2025-03-15'],
    ['2025-03-11T00:00:00+02:00', '2025-03-12T12:30:00-03:00'],
    ['2025-03-11T06:00:00Z', '2025-03-11T18:00:00Z'],
    ['2025-03-12T00:00:00.000Z', '2025-03-12T00:00:00Z'],
    ['2025-03-11T23:59:59.999Z', '2025-03-13T00:00:00.001Z'],
    ['2025-03-09', '2025-03-10'],
  ];

  async function checkAll(label: string) {
    for (const [from, to] of ranges) {
      const q = new URLSearchParams();
      if (from) q.set('dateFrom', from);
      if (to) q.set('dateTo', to);
      const f = from ? Date.parse(from) : null;
      const t = to ? Date.parse(to) : null;
      for (const mode of ['visitors', 'views'] as const) {
        const expected = reference(all, f, t, mode);
        const got: { path: string; human: number; ai: number; total: number }[] = [];
        let offset = 0;
        let totals: unknown = null;
        for (;;) {
          const res = await server.api('GET', `/v1/analytics/${projectId}/${mode}?${q}&limit=7&offset=${offset}`, { key: readKey });
          expect(res.status, `${label} ${mode} ${from}..${to}`).toBe(200);
          expect(mode === 'visitors' ? validVisitors(res.body) : validViews(res.body)).toBeNull();
          totals ??= res.body.totals;
          expect(res.body.totals).toEqual(totals);
          got.push(...res.body[mode]);
          if (!res.body.hasMore) break;
          expect(res.body[mode]).toHaveLength(7);
          offset += 7;
        }
        expect({ totals, rows: got }, `${label} ${mode} ${from}..${to}`).toEqual(expected);
        expect(new Set(got.map((r) => r.path)).size).toBe(got.length);
      }
    }
  }

  it('matches the reference before compaction, after compaction, and with both', async () => {
    const first = generate(1, 3000);
    await send(first.api);
    all.push(...first.ref);
    await checkAll('recent only');
    await server.services.analytics.compact();
    if (server.services.analytics.engine.name === 'duckdb') expect(server.services.analytics.engine.pendingRows()).toBe(0);
    await checkAll('compacted');
    const second = generate(2, 2000);
    await send(second.api);
    all.push(...second.ref);
    await checkAll('compacted + recent');
    await server.services.analytics.compact();
    await checkAll('compacted twice');
  });

  it('counts a visitor seen as human and as AI once in total, and a visitor on many paths once site-wide', async () => {
    const res = await server.api('GET', `/v1/analytics/${projectId}/visitors?dateFrom=2025-03-11&dateTo=2025-03-12&limit=250`, { key: readKey });
    const expected = reference(all, Date.parse('2025-03-11'), Date.parse('2025-03-12'));
    expect(res.body.totals).toEqual(expected.totals);
    expect(expected.totals.total).toBeLessThan(expected.totals.human + expected.totals.ai);
    const docs = res.body.visitors.find((r: { path: string }) => r.path === '/docs');
    expect(docs.total).toBeLessThan(docs.human + docs.ai);
    const paths = res.body.visitors.map((r: { path: string }) => r.path);
    for (const p of ['/docs/', '/docs/install', '/docs/install/', '/guide/café', '/guide/日本語', '/guide/😀']) expect(paths).toContain(p);
    expect(paths).not.toContain('/docs/install?ref=nav');
  });

  it('defaults to limit 50 and offset 0 and reports hasMore exactly', async () => {
    const res = await server.api('GET', `/v1/analytics/${projectId}/visitors`, { key: readKey });
    const expected = reference(all, null, null);
    expect(res.body.visitors).toEqual(expected.rows.slice(0, 50));
    expect(res.body.hasMore).toBe(expected.rows.length > 50);
    const n = expected.rows.length;
    const exact = await server.api('GET', `/v1/analytics/${projectId}/visitors?limit=${Math.min(250, n)}`, { key: readKey });
    expect(exact.body.hasMore).toBe(n > 250);
    const past = await server.api('GET', `/v1/analytics/${projectId}/visitors?offset=${n}`, { key: readKey });
    expect(past.body).toEqual({ totals: expected.totals, visitors: [], hasMore: false });
  });
});

describe('compaction keeps counts exact whatever the arrival order', () => {
  it('matches the reference for every whole-day range after in-order, same-day and late arrivals', async () => {
    const server = await startTestServer({ workers: 0 });
    try {
      const analytics = server.services.analytics;
      const projectId = await server.createProject();
      const r = rng(99);
      const ref: RefEvent[] = [];
      const uas = [HUMAN_UA, AI_UA];
      for (let round = 0; round < 8; round++) {
        // Rounds move forward in time but also send late events for earlier days.
        const events: Record<string, unknown>[] = [];
        for (let i = 0; i < 300; i++) {
          const day = r() < 0.7 ? Math.min(7, round) : Math.floor(r() * (round + 1));
          const ts = D0 + day * DAY + Math.floor(r() * DAY);
          const visitor = `u${Math.floor(r() * 60)}`;
          const human = r() < 0.6;
          const path = `/p${Math.floor(r() * 8)}`;
          events.push({ timestamp: new Date(ts).toISOString(), path, userAgent: uas[human ? 0 : 1], visitorId: visitor });
          ref.push({ ts, path, visitor, cls: human ? 'human' : 'ai' });
        }
        const res = await analytics.ingest(projectId, events, D0 + 30 * DAY);
        expect(res.rejected).toEqual([]);
        // DuckDB compacts every row written so far; ClickHouse folds rows older than a minute (the engine
        // tests fold with no margin), so here its answers come from unfolded rows: both must be exact.
        if (round % 3 !== 2) {
          await analytics.compact();
          if (analytics.engine.name === 'duckdb') expect(analytics.engine.pendingRows()).toBe(0);
        } else expect(analytics.engine.pendingRows()).toBeGreaterThan(0);
        for (let d1 = -1; d1 <= 8; d1++) {
          for (let d2 = d1 + 1; d2 <= 9; d2++) {
            const from = d1 < 0 ? null : D0 + d1 * DAY;
            const to = d2 > 8 ? null : D0 + d2 * DAY;
            const got = await analytics.engine.run(visitors, { projectId, range: { from, to }, limit: 250, offset: 0 });
            const expected = reference(ref, from, to);
            expect({ totals: got.totals, rows: got.rows }, `round ${round} days ${d1}..${d2}`).toEqual(expected);
          }
        }
      }
    } finally {
      await server.close();
    }
  });
});
