// A ClickHouse analytics database written by the layout before versioning (the DDL and the inserts of
// commit 7c0a874, frozen here) opens with the versioned engine: migration 2 adds the first-seen layout
// and folds every stored event into it, and every count equals plain Sets over the events. On 18.16
// (FOLIO_TEST_CLICKHOUSE_URL) and on 26.x (chdb). A version-4 database with events, folded and not,
// takes migration 5 (the first-seen key rows, the agents' daily views) and the referrers and
// AI-companies reports answer as plain Sets, also when the migration runs twice. A version-5 database
// with events, folded and not (key rows without a path among them), takes migration 6 (the first-seen
// key rows per path) and the AI-companies report per path answers as plain Sets, also when run twice.
// A version-6 database takes migration 7 (the keys per day, copied from the folded key rows) and the
// reports that look up a range's referring hosts answer as plain Sets, also when run twice. A
// version-7 database takes migration 8 (the agents' views per path, from then on): days stored before
// are read from events, so the report per path answers as plain Sets over old, mixed and new days.
import { afterAll, describe, expect, it } from 'vitest';
import type { ClickHouseConnection } from '../../src/analytics/engines/clickhouse/connection.ts';
import { httpConnection, parseClickHouseUrl } from '../../src/analytics/engines/clickhouse/connection.ts';
import { LATEST_VERSION } from '../../src/analytics/engines/clickhouse/schema.ts';
import { KEY_PATH, keyRows } from '../../src/analytics/engines/clickhouse/keys.ts';
import { ident, raw, type Sql } from '../../src/analytics/engines/clickhouse/sql.ts';
import type { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { fixtureEvents, UPGRADE_RANGES } from '../analytics/fixture-v0.ts';
import { reference, runPathReport } from '../analytics/helpers.ts';
import { chdbConnection, closeChdb, openChdbEngine } from './chdb.ts';
import { check, DAYS, generate, START } from './keys-reference.ts';
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

/** Makes a store of this version a version-4 one: the objects migration 5 adds are dropped, and so is its record. */
async function downgradeToV4(engine: ClickHouseEngine, database: string): Promise<void> {
  const db = ident(database).text;
  const v6 = ['pending_host_paths_mv', 'pending_agent_paths_mv', 'seen_path_keys', 'day_keys', 'agent_path_views_mv', 'agent_path_views'];
  for (const t of [...v6, 'pending_hosts_mv', 'pending_agents_mv', 'daily_agents_mv', 'pending_keys', 'seen_keys', 'daily_agents']) await engine.exec(`DROP TABLE IF EXISTS ${db}.${t}`);
  await setVersion(engine, db, 4);
}

/**
 * Makes a store of this version a version-5 one: the per-path table and views migration 6 adds are
 * dropped, pending_keys loses its path (its unfolded rows too) and is fed by migration 5's views again.
 */
async function downgradeToV5(engine: ClickHouseEngine, database: string): Promise<void> {
  const db = ident(database);
  for (const t of ['pending_host_paths_mv', 'pending_agent_paths_mv', 'seen_path_keys', 'day_keys', 'agent_path_views_mv', 'agent_path_views']) await engine.exec(`DROP TABLE IF EXISTS ${db.text}.${t}`);
  await engine.exec(`ALTER TABLE ${db.text}.pending_keys DROP COLUMN path`);
  for (const kind of ['host', 'agent'] as const) {
    await engine.exec(`CREATE MATERIALIZED VIEW ${db.text}.pending_${kind}s_mv TO ${db.text}.pending_keys AS ${keyRows(db, kind, raw('1'), KEY_PATH.none).text}`);
  }
  await setVersion(engine, db.text, 5);
}

/** Makes a store of this version a version-6 one: migration 7's keys per day are dropped. */
async function downgradeToV6(engine: ClickHouseEngine, database: string): Promise<void> {
  for (const t of ['agent_path_views_mv', 'agent_path_views', 'day_keys']) await engine.exec(`DROP TABLE IF EXISTS ${ident(database).text}.${t}`);
  await setVersion(engine, ident(database).text, 6);
}

/** Makes a store of this version a version-7 one: migration 8's views per path are dropped (as if their days were stored before it). */
async function downgradeToV7(engine: ClickHouseEngine, database: string): Promise<void> {
  for (const t of ['agent_path_views_mv', 'agent_path_views']) await engine.exec(`DROP TABLE IF EXISTS ${ident(database).text}.${t}`);
  await setVersion(engine, ident(database).text, 7);
}

async function setVersion(engine: ClickHouseEngine, db: string, version: number): Promise<void> {
  await engine.exec(`DROP TABLE ${db}.schema_version`);
  await engine.exec(`CREATE TABLE ${db}.schema_version (version UInt32, name String, applied_at UInt64) ENGINE = MergeTree ORDER BY version`);
  await engine.exec(`INSERT INTO ${db}.schema_version VALUES ${Array.from({ length: version }, (_, i) => `(${i + 1}, 'v${i + 1}', 0)`).join(', ')}`);
}

/** Writes `events` in inserts of 350 (several parts), then folds them. */
async function writeFolded(engine: ClickHouseEngine, events: Parameters<ClickHouseEngine['write']>[0]): Promise<void> {
  for (let s = 0; s < events.length; s += 350) await engine.write(events.slice(s, s + 350));
  await engine.compact();
}

/**
 * Opens the downgraded store twice, as a migration's first run and its retry after a failure: each
 * time the store is at LATEST_VERSION, `round` checks it, then `downgrade` undoes the migration again.
 */
async function migratedTwice(
  open: (db: string) => Promise<ClickHouseEngine>,
  database: string,
  migration: number,
  downgrade: (engine: ClickHouseEngine, database: string) => Promise<void>,
  round: (engine: ClickHouseEngine, db: string, label: string, first: boolean) => Promise<void>,
): Promise<void> {
  for (const [label, first] of [[`after migration ${migration}`, true], [`after migration ${migration} ran a second time`, false]] as const) {
    const engine = await open(database);
    try {
      const db = ident(database).text;
      expect(Number((await engine.sql(`SELECT max(version) AS v FROM ${db}.schema_version`))[0].v)).toBe(LATEST_VERSION);
      await round(engine, db, label, first);
      await downgrade(engine, database);
    } finally {
      await engine.close();
    }
  }
}

describe.each(BACKENDS)('$name: a version-4 database (before the first-seen key rows)', ({ skip, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const database = freshName('folio_chup5');
  afterAll(async () => drop(database));

  it('folds every stored event into seen_keys and sums daily_agents: the referrers and AI-companies reports stay exact, also when the migration runs again', async () => {
    const early = generate(21, 700, 1, 3);
    const late = generate(22, 500, 0, DAYS);
    const both = [...early.ref, ...late.ref];
    const writer = await open(database);
    await writeFolded(writer, early.events);
    await writer.write(late.events); // written, not folded: the migration folds them too
    await downgradeToV4(writer, database);
    await writer.close();

    // Run again from version 4: a migration retried after a failure (daily_agents is rebuilt, not summed twice).
    await migratedTwice(open, database, 5, downgradeToV4, async (engine, db, round) => {
      expect(Number((await engine.sql(`SELECT sum(sign) AS n FROM ${db}.seen_keys`))[0].n)).toBeGreaterThan(100);
      await check(engine, both, `${round}, late rows not folded`);
      const more = generate(23, 300, 2, 2);
      await engine.write(more.events);
      await check(engine, [...both, ...more.ref], `${round}, new rows not folded`);
      await engine.compact();
      await check(engine, [...both, ...more.ref], `${round}, folded`);
      both.push(...more.ref);
    });
  }, 240_000); // two rounds of migrations, folds and checks: chdb on 2 shared cores takes over a minute
});

describe.each(BACKENDS)('$name: a version-5 database (before the first-seen key rows per path)', ({ skip, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const database = freshName('folio_chup6');
  afterAll(async () => drop(database));

  it('folds every stored event into seen_path_keys: the AI-companies report per path stays exact, with key rows written before it, also when the migration runs again', async () => {
    const early = generate(31, 700, 1, 3);
    const late = generate(32, 500, 0, DAYS);
    const both = [...early.ref, ...late.ref];
    const writer = await open(database);
    await writeFolded(writer, early.events);
    await downgradeToV5(writer, database);
    await writer.write(late.events); // written by a version-5 store, not folded: key rows without a path
    await writer.close();

    // Run again from version 5: a migration retried after a failure.
    await migratedTwice(open, database, 6, downgradeToV5, async (engine, db, round, first) => {
      expect(Number((await engine.sql(`SELECT sum(sign) AS n FROM ${db}.seen_path_keys`))[0].n)).toBeGreaterThan(100);
      if (first) expect(Number((await engine.sql(`SELECT count() AS n FROM ${db}.pending_keys WHERE path IS NULL`))[0].n)).toBeGreaterThan(0);
      await check(engine, both, `${round}, late rows not folded`);
      const more = generate(33, 300, 2, 2);
      await engine.write(more.events);
      await check(engine, [...both, ...more.ref], `${round}, new rows not folded`);
      await engine.compact();
      await check(engine, [...both, ...more.ref], `${round}, folded`);
      both.push(...more.ref);
    });
  }, 240_000); // two rounds of migrations, folds and checks: chdb on 2 shared cores takes over a minute
});

describe.each(BACKENDS)('$name: a version-6 database (before the keys per day)', ({ skip, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const database = freshName('folio_chup7');
  afterAll(async () => drop(database));

  it("copies every folded key into day_keys: the reports that look up a range's referring hosts stay exact, also when the migration runs again", async () => {
    const early = generate(41, 700, 1, 3);
    const late = generate(42, 500, 0, DAYS);
    const both = [...early.ref, ...late.ref];
    const writer = await open(database);
    await writeFolded(writer, early.events);
    await writer.write(late.events); // written, not folded: the next fold adds their keys
    await downgradeToV6(writer, database);
    await writer.close();

    // Run again from version 6: a migration retried after a failure copies the same keys again.
    await migratedTwice(open, database, 7, downgradeToV6, async (engine, db, round) => {
      // The folded hosts are there before any fold of this version runs.
      expect(Number((await engine.sql(`SELECT count() AS n FROM ${db}.day_keys WHERE kind = 1`))[0].n)).toBeGreaterThan(0);
      await check(engine, both, `${round}, late rows not folded`);
      const more = generate(43, 300, 2, 2);
      await engine.write(more.events);
      await engine.compact();
      await check(engine, [...both, ...more.ref], `${round}, folded`);
      both.push(...more.ref);
    });
  }, 240_000);
});

describe.each(BACKENDS)('$name: a version-7 database (before the agents views per path)', ({ skip, open, drop }) => {
  if (skip) return void it.skip(`skipped: this suite ${NEEDS}`);
  const database = freshName('folio_chup8');
  afterAll(async () => drop(database));

  it('reads the days stored before from events and the later ones from agent_path_views: the report per path stays exact, also when the migration runs again', async () => {
    const early = generate(51, 700, 0, 3); // days 0-2, stored before the views per path
    const both = [...early.ref];
    const writer = await open(database);
    await writeFolded(writer, early.events);
    await downgradeToV7(writer, database);
    await writer.close();

    // Run again from version 7: the views per path are gone, every day is read from events.
    await migratedTwice(open, database, 8, downgradeToV7, async (engine, db, round, first) => {
      await check(engine, both, `${round}, days stored before`);
      const more = generate(first ? 53 : 54, 500, 2, 4); // day 2 mixed, days 3-5 new
      await engine.write(more.events);
      await engine.compact();
      both.push(...more.ref);
      // The new days' views are in the table; the mixed day's sums there fall short of daily_agents'.
      const perDay = await engine.sql(`SELECT toUInt32(date) - toUInt32(toDate('${new Date(START).toISOString().slice(0, 10)}')) AS day, sum(views) AS n FROM ${db}.agent_path_views GROUP BY day ORDER BY day`);
      expect(perDay.map((r) => Number(r.day)).filter((d) => d < 2)).toEqual([]);
      expect(perDay.some((r) => Number(r.day) >= 3 && Number(r.n) > 0)).toBe(true);
      await check(engine, both, `${round}, old, mixed and new days`);
    });
  }, 240_000);
});
