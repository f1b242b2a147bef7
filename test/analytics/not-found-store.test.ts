// Where the DuckDB store keeps not-found views (migrations 7 and 9): a write appends them into
// `events_raw` with its page views and they stay there (compaction does not touch them); keyed ones go
// to `not_found_stored`, as those a compaction moved before migration 9 are; the `not_found` view reads
// both. The not-found report answers exactly as plain Sets at every step (written, compacted, written
// again, reopened, retention, upgraded), the `events` view never holds one, keyed repeats still count
// once, and a write of only not-found views is kept without being work for compaction.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDBInstance } from '@duckdb/node-api';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { RAW_VIEWS } from '../../src/analytics/engines/duckdb/not-found.ts';
import { LATEST_VERSION } from '../../src/analytics/engines/duckdb/schema.ts';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { notFound } from '../../src/analytics/reports/not-found.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { tempDir } from '../helpers/server.ts';
import { reference, rng, runPathReport, type RefEvent } from './helpers.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 6, 1);
const P = 'proj_nf_store';
const PATHS = ['/docs/a', '/docs/gone', '/old/é', '/x'];
const HOSTS = [null, 'chatgpt.com', 'www.google.com'];

function generate(seed: number, n: number, days: [number, number]) {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: StoredEvent[] = [];
  for (let i = 0; i < n; i++) {
    const human = r() < 0.7;
    const bot = r() < 0.05;
    const derived = r() < 0.6 ? BigInt(Math.floor(r() * 9) + 1) : null;
    events.push({
      projectId: P,
      ts: D0 + days[0] * DAY + Math.floor(r() * (days[1] - days[0]) * DAY),
      path: pick(PATHS),
      visitor: BigInt(Math.floor(r() * 30) + 1),
      cls: bot ? CLASS_CODE.bot : human ? CLASS_CODE.human : CLASS_CODE.ai,
      agent: human ? null : 'ChatGPT-User',
      referrer: pick(HOSTS),
      source: SOURCE.api,
      importKey: null,
      group: 0,
      ...(r() < 0.3 ? { notFound: true, derivedVisitor: derived } : {}),
    });
  }
  return events;
}

/** The not-found report's totals and per-path counts, with plain Sets (bots' views are dropped). */
function notFoundReference(events: StoredEvent[], fromDay = 0) {
  const kept = events.filter((e) => e.notFound && e.cls <= CLASS_CODE.ai && e.ts >= D0 + fromDay * DAY);
  const counts = (list: StoredEvent[]) => ({
    human: new Set(list.filter((e) => e.cls === CLASS_CODE.human).map((e) => e.visitor)).size,
    ai: new Set(list.filter((e) => e.cls === CLASS_CODE.ai).map((e) => e.visitor)).size,
    total: new Set(list.map((e) => e.visitor)).size,
    derivedVisitors: new Set(list.filter((e) => e.derivedVisitor != null).map((e) => e.derivedVisitor)).size,
    views: list.length,
  });
  const paths = [...new Set(kept.map((e) => e.path))].map((p) => {
    const list = kept.filter((e) => e.path === p);
    return { path: p, ...counts(list), firstSeen: Math.min(...list.map((e) => e.ts)), lastSeen: Math.max(...list.map((e) => e.ts)) };
  });
  return { totals: counts(kept), paths: paths.sort((a, b) => a.path.localeCompare(b.path)) };
}

/** How many of `events` are kept as not-found views (bots' are dropped). */
const keptCount = (events: StoredEvent[]) => events.filter((e) => e.notFound && e.cls <= CLASS_CODE.ai).length;

const asRef = (events: StoredEvent[]): RefEvent[] =>
  events.filter((e) => !e.notFound).map((e) => ({ ts: e.ts, path: e.path, visitor: String(e.visitor), cls: e.cls === CLASS_CODE.human ? 'human' : e.cls === CLASS_CODE.ai ? 'ai' : 'none' }));

describe('not-found views in the DuckDB store', () => {
  const dir = tempDir('folio-nf-store-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'analytics.duckdb');
  const n = async (engine: DuckDbEngine, sql: string) => Number((await engine.sql(sql))[0].n);

  async function check(engine: DuckDbEngine, events: StoredEvent[], step: string, fromDay = 0) {
    const range = { from: fromDay === 0 ? null : D0 + fromDay * DAY, to: null };
    const got = await engine.run(notFound, { projectId: P, range, limit: 100, offset: 0 });
    const want = notFoundReference(events, fromDay);
    expect(got.totals, step).toEqual(want.totals);
    const rows = got.rows.map(({ referrers: _, ...row }) => row).sort((a, b) => a.path.localeCompare(b.path));
    expect(rows, step).toEqual(want.paths);
    // The page views are what they are without the not-found views, and `events` holds only them.
    const visitors = await runPathReport(engine, 'visitors', { projectId: P, range, limit: 100, offset: 0 });
    const ref = reference(asRef(events.filter((e) => e.ts >= D0 + fromDay * DAY)), null, null);
    expect({ totals: visitors.totals, rows: visitors.rows }, step).toEqual(ref);
    expect(await n(engine, 'SELECT count(*) AS n FROM events'), step).toBe(events.filter((e) => !e.notFound && e.ts >= D0 + fromDay * DAY).length);
  }

  it('keeps them exact through writes, compaction, a reopen and retention, and apart from page views', async () => {
    const first = generate(1, 1500, [0, 6]);
    let engine = await DuckDbEngine.open({ file, readConnections: 1 });
    for (let i = 0; i < first.length; i += 250) await engine.write(first.slice(i, i + 250));
    expect(await n(engine, 'SELECT count(*) AS n FROM events_raw WHERE cls >= 128')).toBeGreaterThan(0);
    expect(await n(engine, 'SELECT count(*) AS n FROM not_found_stored')).toBe(0);
    await check(engine, first, 'written, not compacted');

    await engine.compact();
    expect(await n(engine, 'SELECT count(*) AS n FROM events_raw WHERE cls >= 128')).toBe(keptCount(first));
    expect(await n(engine, 'SELECT count(*) AS n FROM not_found_stored')).toBe(0);
    await check(engine, first, 'compacted');

    // Some stored, some not yet: both halves are read once each.
    const second = generate(2, 600, [2, 8]);
    await engine.write(second);
    // A write of not-found views only: kept, and no work for compaction.
    const onlyMissing = generate(3, 200, [7, 8]).map((e) => ({ ...e, notFound: true, derivedVisitor: null }));
    const pending = engine.pendingRows();
    await engine.write(onlyMissing);
    expect(engine.pendingRows()).toBe(pending);
    const all = [...first, ...second, ...onlyMissing];
    await check(engine, all, 'half compacted');
    await engine.close();

    // Reopened: the next write's sequence is above every stored one, so nothing is skipped or moved twice.
    engine = await DuckDbEngine.open({ file, readConnections: 1 });
    await check(engine, all, 'reopened');
    const third = generate(4, 300, [8, 9]);
    await engine.write(third);
    const everything = [...all, ...third];
    await engine.compact();
    expect(await n(engine, 'SELECT count(*) AS n FROM events_raw WHERE cls >= 128')).toBe(keptCount(everything));
    await check(engine, everything, 'reopened, written and compacted');

    // Retention deletes both places' rows of the days before the cut-off.
    await engine.write(generate(5, 200, [8, 9]).map((e) => ({ ...e, ts: e.ts - 8 * DAY + 3 * DAY })).filter((e) => e.notFound));
    await engine.deleteBefore(Math.floor(D0 / DAY) + 4);
    const kept = await engine.sql(`SELECT min(day) AS d FROM not_found`);
    expect(Number(kept[0].d)).toBeGreaterThanOrEqual(Math.floor(D0 / DAY) + 4);
    await check(engine, everything, 'after retention', 4);

    // Reopened after a write of only not-found views: read at once, nothing for compaction to do.
    const late = generate(7, 300, [8, 9]).map((e) => ({ ...e, notFound: true }));
    await engine.write(late);
    await engine.close();
    engine = await DuckDbEngine.open({ file, readConnections: 1 });
    expect(engine.pendingRows()).toBe(0);
    await check(engine, [...everything, ...late], 'reopened after a write of only not-found views', 4);
    await engine.compact();
    await check(engine, [...everything, ...late], 'reopened after a write of only not-found views, then compacted', 4);
    await engine.close();
  });

  it('counts a keyed not-found view once when its batch comes again', async () => {
    const engine = await DuckDbEngine.open({ file: ':memory:', readConnections: 1 });
    try {
      const batch = generate(6, 40, [0, 1]).map((e, i) => ({ ...e, notFound: true, importKey: BigInt(i + 1) }));
      await engine.write(batch);
      const again = await engine.write(batch);
      expect(again.duplicates.get(0)).toBe(batch.filter((e) => e.cls <= CLASS_CODE.ai).length);
      await check(engine, batch, 'keyed, sent twice');
      await engine.compact();
      await check(engine, batch, 'keyed, compacted');
    } finally {
      await engine.close();
    }
  });

  it('reads a store whose compactions moved them (before migration 9) exactly, and moves nothing more', async () => {
    const older = path.join(dir, 'v8.duckdb');
    const early = generate(8, 800, [0, 5]);
    const late = generate(9, 400, [3, 7]);
    let engine = await DuckDbEngine.open({ file: older, readConnections: 1 });
    await engine.write(early);
    await engine.compact();
    await engine.write(late);
    await engine.close();
    // What a version-8 store holds: the compacted not-found views moved (as its compaction did), the
    // later ones still in events_raw, and migration 7's view, which reads the uncompacted ones only.
    const instance = await DuckDBInstance.create(older);
    const c = await instance.connect();
    const compacted = 'cls >= 128 AND seq <= (SELECT seq FROM compaction_state)';
    for (const q of [
      `INSERT INTO not_found_stored SELECT r.project_key, r.ts, r.day, p.path, r.visitor, r.cls - 128, r.referrer, NULL, NULL, r.agent::BIGINT
         FROM events_raw r JOIN paths p ON p.path_id = r.path_id AND p.project_key = r.project_key WHERE ${compacted}`,
      `DELETE FROM events_raw WHERE ${compacted}`,
      'DROP VIEW not_found',
      RAW_VIEWS[1],
      'DELETE FROM schema_version WHERE version >= 9',
    ]) {
      await c.run(q);
    }
    c.closeSync();
    instance.closeSync();

    engine = await DuckDbEngine.open({ file: older, readConnections: 1 });
    try {
      expect(await n(engine, 'SELECT max(version) AS n FROM schema_version')).toBe(LATEST_VERSION);
      expect(await n(engine, 'SELECT count(*) AS n FROM not_found_stored')).toBe(keptCount(early));
      expect(await n(engine, 'SELECT count(*) AS n FROM events_raw WHERE cls >= 128')).toBe(keptCount(late));
      await check(engine, [...early, ...late], 'upgraded');
      await engine.compact();
      const more = generate(10, 300, [6, 8]);
      await engine.write(more);
      await engine.compact();
      expect(await n(engine, 'SELECT count(*) AS n FROM not_found_stored')).toBe(keptCount(early));
      await check(engine, [...early, ...late, ...more], 'upgraded, written and compacted');
    } finally {
      await engine.close();
    }
  });
});
