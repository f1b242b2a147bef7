// A ClickHouse analytics database written by the layout before versioning (the DDL and the inserts of
// commit 7c0a874, frozen here) opens with the versioned engine: migration 2 adds the first-seen layout
// and folds every stored event into it, and every count equals plain Sets over the events. On 18.16
// (FOLIO_TEST_CLICKHOUSE_URL) and on 26.x (chdb).
import { afterAll, describe, expect, it } from 'vitest';
import type { ClickHouseConnection } from '../../src/analytics/engines/clickhouse/connection.ts';
import { httpConnection, parseClickHouseUrl } from '../../src/analytics/engines/clickhouse/connection.ts';
import { LATEST_VERSION } from '../../src/analytics/engines/clickhouse/schema.ts';
import { ident, raw, type Sql } from '../../src/analytics/engines/clickhouse/sql.ts';
import type { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { fixtureEvents, UPGRADE_RANGES } from '../analytics/fixture-v0.ts';
import { reference, runPathReport } from '../analytics/helpers.ts';
import { chdbConnection, closeChdb, openChdbEngine } from './chdb.ts';
import { CLICKHOUSE_URL, databaseUrl, dropDatabase, freshName, NEEDS, openEngine, requireClickHouse } from './helpers.ts';

/** The layout of every ClickHouse store before versioning. */
const OLD_DDL = (db: Sql): string[] => [
  `CREATE DATABASE IF NOT EXISTS ${db.text}`,
  `CREATE TABLE IF NOT EXISTS ${db.text}.events (
    project String, date Date, ts UInt64, path String, visitor UInt64, cls UInt8,
    agent Nullable(String), referrer Nullable(String), source UInt8, import_key Nullable(Int64)
  ) ENGINE = MergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, ts)`,
  `CREATE TABLE IF NOT EXISTS ${db.text}.daily (
    project String, date Date, path String, visitor UInt64, views_h UInt64, views_a UInt64
  ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, path, visitor)`,
  `CREATE TABLE IF NOT EXISTS ${db.text}.daily_site (
    project String, date Date, visitor UInt64, views_h UInt64, views_a UInt64
  ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, visitor)`,
  `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db.text}.daily_mv TO ${db.text}.daily AS
    SELECT project, date, path, visitor, toUInt64(countIf(cls = 1)) AS views_h, toUInt64(countIf(cls = 2)) AS views_a
    FROM ${db.text}.events WHERE cls <= 2 GROUP BY project, date, path, visitor`,
  `CREATE MATERIALIZED VIEW IF NOT EXISTS ${db.text}.daily_site_mv TO ${db.text}.daily_site AS
    SELECT project, date, visitor, toUInt64(countIf(cls = 1)) AS views_h, toUInt64(countIf(cls = 2)) AS views_a
    FROM ${db.text}.events WHERE cls <= 2 GROUP BY project, date, visitor`,
];

/** Writes the fixture's events as the old engine did (two INSERTs, so the tables hold several parts). */
async function writeOldStore(c: ClickHouseConnection, database: string): Promise<void> {
  const db = ident(database);
  for (const s of OLD_DDL(db)) await c.command(raw(s));
  const { projectId, events } = fixtureEvents();
  const rows = events.map((e) => ({
    project: projectId,
    date: new Date(Math.floor(e.ts / 86_400_000) * 86_400_000).toISOString().slice(0, 10),
    ts: e.ts,
    path: e.path,
    visitor: e.visitor,
    cls: e.cls,
    agent: e.agent,
    referrer: null,
    source: e.key === null ? 1 : 3,
    import_key: e.key,
  }));
  const half = Math.floor(rows.length / 2);
  await c.insert(`${db.text}.events`, rows.slice(0, half));
  await c.insert(`${db.text}.events`, rows.slice(half));
}

const BACKENDS = [
  {
    name: `ClickHouse server ${NEEDS}`,
    skip: !CLICKHOUSE_URL,
    connection: () => httpConnection(parseClickHouseUrl(CLICKHOUSE_URL)),
    open: async (db: string) => (await requireClickHouse(), openEngine(db)),
    drop: dropDatabase,
  },
  { name: 'ClickHouse 26.x in-process (chdb)', skip: false, connection: chdbConnection, open: openChdbEngine, drop: async () => closeChdb() },
];

describe.each(BACKENDS)('$name: a database written before versioning', ({ skip, connection, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const database = freshName('folio_chup');
  afterAll(async () => drop(database));

  it('upgrades without losing a count (migration 2 folds every stored event)', async () => {
    const c = connection();
    await writeOldStore(c, database);
    await c.close();
    let engine: ClickHouseEngine | null = null;
    try {
      engine = await open(database);
      expect(Number((await engine.sql(`SELECT max(version) AS v FROM ${ident(database).text}.schema_version`))[0].v)).toBe(LATEST_VERSION);
      const { projectId, ref } = fixtureEvents();
      const folded = await engine.sql(`SELECT sum(sign) AS n FROM ${ident(database).text}.seen`);
      expect(Number(folded[0].n)).toBeGreaterThan(1000);
      for (const [from, to] of UPGRADE_RANGES) {
        for (const mode of ['visitors', 'views'] as const) {
          const want = reference(ref, from, to, mode);
          const got = await runPathReport(engine, mode, { projectId, range: { from, to }, limit: 1000, offset: 0 });
          expect(got.totals, `${mode} ${from}..${to}`).toEqual(want.totals);
          expect(got.rows, `${mode} ${from}..${to}`).toEqual(want.rows);
        }
      }
    } finally {
      await engine?.close();
    }
    void databaseUrl;
  });
});
