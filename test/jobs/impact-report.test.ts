// The counts of a merged job's impact (analytics/reports/job-impact.ts) on DuckDB, a ClickHouse
// server (FOLIO_TEST_CLICKHOUSE_URL) and ClickHouse in-process (chdb), against plain Sets over the
// written events: a moved page whose old address answered 404 before the merge and redirects after,
// an edited page, an added redirect; the windows equal whole UTC days either side of the merge's day,
// clipped to the days since the merge (a job merged two days ago) and to the first event there is;
// nothing counted before a whole day after the merge's day is over; rows not compacted yet counted with
// the compacted ones, a merge inside a day and one exactly at midnight; the merge's day in neither window.
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

type Windows = NonNullable<JobImpactResult['windows']>;
const dayOf = (t: number) => Math.floor(t / DAY) * DAY;
/** Whole-day windows of `n` days either side of the day of a merge at `at`, that day left out. */
const whole = (n: number, at = MERGED) => ({ before: { from: dayOf(at) - n * DAY, to: dayOf(at) }, after: { from: dayOf(at) + DAY, to: dayOf(at) + DAY + n * DAY } });

/** The answer from plain Sets over the events in the windows. */
function expected(ref: Ref[], { before: b, after: a }: Pick<Windows, 'before' | 'after'>, pages = PAGES) {
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
  const before = ref.filter((e) => e.ts >= b.from && e.ts < b.to);
  const after = ref.filter((e) => e.ts >= a.from && e.ts < a.to);
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

  it.skipIf(skip)('counts each page and the total exactly as plain Sets, in equal whole-day windows clipped to the days since the merge and to the data', async () => {
    await withEngine('folio_impact', async (engine) => {
    const data = generate(34, 3000, START);
    for (let s = 0; s < data.events.length; s += 500) await engine.write(data.events.slice(s, s + 500));
    await engine.compact();
    const run = (days: number, now: number, projectId = P): Promise<JobImpactResult> => engine.run(jobImpact, { projectId, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages: PAGES, at: MERGED, days, now });

    // Five days after the merge (four whole days after its day over), three-day windows: not clipped.
    const full = await run(3, MERGED + 5 * DAY);
    expect(full.windows).toEqual({ ...whole(3), length: 3 * DAY, clipped: null });
    expect(full.windows?.before.to).toBe(START + 10 * DAY);
    expect(full.windows?.after.from).toBe(START + 11 * DAY);
    const want = expected(data.ref, whole(3));
    expect({ total: full.total, pages: full.pages }).toEqual(want);
    // The scenario is there: the old address missed before the merge, humans came from AI answers, dedupe across pages matters.
    expect(want.pages[0].before.notFound).toBeGreaterThan(want.pages[0].after.notFound);
    expect(want.pages[0].after.notFound).toBeGreaterThan(0);
    expect(want.total.after.fromAiAnswers).toBeGreaterThan(0);
    expect(want.total.after.humans).toBeLessThan(want.pages.reduce((n, p) => n + p.after.humans, 0));

    // Merged two days ago, 14 days asked: one whole day after the merge's day is over, so both windows are one day, and said so.
    const recent = await run(14, MERGED + 2 * DAY);
    expect(recent.windows).toMatchObject({ ...whole(1), length: DAY });
    expect(recent.windows?.clipped).toMatch(/merged 2 days ago: both windows are 1 whole day instead of 14/);
    expect({ total: recent.total, pages: recent.pages }).toEqual(expected(data.ref, whole(1)));

    // 30 days asked, the data starts 10.x days before the merge, inside a day: clipped to its 9 whole days.
    const long = await run(30, MERGED + 40 * DAY);
    const first = Math.min(...data.ref.map((e) => e.ts));
    expect(first).toBeGreaterThan(START);
    expect(long.windows).toMatchObject({ ...whole(9), length: 9 * DAY });
    expect(long.windows?.clipped).toMatch(/recorded traffic starts 10\.\d days before the merge: both windows are 9 whole days instead of 30/);
    expect({ total: long.total, pages: long.pages }).toEqual(expected(data.ref, whole(9)));

    // Until the first whole day after the merge's day is over: no windows, nothing counted.
    expect((await run(14, MERGED + 20 * 3_600_000)).windows).toBeNull();
    expect((await run(14, START + 12 * DAY - 1)).windows).toBeNull();
    expect((await run(14, START + 12 * DAY)).windows).toMatchObject({ ...whole(1), length: DAY });

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
      const want = expected(data.ref, whole(3), pages);
      expect(want.pages[count - 1].after.humans).toBeGreaterThan(0);
      expect({ total: got.total, pages: got.pages }).toEqual(want);
    }
    });
  });

  it.skipIf(skip)('counts the visitors of the busiest address seen nowhere else (DuckDB: from its rows\' links, not grouped) and the others alike', async () => {
    await withEngine('folio_impact_busiest', async (engine) => {
    const data = generate(38, 1500, START);
    // 300 more visitors on /intro, the busiest address, on several days each (before the windows, in
    // either, on the merge's day), as humans or AI; one in five also somewhere else or from an AI answer.
    const r = rng(39);
    const extra: StoredEvent[] = [];
    const extraRef: Ref[] = [];
    for (let v = 0; v < 300; v++) {
      const visitor = BigInt(2000 + v);
      const cls = v % 3 === 0 ? ('ai' as const) : ('human' as const);
      for (let k = 0; k < 1 + Math.floor(r() * 6); k++) {
        const ts = START + Math.floor(r() * 20 * DAY);
        const elsewhere = v % 5 === 0 && k === 1;
        const path = elsewhere && v % 2 === 0 ? '/legacy' : '/intro';
        const referrer = cls === 'human' && elsewhere && v % 2 === 1 ? 'chatgpt.com' : null;
        extra.push({ projectId: P, ts, path, visitor, cls: CLASS_CODE[cls], agent: cls === 'ai' ? 'ChatGPT-User' : null, referrer, source: SOURCE.api, importKey: null, notFound: false, group: 0 });
        extraRef.push({ ts, path, visitor, cls, fromAi: referrer !== null, notFound: false });
      }
    }
    // Compacted in two batches, so links cross them.
    await engine.write([...data.events.slice(0, 750), ...extra.slice(0, 400)]);
    await engine.compact();
    await engine.write([...data.events.slice(750), ...extra.slice(400)]);
    await engine.compact();
    const ref = [...data.ref, ...extraRef];
    for (const days of [1, 3, 9]) {
      const got = await engine.run(jobImpact, { projectId: P, range: { from: null, to: null }, ownHosts: OWN, rules: RULES, pages: PAGES, at: MERGED, days, now: MERGED + 12 * DAY });
      expect({ total: got.total, pages: got.pages }, `${days} days`).toEqual(expected(ref, whole(days)));
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
      expect(got.windows).toMatchObject(whole(3, at));
      const want = expected(data.ref, whole(3, at));
      expect(want.total.after.fromAiAnswers).toBeGreaterThan(0);
      expect({ total: got.total, pages: got.pages }).toEqual(want);
    }
    });
  });
  it.skipIf(skip)('leaves the day of the merge out of both windows, and counts a human from an AI answer on the windows\' first and last days, compacted or not', async () => {
    const HOUR = 3_600_000;
    const day = dayOf(MERGED);
    // [visitor, time, referrer]: views of /intro by humans on the days at the windows' bounds.
    const edges: [bigint, number, string | null][] = [
      [500n, day + 3 * HOUR, 'chatgpt.com'], // the merge's day, before the merge: in neither window
      [500n, day + 9 * HOUR, null],
      [501n, day + 11 * HOUR, 'www.perplexity.ai'], // the merge's day, after the merge: in neither
      [502n, day - 3 * DAY + 2 * HOUR, 'chatgpt.com'], // the before-window's first day: from AI before
      [503n, day + 3 * DAY + 23 * HOUR, 'chatgpt.com'], // the after-window's last day: from AI after
      [504n, day - 4 * DAY + 23 * HOUR, 'chatgpt.com'], // the day before the windows: not counted
      [505n, day + 4 * DAY + HOUR, 'chatgpt.com'], // the day after them: not counted
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
      const want = expected([...data.ref, ...extraRef], whole(3));
      const without = expected(data.ref, whole(3));
      // The extra visitors: 502 from AI before, 503 after; the others in no window.
      for (const side of ['before', 'after'] as const) {
        expect(want.pages[1][side].fromAiAnswers - without.pages[1][side].fromAiAnswers).toBe(1);
        expect(want.pages[1][side].humans - without.pages[1][side].humans).toBe(1);
      }
      expect({ total: got.total, pages: got.pages }).toEqual(want);
      });
    }
  });
});
