// The engine contract: the ClickHouse engine answers exactly like the DuckDB engine on the same
// generated data (realistic traffic from the benchmark generator plus edge cases), for visitors,
// views, timeseries, agents and AI companies, on many ranges and pages, with batches arriving out of order and
// folds (ClickHouse) and compactions (DuckDB) in between, so folded, late and unfolded rows all meet.
// It runs on ClickHouse 18.16 (the server of FOLIO_TEST_CLICKHOUSE_URL) and on a current release
// (26.x in-process through chdb, always).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { generateTraffic, USER_AGENTS } from '../../bench/analytics/generate.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import type { Range } from '../../src/analytics/dates.ts';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import type { PagedCounts } from '../../src/analytics/reports/path-page.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import type { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { rng } from '../analytics/helpers.ts';
import { chdbVersion, closeChdb, openChdbEngine } from './chdb.ts';
import { CLICKHOUSE_URL, dropDatabase, freshName, NEEDS, openEngine, requireClickHouse } from './helpers.ts';
import { agents } from '../../src/analytics/reports/agents.ts';
import { aiCompanies } from '../../src/analytics/reports/ai-companies.ts';
import { timeseries } from '../../src/analytics/reports/timeseries.ts';
import { views } from '../../src/analytics/reports/views.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

// Folio's own lists, as a server without FOLIO_AGENTS_FILE builds them.
const RULES = ClassificationRules.load();
const DAY = 86_400_000;
const HOUR = 3_600_000;
const START = Date.UTC(2025, 4, 20); // 30 days across the May/June partition boundary
const P = 'prj_contract';
const Q = 'prj_other';
const EDGE_PATHS = ['/', '/a', '/B', '/b', '/guide/café', '/guide/cafe\u0301', '/guide/日本語', '/guide/😀', '/guide/שלום', "/it's", '/back\\slash', '/q"uote', '/pct%27', '/api/reference.md'];

const vid = (v: number) => (BigInt(Math.imul(v, 0x9e3779b1) >>> 0) << 31n) ^ BigInt(v);

function events(): StoredEvent[] {
  const t = generateTraffic({ events: 40_000, days: 30, start: START, seed: 7 });
  const out: StoredEvent[] = [];
  for (let k = 0; k < t.n; k++) {
    const path = t.paths[t.path[k] % 400]; // fewer paths: deep pages with ties
    const c = RULES.classify(USER_AGENTS[t.ua[k]], path);
    out.push({ projectId: k % 10 === 0 ? Q : P, ts: t.ts[k], path, visitor: vid(t.visitor[k]), cls: CLASS_CODE[c.class], agent: c.agent, referrer: null, source: SOURCE.api, importKey: null, group: 0 });
  }
  // Edge cases: day bounds, one visitor human and AI, Unicode and quote paths, tie-heavy counts.
  const r = rng(11);
  for (let i = 0; i < 3000; i++) {
    const day = Math.floor(r() * 30);
    const ts = r() < 0.1 ? START + day * DAY : r() < 0.1 ? START + (day + 1) * DAY - 1 : START + day * DAY + Math.floor(r() * DAY);
    const cls = ([CLASS_CODE.human, CLASS_CODE.ai, CLASS_CODE.ai, CLASS_CODE.search, CLASS_CODE.bot] as const)[Math.floor(r() * 5)];
    const agent = cls === CLASS_CODE.human || cls === CLASS_CODE.bot ? null : (['ChatGPT', 'Claude', 'Googlebot'] as const)[Math.floor(r() * 3)];
    out.push({ projectId: P, ts, path: EDGE_PATHS[Math.floor(r() * EDGE_PATHS.length)], visitor: BigInt(1 + Math.floor(r() * 300)), cls, agent, referrer: r() < 0.5 ? 'https://x.test/' : null, source: SOURCE.import, importKey: null, group: 0 });
  }
  return out;
}

// Hundreds of queries per test, two engines: allow for a loaded machine.
vi.setConfig({ testTimeout: 300_000, hookTimeout: 300_000 });

const BACKENDS = [
  { name: `ClickHouse server ${NEEDS}`, skip: !CLICKHOUSE_URL, open: async (db: string) => (await requireClickHouse(), openEngine(db)), drop: dropDatabase },
  { name: 'ClickHouse 26.x in-process (chdb)', skip: false, open: openChdbEngine, drop: async () => closeChdb() },
];

describe.each(BACKENDS)('$name answers like DuckDB', ({ skip, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const db = freshName();
  let ch: ClickHouseEngine;
  let duck: DuckDbEngine;
  const all = events();
  const q = (r: Range) => r;
  void chdbVersion;

  beforeAll(async () => {
    ch = await open(db);
    duck = await DuckDbEngine.open({ file: ':memory:' });
    // Batches in shuffled day order: late data for days already stored.
    const byWeek = new Map<number, StoredEvent[]>();
    for (const e of all) {
      const w = Math.floor((e.ts - START) / (4 * DAY));
      if (!byWeek.has(w)) byWeek.set(w, []);
      byWeek.get(w)!.push(e);
    }
    const order = [...byWeek.keys()].sort((a, b) => ((a * 5) % 7) - ((b * 5) % 7));
    for (const [i, w] of order.entries()) {
      const batch = byWeek.get(w)!;
      await Promise.all([ch.write(batch), duck.write(batch)]);
      if (i % 3 === 1) await duck.compact();
      if (i % 2 === 1 && i < order.length - 2) await ch.compact(); // folds with late rows for keys already folded; the last batches stay unfolded
    }
  });

  afterAll(async () => {
    await ch?.close();
    await duck?.close();
    await drop(db);
  });

  it('folded rows exist beside unfolded ones (both query paths meet)', async () => {
    const folded = await ch.sql(`SELECT count() AS n FROM ${db}.seen`);
    const unfolded = await ch.sql(`SELECT count() AS n FROM ${db}.pending WHERE ins > (SELECT max(watermark) FROM ${db}.fold_state)`);
    expect(Number(folded[0].n)).toBeGreaterThan(1000);
    expect(Number(unfolded[0].n)).toBeGreaterThan(1000);
  });

  const ranges = (): Range[] => {
    const r = rng(5);
    const list: Range[] = [
      { from: null, to: null },
      { from: START, to: START + 30 * DAY },
      { from: START + 10 * DAY, to: START + 17 * DAY },
      { from: START + 10 * DAY + HOUR, to: START + 17 * DAY - HOUR },
      { from: START + 3 * DAY + 5 * HOUR, to: START + 3 * DAY + 9 * HOUR }, // inside one day
      { from: START + 11 * DAY, to: START + 12 * DAY }, // the month boundary region
      { from: START, to: START }, // empty
      { from: START - 400 * DAY, to: START }, // before the data
      { from: START + 31 * DAY, to: null }, // after the data
      { from: -5_000 * DAY, to: 253_402_300_799_000 }, // before 1970 to 9999-12-31
      { from: null, to: START + 12 * DAY + 1 },
      { from: START + 5 * DAY - 1, to: null },
      { from: 0, to: 1 },
    ];
    for (let i = 0; i < 12; i++) {
      const a = START + Math.floor(r() * 30) * DAY;
      const b = a + (1 + Math.floor(r() * 15)) * DAY;
      list.push({ from: a, to: b });
    }
    for (let i = 0; i < 12; i++) {
      const a = START - DAY + Math.floor(r() * 32 * DAY);
      list.push({ from: a, to: a + Math.floor(r() * 10 * DAY) });
    }
    return list;
  };

  const pages = [
    { limit: 50, offset: 0 },
    { limit: 7, offset: 13 },
    { limit: 1000, offset: 0 },
    { limit: 3, offset: 397 },
    { limit: 10, offset: 5000 },
  ];

  it('visitors: same totals, rows and hasMore on every range and page', async () => {
    for (const project of [P, Q, 'prj_unknown']) {
      for (const range of ranges()) {
        for (const page of pages) {
          const [a, b] = await Promise.all([ch.run(visitors, { projectId: project, range: q(range), ...page }), duck.run(visitors, { projectId: project, range: q(range), ...page })]);
          expect(a, `${project} ${JSON.stringify(range)} ${JSON.stringify(page)}`).toEqual(b);
        }
      }
    }
  });

  it('views: same totals, rows and hasMore on every range and page', async () => {
    for (const project of [P, Q]) {
      for (const range of ranges()) {
        for (const page of pages) {
          const [a, b] = await Promise.all([ch.run(views, { projectId: project, range, ...page }), duck.run(views, { projectId: project, range, ...page })]);
          expect(a, `${project} ${JSON.stringify(range)} ${JSON.stringify(page)}`).toEqual(b);
        }
      }
    }
  });

  it('paging through every path gives the single-page answer, in order, without repeats', async () => {
    const range = { from: START + 2 * DAY + 7 * HOUR, to: START + 25 * DAY };
    const whole = await ch.run(visitors, { projectId: P, range, limit: 100_000, offset: 0 });
    const rows: PagedCounts['rows'] = [];
    for (let offset = 0; ; offset += 37) {
      const page = await ch.run(visitors, { projectId: P, range, limit: 37, offset });
      rows.push(...page.rows);
      expect(page.totals).toEqual(whole.totals);
      if (!page.hasMore) break;
    }
    expect(rows).toEqual(whole.rows);
    expect(whole.rows.length).toBeGreaterThan(300);
  });

  it('timeseries by day and hour, and the agents report, match', async () => {
    for (const range of ranges()) {
      for (const interval of ['day', 'hour'] as const) {
        expect(await ch.run(timeseries, { projectId: P, range, interval }), `${JSON.stringify(range)} ${interval}`).toEqual(await duck.run(timeseries, { projectId: P, range, interval }));
      }
      expect(await ch.run(agents, { projectId: P, range }), JSON.stringify(range)).toEqual(await duck.run(agents, { projectId: P, range }));
      expect(await ch.run(agents, { projectId: Q, range })).toEqual(await duck.run(agents, { projectId: Q, range }));
    }
  });

  it('the AI-companies report matches, per company and per path of one, on every range', async () => {
    for (const [i, range] of ranges().entries()) {
      const page = pages[i % 2];
      for (const company of [undefined, i % 2 ? 'OpenAI' : 'Google']) {
        const params = { projectId: P, range, ...page, rules: RULES, ...(company === undefined ? {} : { company }) };
        expect(await ch.run(aiCompanies, params), `${JSON.stringify(range)} ${JSON.stringify(page)} ${company}`).toEqual(await duck.run(aiCompanies, params));
      }
    }
    const whole = await duck.run(aiCompanies, { projectId: P, range: { from: null, to: null }, limit: 250, offset: 0, rules: RULES });
    expect(whole.rows.filter((r) => r.trainingViews + r.searchViews + r.assistantViews > 0).length).toBeGreaterThan(3);
  });

  it('after a full fold the answers are unchanged', async () => {
    const before = await ch.run(visitors, { projectId: P, range: { from: START + 3 * DAY, to: START + 20 * DAY }, limit: 1000, offset: 0 });
    await ch.compact();
    expect(await ch.run(visitors, { projectId: P, range: { from: START + 3 * DAY, to: START + 20 * DAY }, limit: 1000, offset: 0 })).toEqual(before);
    expect(await ch.run(visitors, { projectId: P, range: { from: START + 3 * DAY, to: START + 20 * DAY }, limit: 1000, offset: 0 })).toEqual(
      await duck.run(visitors, { projectId: P, range: { from: START + 3 * DAY, to: START + 20 * DAY }, limit: 1000, offset: 0 }),
    );
  });

  it('the answers are the plain COUNT(DISTINCT) over the raw events', async () => {
    const rows = await ch.sql(`SELECT count(DISTINCT visitor) AS t FROM ${db}.events WHERE project = '${P}' AND cls <= 2`);
    const v = await ch.run(visitors, { projectId: P, range: { from: null, to: null }, limit: 1, offset: 0 });
    expect(v.totals.total).toBe(Number(rows[0].t));
    const mine = new Set(all.filter((e) => e.projectId === P && e.cls <= 2).map((e) => e.visitor));
    expect(v.totals.total).toBe(mine.size);
  });
});
