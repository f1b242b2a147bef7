// The ClickHouse engine on its own: CLICKHOUSE_URL handling, import dedupe, retention (partition drops
// plus a mutation for the cut-off month), durability across a reopen (a Folio restart), several
// writers at once (several Folio processes), hostile strings, and a clear error when unreachable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Range } from '../../src/analytics/dates.ts';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { ClickHouseEngine, parseClickHouseUrl } from '../../src/analytics/engines/clickhouse/index.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { rng } from '../analytics/helpers.ts';
import { CLICKHOUSE_URL, databaseUrl, dropDatabase, freshName, NEEDS, openEngine, requireClickHouse } from './helpers.ts';
import { agents } from '../../src/analytics/reports/agents.ts';
import { timeseries } from '../../src/analytics/reports/timeseries.ts';
import { views } from '../../src/analytics/reports/views.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

const DAY = 86_400_000;
const ALL: Range = { from: null, to: null };
const PAGE = { limit: 1000, offset: 0 };

function ev(p: Partial<StoredEvent> & { ts: number }): StoredEvent {
  return { projectId: 'prj_e', path: '/', visitor: 1n, cls: CLASS_CODE.human, agent: null, referrer: null, source: SOURCE.api, importKey: null, group: 0, ...p };
}

describe('CLICKHOUSE_URL', () => {
  it('the path names the database; no path means default; credentials come from the URL', () => {
    expect(parseClickHouseUrl('http://127.0.0.1:8123')).toEqual({ url: 'http://127.0.0.1:8123', database: 'default' });
    expect(parseClickHouseUrl('http://127.0.0.1:8123/')).toEqual({ url: 'http://127.0.0.1:8123', database: 'default' });
    expect(parseClickHouseUrl('https://bob:s%40cret@ch.example:8443/analytics')).toEqual({
      url: 'https://ch.example:8443',
      database: 'analytics',
      username: 'bob',
      password: 's@cret',
    });
    expect(parseClickHouseUrl('http://h:8123/my%20db').database).toBe('my db');
    expect(() => parseClickHouseUrl('http://h:8123/a/b')).toThrow(/at most one database/);
    expect(() => parseClickHouseUrl('ftp://h/a')).toThrow(/http/);
  });
});

describe.skipIf(!CLICKHOUSE_URL)(`ClickHouse engine ${NEEDS}`, () => {
  const dbs: string[] = [];
  const fresh = () => {
    const name = freshName();
    dbs.push(name);
    return name;
  };

  beforeAll(async () => {
    await requireClickHouse();
  });

  afterAll(async () => {
    for (const d of dbs) await dropDatabase(d);
  });

  it('creates a missing database (even one whose name needs quoting) and reopens it', async () => {
    const name = `${fresh()}-with dash`;
    dbs.push(name);
    const a = await openEngine(name);
    await a.write([ev({ ts: Date.UTC(2025, 0, 5) })]);
    await a.close();
    const b = await openEngine(name);
    expect((await b.run(visitors, { projectId: 'prj_e', range: ALL, ...PAGE })).totals).toEqual({ human: 1, ai: 0, total: 1 });
    await b.close();
  });

  it('an unreachable server is a clear error naming the server and database', async () => {
    await expect(ClickHouseEngine.open({ url: 'http://127.0.0.1:1/folio', requestTimeoutMs: 2000 })).rejects.toThrow(
      /ClickHouse at http:\/\/127\.0\.0\.1:1 \(database folio\) is not usable/,
    );
  });

  it('import dedupe: a key seen before on the same day (this batch or earlier) is dropped and counted per group', async () => {
    const name = fresh();
    const e = await openEngine(name);
    const d1 = Date.UTC(2025, 2, 1, 10);
    const d2 = Date.UTC(2025, 2, 2, 10);
    const first = await e.write([
      ev({ ts: d1, importKey: 1n, group: 0 }),
      ev({ ts: d1 + 5, importKey: 1n, group: 1 }), // same day, same key: dropped
      ev({ ts: d2, importKey: 1n, group: 1 }), // another day: kept
      ev({ ts: d1, importKey: 1n, projectId: 'prj_other', group: 1 }), // another project: kept
      ev({ ts: d1, importKey: -(2n ** 63n), group: 2 }),
      ev({ ts: d1, importKey: 2n ** 63n - 1n, group: 2 }),
      ev({ ts: d1, group: 2 }), // no key: never deduplicated
      ev({ ts: d1, group: 2 }),
    ]);
    expect([...first.duplicates]).toEqual([[1, 1]]);
    const second = await e.write([
      ev({ ts: d1 + 1000, importKey: 1n, group: 0 }),
      ev({ ts: d2 + 1000, importKey: 1n, group: 0 }),
      ev({ ts: d1, importKey: -(2n ** 63n), group: 1 }),
      ev({ ts: d1, importKey: 3n, group: 1 }),
      ev({ ts: d1, group: 1 }),
    ]);
    expect([...second.duplicates].sort()).toEqual([
      [0, 2],
      [1, 1],
    ]);
    await e.close();
    // After a restart the keys are still known.
    const again = await openEngine(name);
    const third = await again.write([ev({ ts: d1, importKey: 3n }), ev({ ts: d1, importKey: 4n })]);
    expect([...third.duplicates]).toEqual([[0, 1]]);
    const v = await again.run(views, { projectId: 'prj_e', range: ALL, ...PAGE });
    expect(v.totals.total).toBe(6 + 2 + 1); // kept in prj_e: 6 of the first batch, 2 of the second, 1 of the third
    const rows = await again.sql(`SELECT count() AS n FROM \`${name}\`.events WHERE project = 'prj_e'`);
    expect(Number(rows[0].n)).toBe(v.totals.total);
    await again.close();
  });

  it('import dedupe holds for a batch larger than one key lookup (and than the default query size)', async () => {
    const name = fresh();
    const e = await openEngine(name);
    const t = Date.UTC(2025, 6, 1);
    // 45,000 keyed events over 3 days, every key twice in the batch: lookups span several chunks.
    const batch = Array.from({ length: 45_000 }, (_, i) => ev({ ts: t + (i % 3) * DAY + i, importKey: BigInt(i % 22_500) * 7919n - 2n ** 62n, group: i % 4 }));
    const first = await e.write(batch);
    const stored = new Set(batch.map((x) => `${Math.floor(x.ts / DAY)}:${x.importKey}`)).size;
    const dropped = [...first.duplicates.values()].reduce((a, b) => a + b, 0);
    expect(dropped).toBe(45_000 - stored);
    const second = await e.write(batch);
    expect([...second.duplicates.values()].reduce((a, b) => a + b, 0)).toBe(45_000);
    expect((await e.run(views, { projectId: 'prj_e', range: ALL, ...PAGE })).totals.total).toBe(stored);
    await e.close();
  });

  it('retention drops whole months as partitions and deletes the days before the cut-off, leaving exact answers', async () => {
    const name = fresh();
    const ch = await openEngine(name);
    const duck = await DuckDbEngine.open({ file: ':memory:' });
    const r = rng(3);
    const start = Date.UTC(2025, 0, 20);
    const batch: StoredEvent[] = [];
    for (let i = 0; i < 6000; i++) {
      const ts = start + Math.floor(r() * 70 * DAY); // 2025-01-20 .. 2025-03-31
      const cls = ([CLASS_CODE.human, CLASS_CODE.ai, CLASS_CODE.search] as const)[Math.floor(r() * 3)];
      batch.push(ev({ ts, cls, path: `/p${Math.floor(r() * 40)}`, visitor: BigInt(Math.floor(r() * 500)), agent: cls === CLASS_CODE.human ? null : 'X', importKey: i % 2 ? BigInt(i) : null }));
    }
    await ch.write(batch);
    await duck.write(batch);
    await duck.compact();
    const cutoff = Date.UTC(2025, 1, 14) / DAY; // 2025-02-14
    await ch.deleteBefore(cutoff);
    await duck.deleteBefore(cutoff);
    for (const t of ['events', 'daily', 'daily_site']) {
      const parts = await ch.sql(`SELECT DISTINCT partition FROM system.parts WHERE database = '${name}' AND table = '${t}' AND active ORDER BY partition`);
      expect(parts.map((p) => p.partition), t).toEqual(['202502', '202503']);
      const min = await ch.sql(`SELECT toString(min(date)) AS d, count() AS n FROM \`${name}\`.${t}`);
      expect(min[0].d, t).toBe('2025-02-14');
    }
    for (const range of [ALL, { from: start, to: cutoff * DAY + 3 * DAY }, { from: cutoff * DAY - DAY, to: null }, { from: cutoff * DAY + 3600_000, to: null }]) {
      expect(await ch.run(visitors, { projectId: 'prj_e', range, ...PAGE })).toEqual(await duck.run(visitors, { projectId: 'prj_e', range, ...PAGE }));
      expect(await ch.run(views, { projectId: 'prj_e', range, ...PAGE })).toEqual(await duck.run(views, { projectId: 'prj_e', range, ...PAGE }));
      expect(await ch.run(agents, { projectId: 'prj_e', range })).toEqual(await duck.run(agents, { projectId: 'prj_e', range }));
      expect(await ch.run(timeseries, { projectId: 'prj_e', range, interval: 'day' })).toEqual(await duck.run(timeseries, { projectId: 'prj_e', range, interval: 'day' }));
    }
    // Running it again changes nothing and starts no mutation (hourly retention must not rewrite parts).
    const mutations = async () => Number((await ch.sql(`SELECT count() AS n FROM system.mutations WHERE database = '${name}'`))[0].n);
    const before = await mutations();
    await ch.deleteBefore(cutoff);
    expect(await mutations()).toBe(before);
    // Import keys of deleted days are gone with them: the same line can be imported again.
    const old = batch.find((e) => e.importKey !== null && e.ts < cutoff * DAY)!;
    expect((await ch.write([old])).duplicates.size).toBe(0);
    await ch.close();
    await duck.close();
  });

  it('several writers at once (several Folio processes) store every event, and a reopen sees them all', async () => {
    const name = fresh();
    const engines = await Promise.all([openEngine(name), openEngine(name), openEngine(name)]);
    const d = Date.UTC(2025, 5, 1);
    const all: StoredEvent[] = [];
    await Promise.all(
      engines.map(async (e, w) => {
        for (let b = 0; b < 10; b++) {
          const batch = Array.from({ length: 500 }, (_, i) =>
            ev({ ts: d + (b * 500 + i) * 1000, visitor: BigInt((w * 7 + i) % 900), path: `/w${i % 13}`, cls: i % 3 === 0 ? CLASS_CODE.ai : CLASS_CODE.human, agent: i % 3 === 0 ? 'A' : null }),
          );
          all.push(...batch);
          await e.write(batch);
        }
      }),
    );
    for (const e of engines) await e.close();
    const e = await openEngine(name);
    const v = await e.run(views, { projectId: 'prj_e', range: ALL, ...PAGE });
    expect(v.totals.total).toBe(15_000);
    const duck = await DuckDbEngine.open({ file: ':memory:' });
    await duck.write(all);
    expect(await e.run(visitors, { projectId: 'prj_e', range: ALL, ...PAGE })).toEqual(await duck.run(visitors, { projectId: 'prj_e', range: ALL, ...PAGE }));
    expect(await e.run(visitors, { projectId: 'prj_e', range: { from: d + 3_600_000, to: d + 7_200_000 }, ...PAGE })).toEqual(await duck.run(visitors, { projectId: 'prj_e', range: { from: d + 3_600_000, to: d + 7_200_000 }, ...PAGE }));
    await duck.close();
    await e.close();
  });

  it('stores hostile strings exactly (lone surrogate halves as U+FFFD) without failing the batch', async () => {
    const name = fresh();
    const e = await openEngine(name);
    const paths = ["/it's", '/a\\b', '/😀/שלום', '/x\uD800y', "/\\'--", '/q"u`o'];
    const t = Date.UTC(2025, 3, 1);
    await e.write(paths.map((path, i) => ev({ ts: t + i, path, visitor: BigInt(i), agent: i % 2 ? "Agent 'x\u0000" : null, referrer: 'https://r.test/\uDC00', cls: i % 2 ? CLASS_CODE.ai : CLASS_CODE.human })));
    const got = await e.run(visitors, { projectId: 'prj_e', range: ALL, ...PAGE });
    expect(got.rows.map((r) => r.path).sort()).toEqual(paths.map((p) => p.toWellFormed()).sort());
    expect(await e.run(agents, { projectId: 'prj_e', range: ALL })).toEqual([{ agent: "Agent 'x\u0000", category: 'ai', visitors: 3, views: 3 }]);
    await e.close();
  });

  it('queries for unknown projects and empty or out-of-range bounds answer zero', async () => {
    const name = fresh();
    const e = await openEngine(name);
    await e.write([ev({ ts: Date.UTC(2025, 0, 1) })]);
    const zero = { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };
    expect(await e.run(visitors, { projectId: "prj_'; DROP DATABASE x; --", range: ALL, ...PAGE })).toEqual(zero);
    expect(await e.run(visitors, { projectId: 'prj_e', range: { from: 253_402_300_799_000, to: null }, ...PAGE })).toEqual(zero);
    expect(await e.run(visitors, { projectId: 'prj_e', range: { from: null, to: -1 }, ...PAGE })).toEqual(zero);
    expect(await e.run(timeseries, { projectId: 'prj_e', range: { from: 5, to: 5 }, interval: 'hour' })).toEqual({ interval: 'hour', series: [] });
    expect((await e.run(visitors, { projectId: 'prj_e', range: { from: -10 * DAY, to: 253_402_300_799_000 }, ...PAGE })).totals.total).toBe(1);
    await e.close();
  });

  it('reads the URL database: the test backend’s CLICKHOUSE_URL form works', async () => {
    const name = fresh();
    const e = await ClickHouseEngine.open({ url: databaseUrl(name) });
    expect(e.database).toBe(name);
    const dbsNow = await e.sql(`SELECT name FROM system.databases WHERE name = '${name}'`);
    expect(dbsNow).toEqual([{ name }]);
    await e.close();
  });
});
