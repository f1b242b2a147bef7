// fold() on DuckDB, table by table: after batches mixing every kind of key — new, in order with one
// new day or several, on a stored day again, late with one new day or several — each first-seen table
// counts, for every whole-day range, exactly the distinct keys of plain Sets over the events (per
// bit: humans, AI, either). A row counts when its day is in range and its previous day with the bit is
// before the range (or none).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { FIRST_SEEN, type FirstSeenTable } from '../../src/analytics/engines/duckdb/writes.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { rng } from './helpers.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 2, 1);
const DAYS = 10;
const P = 'prj_fold';
const PATHS = ['/', '/a', '/b'];
const HOSTS = ['chatgpt.com', 'www.google.com', null];

/** One view of `visitor` on day `day` (class and path and referrer from r). */
function view(r: () => number, visitor: number, day: number): StoredEvent {
  const cls = r() < 0.5 ? CLASS_CODE.human : CLASS_CODE.ai;
  return {
    projectId: P,
    ts: D0 + day * DAY + Math.floor(r() * DAY),
    path: PATHS[Math.floor(r() * PATHS.length)],
    visitor: BigInt(visitor),
    cls,
    agent: cls === CLASS_CODE.ai ? 'ChatGPT-User' : null,
    referrer: HOSTS[Math.floor(r() * HOSTS.length)],
    source: SOURCE.api,
    importKey: null,
    group: 0,
  };
}

/** A batch where visitor groups get: one later day, the stored day again, one earlier day, several later days, days on both sides, or are new. */
function mixedBatch(r: () => number, stored: number[], fresh: number[]): StoredEvent[] {
  const out: StoredEvent[] = [];
  const days = (v: number, ds: number[]) => ds.forEach((d) => out.push(view(r, v, d), ...(r() < 0.3 ? [view(r, v, d)] : [])));
  stored.forEach((v, i) => days(v, [[8], [5], [1], [6, 7, 9], [2, 8], [0, 5]][i % 6]));
  fresh.forEach((v, i) => days(v, [[4], [0, 9], [3, 3]][i % 3]));
  return out;
}

/** The keys of a view per table, as the tables' key columns (daily_keys: per host and per assistant agent). */
function keysOf(e: StoredEvent, table: FirstSeenTable): string[] {
  const v = String(e.visitor);
  const site = { daily: [`${e.path} ${v}`], daily_site: [v] } as Record<FirstSeenTable, string[]>;
  if (table in site) return site[table];
  const ks = [...(e.referrer ? [`1 ${e.referrer}`] : []), ...(e.agent && e.cls === CLASS_CODE.ai ? [`2 ${e.agent}`] : [])];
  return ks.map((k) => (table === 'daily_path_keys' ? `${e.path} ${k} ${v}` : `${k} ${v}`));
}

/** Distinct keys in [d1, d2): humans, AI, either. */
function expected(events: StoredEvent[], table: FirstSeenTable, d1: number, d2: number): number[] {
  const sets = [new Set<string>(), new Set<string>(), new Set<string>()];
  for (const e of events) {
    const d = Math.floor((e.ts - D0) / DAY);
    if (d < d1 || d >= d2) continue;
    for (const k of keysOf(e, table)) {
      sets[e.cls === CLASS_CODE.human ? 0 : 1].add(k);
      sets[2].add(k);
    }
  }
  return sets.map((s) => s.size);
}

async function counted(engine: DuckDbEngine, table: FirstSeenTable, d1: number, d2: number): Promise<number[]> {
  const [a, b] = [Math.floor(D0 / DAY) + d1, Math.floor(D0 / DAY) + d2];
  const first = (bit: number | null, prev: string) => `count(*) FILTER (WHERE ${bit === null ? '' : `mask & ${bit} = ${bit} AND`} coalesce(${prev} < ${a}, true))`;
  const r = (await engine.sql(`SELECT ${first(1, 'prev_h')} AS h, ${first(2, 'prev_a')} AS a, ${first(null, 'prev_t')} AS t FROM ${table} WHERE day >= ${a} AND day < ${b}`))[0];
  return [Number(r.h), Number(r.a), Number(r.t)];
}

describe('fold() keeps every first-seen table exact whatever mix of keys a batch holds', () => {
  let engine: DuckDbEngine;
  beforeAll(async () => {
    engine = await DuckDbEngine.open({ file: ':memory:' });
  });
  afterAll(() => engine.close());

  it('counts as plain Sets for every whole-day range after each compaction', async () => {
    const r = rng(7);
    const visitors = Array.from({ length: 60 }, (_, i) => i + 1);
    const written: StoredEvent[] = [];
    const batches = [
      visitors.slice(0, 30).flatMap((v) => [view(r, v, 3 + (v % 3)), view(r, v, 5)]),
      mixedBatch(r, visitors.slice(0, 30), visitors.slice(30, 45)),
      mixedBatch(r, visitors.slice(10, 45), visitors.slice(45)),
    ];
    for (const batch of batches) {
      await engine.write(batch);
      written.push(...batch);
      await engine.compact();
      expect(engine.pendingRows()).toBe(0);
      for (const table of Object.keys(FIRST_SEEN) as FirstSeenTable[]) {
        for (let d1 = 0; d1 < DAYS; d1++) {
          for (let d2 = d1 + 1; d2 <= DAYS; d2++) {
            expect(await counted(engine, table, d1, d2), `${table} days ${d1}..${d2}`).toEqual(expected(written, table, d1, d2));
          }
        }
      }
    }
  });
});
