// The not-found report's server-derived identities (keyed hash of address and user agent, stored
// beside the visitor a client may name): counted exactly like plain Sets on DuckDB, on ClickHouse 18.16
// (the server of FOLIO_TEST_CLICKHOUSE_URL) and on ClickHouse 26.x (chdb, always); and each engine's
// migration 4 of a store whose not-found rows were written before it: they keep every count and
// count in no derived identity, while rows written afterwards do.
import { rmSync } from 'node:fs';
import path from 'node:path';
import { DuckDBInstance } from '@duckdb/node-api';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SOURCE, type AnalyticsEngine, type StoredEvent } from '../../src/analytics/engine.ts';
import type { NotFoundReport } from '../../src/analytics/reports/not-found.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import type { ClickHouseConnection } from '../../src/analytics/engines/clickhouse/connection.ts';
import { httpConnection, parseClickHouseUrl } from '../../src/analytics/engines/clickhouse/connection.ts';
import { MIGRATIONS as CH_MIGRATIONS, LATEST_VERSION as CH_LATEST, schemaVersion as chSchemaVersion } from '../../src/analytics/engines/clickhouse/schema.ts';
import { ident, raw } from '../../src/analytics/engines/clickhouse/sql.ts';
import type { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { MIGRATIONS as DUCK_MIGRATIONS, LATEST_VERSION as DUCK_LATEST, schemaVersion as duckSchemaVersion } from '../../src/analytics/engines/duckdb/schema.ts';
import { tempDir } from '../helpers/server.ts';
import { rng, utf8Compare } from '../analytics/helpers.ts';
import { chdbConnection, closeChdb, openChdbEngine } from './chdb.ts';
import { CLICKHOUSE_URL, dropDatabase, freshName, NEEDS, openEngine, requireClickHouse } from './helpers.ts';
import { notFound } from '../../src/analytics/reports/not-found.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DAY = 86_400_000;
const START = Date.UTC(2025, 5, 27); // across the June/July partition boundary
const P = 'prj_nf_identities';
const PATHS = ['/docs/old', '/docs/gone/', '/guide/é', '/a', '/B', '/llms.txt'];

interface Ref {
  ts: number;
  path: string;
  visitor: bigint;
  cls: 'human' | 'ai';
  derived: bigint | null;
}

/** Not-found views: 60 client-named visitors behind 8 addresses × 2 agents; a third without an address. */
function generate(seed: number, n: number, projectId = P): { events: StoredEvent[]; ref: Ref[] } {
  const r = rng(seed);
  const events: StoredEvent[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = START + Math.floor(r() * 8 * DAY);
    const path = PATHS[Math.floor(r() * PATHS.length)];
    const cls = r() < 0.6 ? 'human' : 'ai';
    const visitor = BigInt(1 + Math.floor(r() * 60));
    const derived = r() < 0.67 ? BigInt(1_000_000 + Math.floor(r() * 8) * 2 + (cls === 'ai' ? 1 : 0)) : null;
    events.push({ projectId, ts, path, visitor, cls: CLASS_CODE[cls], agent: null, referrer: null, source: SOURCE.api, importKey: null, notFound: true, derivedVisitor: derived, group: 0 });
    ref.push({ ts, path, visitor, cls, derived });
  }
  return { events, ref };
}

/** The report's counts computed with plain Sets (paths by total descending, then path). */
function expected(ref: Ref[], from: number | null, to: number | null) {
  const inRange = ref.filter((e) => (from === null || e.ts >= from) && (to === null || e.ts < to));
  const counts = (list: Ref[]) => ({
    human: new Set(list.filter((e) => e.cls === 'human').map((e) => e.visitor)).size,
    ai: new Set(list.filter((e) => e.cls === 'ai').map((e) => e.visitor)).size,
    total: new Set(list.map((e) => e.visitor)).size,
    derivedVisitors: new Set(list.filter((e) => e.derived !== null).map((e) => e.derived)).size,
    views: list.length,
  });
  const paths = [...new Set(inRange.map((e) => e.path))].map((p) => ({ path: p, ...counts(inRange.filter((e) => e.path === p)) }));
  paths.sort((a, b) => b.total - a.total || utf8Compare(a.path, b.path));
  return { totals: counts(inRange), rows: paths };
}

const got = (report: NotFoundReport) => ({
  totals: report.totals,
  rows: report.rows.map((r) => ({ path: r.path, human: r.human, ai: r.ai, total: r.total, derivedVisitors: r.derivedVisitors, views: r.views })),
});

const RANGES: [number | null, number | null][] = [
  [null, null],
  [START + DAY, START + 5 * DAY],
  [START + 2 * DAY + 3_600_000, START + 3 * DAY],
];

async function expectCounts(engine: AnalyticsEngine, ref: Ref[], projectId = P): Promise<void> {
  for (const [from, to] of RANGES) {
    const want = expected(ref, from, to);
    expect(got(await engine.run(notFound, { projectId, range: { from, to }, limit: 100, offset: 0 })), `${from}..${to}`).toEqual(want);
    // Paged by two, the same rows in the same order.
    const paged = [];
    for (let offset = 0; ; offset += 2) {
      const page = await engine.run(notFound, { projectId, range: { from, to }, limit: 2, offset });
      paged.push(...got(page).rows);
      if (!page.hasMore) break;
    }
    expect(paged).toEqual(want.rows);
  }
}

interface Backend {
  name: string;
  skip: boolean;
  /** A fresh engine over a store made by `writeV3` (or an empty one). */
  open(store: string): Promise<AnalyticsEngine>;
  /** A store at schema version 3 holding `events` as the engine of that version wrote them. */
  writeV3(store: string, events: StoredEvent[]): Promise<void>;
  latest: number;
  version(engine: AnalyticsEngine, store: string): Promise<number>;
  drop(store: string): Promise<void>;
}

const duckDir = tempDir('folio-nf-identities-');
const duckFile = (store: string) => path.join(duckDir, `${store}.duckdb`);

/** DuckDB at version 3: its first three migrations, then the not-found rows in the version-3 columns. */
async function writeDuckV3(store: string, events: StoredEvent[]): Promise<void> {
  const instance = await DuckDBInstance.create(duckFile(store));
  const c = await instance.connect();
  try {
    await duckSchemaVersion(c);
    for (const m of DUCK_MIGRATIONS.filter((x) => x.version <= 3)) {
      await m.up(c);
      await c.run(`INSERT INTO schema_version VALUES (${m.version}, '${m.name}', 0)`);
    }
    await c.run(`INSERT INTO projects VALUES (1, '${P}')`);
    const values = events.map((e) => `(1, ${e.ts}, ${Math.floor(e.ts / DAY)}, '${e.path}', ${e.visitor}, ${e.cls}, NULL, NULL, 0)`);
    await c.run(`INSERT INTO not_found VALUES ${values.join(', ')}`);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

/** ClickHouse at version 3: its first three migrations, then the not-found rows in the version-3 columns. */
async function writeClickHouseV3(c: ClickHouseConnection, database: string, events: StoredEvent[]): Promise<void> {
  const db = ident(database);
  await c.command(raw(`CREATE DATABASE IF NOT EXISTS ${db.text}`));
  await chSchemaVersion(c, db);
  for (const m of CH_MIGRATIONS.filter((x) => x.version <= 3)) {
    await m.up(c, db, database);
    await c.insert(`${db.text}.schema_version`, [{ version: m.version, name: m.name, applied_at: 0 }]);
  }
  const rows = events.map((e) => ({
    project: e.projectId,
    date: new Date(Math.floor(e.ts / DAY) * DAY).toISOString().slice(0, 10),
    ts: e.ts,
    path: e.path,
    visitor: e.visitor.toString(),
    cls: e.cls,
    referrer_host: null,
    import_key: null,
  }));
  await c.insert(`${db.text}.not_found`, rows);
}

const chVersion = async (engine: AnalyticsEngine, store: string) => {
  const rows = await (engine as ClickHouseEngine).sql(`SELECT max(version) AS v FROM ${ident(store).text}.schema_version`);
  return Number(rows[0].v);
};

const BACKENDS: Backend[] = [
  {
    name: 'DuckDB',
    skip: false,
    open: (store) => DuckDbEngine.open({ file: duckFile(store), readConnections: 1 }),
    writeV3: writeDuckV3,
    latest: DUCK_LATEST,
    version: async (engine) => Number((await (engine as DuckDbEngine).sql('SELECT max(version) AS v FROM schema_version'))[0].v),
    drop: async () => {},
  },
  {
    name: `ClickHouse server ${NEEDS}`,
    skip: !CLICKHOUSE_URL,
    open: async (store) => (await requireClickHouse(), openEngine(store)),
    async writeV3(store, events) {
      const c = httpConnection(parseClickHouseUrl(CLICKHOUSE_URL));
      try {
        await writeClickHouseV3(c, store, events);
      } finally {
        await c.close();
      }
    },
    latest: CH_LATEST,
    version: chVersion,
    drop: dropDatabase,
  },
  {
    name: 'ClickHouse 26.x in-process (chdb)',
    skip: false,
    open: openChdbEngine,
    writeV3: (store, events) => writeClickHouseV3(chdbConnection(), store, events),
    latest: CH_LATEST,
    version: chVersion,
    drop: async () => {},
  },
];

afterAll(() => {
  closeChdb();
  rmSync(duckDir, { recursive: true, force: true });
});

describe.each(BACKENDS)('$name: server-derived identities of not-found views', ({ skip, open, writeV3, latest, version, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const stores: string[] = [];
  const store = () => {
    const name = freshName('folio_nfid');
    stores.push(name);
    return name;
  };
  afterAll(async () => {
    for (const s of stores) await drop(s);
  });

  it('counts distinct derived identities per path and in total, exactly as plain Sets; views without an address count in none', async () => {
    const name = store();
    const engine = await open(name);
    try {
      const { events, ref } = generate(30, 1500);
      const other = generate(31, 200, 'prj_nf_other');
      await engine.write(events.slice(0, 700));
      await engine.write([...other.events, ...events.slice(700)]);
      await expectCounts(engine, ref);
      // Sixty visitorIds but at most sixteen (address, agent) pairs: the derived count is the smaller.
      const all = await engine.run(notFound, { projectId: P, range: { from: null, to: null }, limit: 100, offset: 0 });
      expect(all.totals.total).toBe(60);
      expect(all.totals.derivedVisitors).toBe(16);
    } finally {
      await engine.close();
    }
  });

  it('migration 4 keeps every count of not-found rows stored before it, and counts only later rows in derived identities', async () => {
    const name = store();
    const old = generate(40, 600);
    await writeV3(name, old.events);
    const engine = await open(name);
    try {
      expect(await version(engine, name)).toBe(latest);
      expect(latest).toBeGreaterThanOrEqual(4);
      // The stored rows read as views without an address.
      const before = old.ref.map((e) => ({ ...e, derived: null }));
      await expectCounts(engine, before);
      const later = generate(41, 400);
      await engine.write(later.events);
      await expectCounts(engine, [...before, ...later.ref]);
    } finally {
      await engine.close();
    }
    // Opened again: nothing more to apply, the same answers.
    const again = await open(name);
    try {
      expect(await version(again, name)).toBe(latest);
      expect((await again.run(notFound, { projectId: P, range: { from: null, to: null }, limit: 100, offset: 0 })).totals.views).toBe(1000);
    } finally {
      await again.close();
    }
  });
});
