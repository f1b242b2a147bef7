// The counts of a merged job's impact (analytics/reports/job-impact.ts) on DuckDB, a ClickHouse
// server (FOLIO_TEST_CLICKHOUSE_URL) and ClickHouse in-process (chdb), against plain Sets over the
// written events: a moved page whose old address answered 404 before the merge and redirects after,
// an edited page, an added redirect; the windows equal, clipped to the time since the merge (a job
// merged two days ago) and to the first event there is; nothing counted before a day has passed; rows
// not compacted yet counted with the compacted ones, a merge inside a day and one exactly at midnight.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { addressesOf, jobImpact, type JobImpactResult } from '../../src/analytics/reports/job-impact.ts';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { rng } from '../analytics/helpers.ts';
import { freshName } from '../analytics-clickhouse/helpers.ts';
import { threeEngines } from '../analytics-clickhouse/engines.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DAY = 86_400_000;
const START = Date.UTC(2025, 8, 1);
const MERGED = START + 10 * DAY + 5 * 3_600_000;
const P = 'prj_impact';
const OWN = ownHostsOf(['https://docs.example.com']);
const RULES = ClassificationRules.load();

/** The touched pages as the service gives them: where views count, where not-found visitors count. */
const PAGES = [
  // moved: /guides/old → /guides/new
  { views: [...addressesOf('/guides/new'), ...addressesOf('/guides/old')], notFound: addressesOf('/guides/old') },
  // edited
  { views: addressesOf('/intro'), notFound: [] },
  // an added redirect /legacy → /intro
  { views: addressesOf('/legacy'), notFound: addressesOf('/legacy') },
];
const PATHS = ['/guides/new', '/guides/new/', '/guides/old', '/guides/old.md', '/intro', '/intro.md', '/intro/', '/legacy', '/other', '/guides/newer'];
/** Stored referrer hosts, and whether each is an AI answer. */
const REFERRERS: [string | null, boolean][] = [
  [null, false],
  ['chatgpt.com', true],
  ['https://chatgpt.com/c/1?x', true],
  // A whole URL's host is read in lower case: still an AI answer (DuckDB looks for AI hosts case-insensitively first).
  ['HTTPS://Claude.AI/chat/1', true],
  ['www.perplexity.ai', true],
  ['www.google.com', false],
  ['docs.example.com', false],
  ['evilchatgpt.com', false],
];

interface Ref {
  ts: number;
  path: string;
  visitor: bigint;
  cls: 'human' | 'ai' | 'search';
  fromAi: boolean;
  notFound: boolean;
}

function generate(seed: number, n: number, from: number): { events: StoredEvent[]; ref: Ref[] } {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: StoredEvent[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = from + Math.floor(r() * (START + 20 * DAY - from));
    const cls = pick(['human', 'human', 'ai', 'search'] as const);
    const [referrer, fromAi] = cls === 'human' ? pick(REFERRERS) : [null, false];
    let path = pick(PATHS);
    // The old address answered 404 before the merge; after it, it redirects (a view) — and some still miss.
    const notFound = (path.startsWith('/guides/old') || path === '/legacy') && (ts < MERGED || r() < 0.2);
    if (r() < 0.05) path = '/intro';
    const visitor = BigInt(1 + Math.floor(r() * 60));
    events.push({ projectId: P, ts, path, visitor, cls: CLASS_CODE[cls], agent: cls === 'human' ? null : cls === 'ai' ? 'ChatGPT-User' : 'Googlebot', referrer, source: SOURCE.api, importKey: null, notFound: notFound && path !== '/intro', group: 0 });
    ref.push({ ts, path, visitor, cls, fromAi, notFound: notFound && path !== '/intro' });
  }
  // Another project's views of the same paths count for nobody here.
  events.push({ projectId: 'prj_other', ts: MERGED + DAY, path: '/intro', visitor: 999n, cls: CLASS_CODE.human, agent: null, referrer: 'chatgpt.com', source: SOURCE.api, importKey: null, notFound: false, group: 0 });
  return { events, ref };
}

/** The answer from plain Sets over the events of [from, to) split at the merge `at`. */
function expected(ref: Ref[], from: number, to: number, at = MERGED, pages = PAGES) {
  const counts = (list: Ref[], addresses: string[], nfAddresses: string[]) => {
    const views = list.filter((e) => !e.notFound && e.cls !== 'search' && addresses.includes(e.path));
    const nf = list.filter((e) => e.notFound && e.cls !== 'search' && nfAddresses.includes(e.path));
    const humans = views.filter((e) => e.cls === 'human');
    return {
      humans: new Set(humans.map((e) => e.visitor)).size,
      ai: new Set(views.filter((e) => e.cls === 'ai').map((e) => e.visitor)).size,
      views: views.length,
      fromAiAnswers: new Set(humans.filter((e) => e.fromAi).map((e) => e.visitor)).size,
      notFound: new Set(nf.map((e) => e.visitor)).size,
    };
  };
  const before = ref.filter((e) => e.ts >= from && e.ts < at);
  const after = ref.filter((e) => e.ts >= at && e.ts < to);
  const all = [...new Set(pages.flatMap((p) => p.views))];
  const allNf = [...new Set(pages.flatMap((p) => p.notFound))];
  return {
    total: { before: counts(before, all, allNf), after: counts(after, all, allNf) },
    pages: pages.map((p) => ({ before: counts(before, p.views, p.notFound), after: counts(after, p.views, p.notFound) })),
  };
}

const { backends: BACKENDS, cleanup } = threeEngines('folio-job-impact-');
afterAll(cleanup);

describe.each(BACKENDS)('$name: the impact of a merged job', ({ skip, open, drop }) => {
  /** Runs `fn` on a new store, closed and dropped after. */
  const withEngine = async (prefix: string, fn: (engine: Awaited<ReturnType<typeof open>>) => Promise<void>) => {
    const store = freshName(prefix);
    const engine = await open(store);
    try {
      await fn(engine);
    } finally {
      await engine.close();
      await drop(store);
    }
  };

  it.skipIf(skip)('counts each page and the total exactly as plain Sets, in equal windows clipped to the time since the merge and to the data', async () => {
    await withEngine('folio_impact', async (engine) => {
    const data = generate(34, 3000, START);
    for (let s = 0; s < data.events.length; s += 500) await engine.write(data.events.slice(s, s + 500));
    await engine.compact();
    const run = (days: number, now: number, projectId = P): Promise<JobImpactResult> => engine.run(jobImpact, { projectId, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages: PAGES, at: MERGED, days, now });

    // Five days after the merge, three-day windows: not clipped.
    const full = await run(3, MERGED + 5 * DAY);
    expect(full.windows).toEqual({ before: { from: MERGED - 3 * DAY, to: MERGED }, after: { from: MERGED, to: MERGED + 3 * DAY }, length: 3 * DAY, clipped: null });
    const want = expected(data.ref, MERGED - 3 * DAY, MERGED + 3 * DAY);
    expect({ total: full.total, pages: full.pages }).toEqual(want);
    // The scenario is there: the old address missed before the merge, humans came from AI answers, dedupe across pages matters.
    expect(want.pages[0].before.notFound).toBeGreaterThan(want.pages[0].after.notFound);
    expect(want.pages[0].after.notFound).toBeGreaterThan(0);
    expect(want.total.after.fromAiAnswers).toBeGreaterThan(0);
    expect(want.total.after.humans).toBeLessThan(want.pages.reduce((n, p) => n + p.after.humans, 0));

    // Merged two days ago, 14 days asked: both windows two days, and said so.
    const recent = await run(14, MERGED + 2 * DAY);
    expect(recent.windows?.length).toBe(2 * DAY);
    expect(recent.windows?.clipped).toMatch(/merged 2 days ago: both windows are 2 days instead of 14/);
    expect({ total: recent.total, pages: recent.pages }).toEqual(expected(data.ref, MERGED - 2 * DAY, MERGED + 2 * DAY));

    // 30 days asked, the data starts 10.2 days before the merge: clipped to it.
    const long = await run(30, MERGED + 40 * DAY);
    const first = Math.min(...data.ref.map((e) => e.ts));
    expect(long.windows?.before.from).toBe(first);
    expect(long.windows?.clipped).toMatch(/recorded traffic starts 10\.\d days before the merge/);
    expect({ total: long.total, pages: long.pages }).toEqual(expected(data.ref, first, MERGED + (MERGED - first)));

    // Less than a day after the merge: no windows, nothing counted.
    const early = await run(14, MERGED + 20 * 3_600_000);
    expect(early.windows).toBeNull();

    // A project with nothing stored: zeros in unclipped windows.
    const none = await run(3, MERGED + 5 * DAY, 'prj_none');
    expect(none.total.after).toEqual({ humans: 0, ai: 0, views: 0, fromAiAnswers: 0, notFound: 0 });
    expect(none.pages).toHaveLength(3);
    });
  });

  it.skipIf(skip)('counts 32 pages (the last bit of either side in the DuckDB bit field) and 33 (more than fit: the per-page query) alike', async () => {
    await withEngine('folio_impact_many', async (engine) => {
    const data = generate(36, 2000, START);
    await engine.write(data.events);
    await engine.compact();
    for (const count of [32, 33]) {
      // The three pages over and over, and one address alone last: every page counted on its own.
      const pages = Array.from({ length: count }, (_, i) => (i === count - 1 ? { views: ['/other'], notFound: [] } : PAGES[i % PAGES.length]));
      const got = await engine.run(jobImpact, { projectId: P, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages, at: MERGED, days: 3, now: MERGED + 5 * DAY });
      const want = expected(data.ref, MERGED - 3 * DAY, MERGED + 3 * DAY, MERGED, pages);
      expect(want.pages[count - 1].after.humans).toBeGreaterThan(0);
      expect({ total: got.total, pages: got.pages }).toEqual(want);
    }
    });
  });

  it.skipIf(skip)('counts rows not compacted yet with the compacted ones, for a merge inside a day and one exactly at midnight', async () => {
    await withEngine('folio_impact_fresh', async (engine) => {
    const data = generate(35, 3000, START);
    // Half compacted, half written after (DuckDB: read from the raw rows above the compaction mark).
    await engine.write(data.events.slice(0, 1500));
    await engine.compact();
    for (let s = 1500; s < data.events.length; s += 500) await engine.write(data.events.slice(s, s + 500));
    const midnight = START + 10 * DAY;
    for (const at of [MERGED, midnight]) {
      const got = await engine.run(jobImpact, { projectId: P, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages: PAGES, at, days: 3, now: at + 5 * DAY });
      expect(got.windows?.before).toEqual({ from: at - 3 * DAY, to: at });
      const want = expected(data.ref, at - 3 * DAY, at + 3 * DAY, at);
      expect(want.total.after.fromAiAnswers).toBeGreaterThan(0);
      expect({ total: got.total, pages: got.pages }).toEqual(want);
    }
    });
  });
  it.skipIf(skip)('counts a human from an AI answer on a partial day by the view, not the day: the bound between their views of the page, compacted or not', async () => {
    const HOUR = 3_600_000;
    const day = (t: number) => Math.floor(t / DAY) * DAY;
    // [visitor, time, referrer]: two views of /intro on a day a window's bound cuts, the AI answer's on one side.
    const edges: [bigint, number, string | null][] = [
      [500n, day(MERGED) + 3 * HOUR, 'chatgpt.com'], // before the merge, from an AI answer…
      [500n, day(MERGED) + 9 * HOUR, null], // …after it, not: from AI before only
      [501n, day(MERGED) + 2 * HOUR, null],
      [501n, day(MERGED) + 11 * HOUR, 'www.perplexity.ai'], // from AI after only
      [502n, day(MERGED - 3 * DAY) + 2 * HOUR, 'chatgpt.com'], // before the windows: not counted…
      [502n, day(MERGED - 3 * DAY) + 10 * HOUR, null], // …a human before, not from AI
      [503n, day(MERGED + 3 * DAY) + 2 * HOUR, null], // a human after…
      [503n, day(MERGED + 3 * DAY) + 10 * HOUR, 'chatgpt.com'], // …from AI after the windows: not counted
    ];
    const extra: StoredEvent[] = edges.map(([visitor, ts, referrer]) => ({ projectId: P, ts, path: '/intro', visitor, cls: CLASS_CODE.human, agent: null, referrer, source: SOURCE.api, importKey: null, notFound: false, group: 0 }));
    const extraRef: Ref[] = edges.map(([visitor, ts, referrer]) => ({ ts, path: '/intro', visitor, cls: 'human', fromAi: referrer !== null, notFound: false }));
    for (const compacted of [true, false]) {
      await withEngine('folio_impact_edge', async (engine) => {
      const data = generate(37, 2000, START);
      await engine.write(data.events);
      if (compacted) await engine.write(extra);
      await engine.compact();
      if (!compacted) await engine.write(extra);
      const got = await engine.run(jobImpact, { projectId: P, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages: PAGES, at: MERGED, days: 3, now: MERGED + 5 * DAY });
      const want = expected([...data.ref, ...extraRef], MERGED - 3 * DAY, MERGED + 3 * DAY);
      const without = expected(data.ref, MERGED - 3 * DAY, MERGED + 3 * DAY);
      // The extra visitors: 500 from AI before, 501 after; 502 and 503 humans only.
      expect(want.pages[1].before.fromAiAnswers - without.pages[1].before.fromAiAnswers).toBe(1);
      expect(want.pages[1].after.fromAiAnswers - without.pages[1].after.fromAiAnswers).toBe(1);
      expect({ total: got.total, pages: got.pages }).toEqual(want);
      });
    }
  });
});
