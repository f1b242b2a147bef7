// Exact in any arrival order, on every engine: live traffic of a month, then a backfill of the month
// before it, then events days late, written in time order or as sessions in random order, with
// compactions (DuckDB) and folds (ClickHouse) in between. After every phase the visitors and views of
// many ranges equal plain Sets over everything written so far. Engines: DuckDB, ClickHouse 26.x
// in-process (chdb) and, with FOLIO_TEST_CLICKHOUSE_URL, the ClickHouse 18.16 server.
import { afterAll, describe, expect, it } from 'vitest';
import { SOURCE, type AnalyticsEngine, type StoredEvent } from '../../src/analytics/engine.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { closeChdb, openChdbEngine } from '../analytics-clickhouse/chdb.ts';
import { CLICKHOUSE_URL, dropDatabase, freshName, openEngine } from '../analytics-clickhouse/helpers.ts';
import { reference, rng, runPathReport, type RefEvent } from './helpers.ts';

const DAY = 86_400_000;
const LIVE = Date.UTC(2025, 6, 1); // July: the live month
const BACKFILL = Date.UTC(2025, 5, 1); // June: imported later
const P = 'prj_late';
const PATHS = ['/', '/docs', '/docs/install', '/guide/café', '/api.md', '/b', '/B', '/deep/a/b/c'];

interface Phase {
  name: string;
  events: StoredEvent[];
}

/** Visits of one month: sessions (a visitor's views within an hour of a day), returning visitors, humans, AI and crawlers. */
function month(start: number, days: number, n: number, seed: number): StoredEvent[][] {
  const r = rng(seed);
  const sessions: StoredEvent[][] = [];
  let made = 0;
  while (made < n) {
    const visitor = BigInt(1 + Math.floor(Math.pow(r(), 1.4) * 700));
    const day = Math.floor(r() * days);
    const base = start + day * DAY + Math.floor(r() * (DAY - 3_600_000));
    const kind = r();
    const cls = kind < 0.55 ? CLASS_CODE.human : kind < 0.85 ? CLASS_CODE.ai : kind < 0.93 ? CLASS_CODE.search : CLASS_CODE.bot;
    const views = 1 + Math.floor(r() * 6);
    const s: StoredEvent[] = [];
    for (let v = 0; v < views; v++) {
      s.push({ projectId: P, ts: base + v * 60_000 + Math.floor(r() * 50_000), path: PATHS[Math.floor(r() * PATHS.length)], visitor, cls, agent: cls === CLASS_CODE.human ? null : 'A', referrer: null, source: SOURCE.api, importKey: null, group: 0 });
    }
    sessions.push(s);
    made += views;
  }
  return sessions;
}

function arrange(sessions: StoredEvent[][], order: 'time' | 'random', seed: number): StoredEvent[] {
  if (order === 'time') return sessions.flat().sort((a, b) => a.ts - b.ts);
  const r = rng(seed);
  const list = [...sessions];
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return list.flat();
}

function phases(order: 'time' | 'random'): Phase[] {
  const live = month(LIVE, 31, 6000, 1);
  // Events days late: more sessions of the live month's first three weeks, sent after everything else.
  const late = month(LIVE, 21, 1500, 3);
  return [
    { name: 'live July', events: arrange(live, order, 10) },
    { name: 'backfill of June after July', events: arrange(month(BACKFILL, 30, 5000, 2), order, 11) },
    { name: 'July events days late', events: arrange(late, order, 12) },
  ];
}

const ref = (e: StoredEvent): RefEvent => ({ ts: e.ts, path: e.path, visitor: String(e.visitor), cls: e.cls === CLASS_CODE.human ? 'human' : e.cls === CLASS_CODE.ai ? 'ai' : 'none' });

const RANGES: [number | null, number | null][] = [
  [null, null],
  [BACKFILL, LIVE],
  [LIVE, LIVE + 31 * DAY],
  [BACKFILL + 20 * DAY, LIVE + 10 * DAY], // across the month boundary
  [LIVE + 3 * DAY, LIVE + 4 * DAY],
  [LIVE + 5 * DAY, null],
  [BACKFILL + 14 * DAY + 3_600_000, LIVE + 2 * DAY + 7_200_000], // bounds inside days
];

const ENGINES: { name: string; skip: boolean; open: (db: string) => Promise<AnalyticsEngine>; drop: (db: string) => Promise<void> }[] = [
  { name: 'DuckDB', skip: false, open: () => DuckDbEngine.open({ file: ':memory:', readConnections: 1 }), drop: async () => {} },
  { name: 'ClickHouse 26.x (chdb)', skip: false, open: openChdbEngine, drop: async () => {} },
  { name: 'ClickHouse server', skip: !CLICKHOUSE_URL, open: openEngine, drop: dropDatabase },
];

afterAll(() => closeChdb());

describe.each(ENGINES)('$name stays exact with backfills and late events', ({ skip, open, drop }) => {
  for (const order of ['time', 'random'] as const) {
    it.skipIf(skip)(`arrival in ${order === 'time' ? 'time order' : 'random session order'}`, async () => {
      const db = freshName('folio_late');
      const engine = await open(db);
      try {
        const written: RefEvent[] = [];
        for (const phase of phases(order)) {
          // Batches of 700 with a compaction / fold after every third, so rows meet both compacted and new ones.
          for (let i = 0, b = 0; i < phase.events.length; i += 700, b++) {
            const batch = phase.events.slice(i, i + 700);
            await engine.write(batch);
            written.push(...batch.map(ref));
            if (b % 3 === 2) await engine.compact();
          }
          for (const round of ['before', 'after']) {
            if (round === 'after') await engine.compact();
            for (const [from, to] of RANGES) {
              for (const mode of ['visitors', 'views'] as const) {
                const want = reference(written, from, to, mode);
                const got = await runPathReport(engine, mode, { projectId: P, range: { from, to }, limit: 100, offset: 0 });
                const label = `${phase.name}, ${round} compaction, ${mode} ${from}..${to}`;
                expect(got.totals, label).toEqual(want.totals);
                expect(got.rows, label).toEqual(want.rows);
              }
            }
          }
        }
      } finally {
        await engine.close();
        await drop(db);
      }
    }, 240_000);
  }
});
