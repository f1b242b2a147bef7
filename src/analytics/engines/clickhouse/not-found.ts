// Not-found views on ClickHouse: stored raw in their own table (never page views); the report
// reading them is src/analytics/reports/not-found.ts. For ClickHouse 18.16 and current releases alike.
import { DAY_MS } from '../../dates.ts';
import { storedReferrerHost, type StoredEvent } from '../../engine.ts';
import { LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { ClickHouseConnection } from './connection.ts';
import { sql, SqlDate, type Sql } from './sql.ts';

/** The table as migration 3 created it (shipped: never edited). */
export const notFoundTable = (db: Sql) => sql`CREATE TABLE IF NOT EXISTS ${db}.not_found (
    project String, date Date, ts UInt64, path String, visitor UInt64, cls UInt8, referrer_host Nullable(String), import_key Nullable(Int64)
  ) ENGINE = MergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, path)`;

/**
 * Migration 4: the server-derived identity (keyed hash of address and user agent) of each not-found
 * view; rows stored before it read NULL and count in no derived total. 18.16 has no ADD COLUMN IF
 * NOT EXISTS, so the column is looked up first (and another process adding it meanwhile is fine).
 */
export async function addDerivedVisitor(c: ClickHouseConnection, db: Sql, database: string): Promise<void> {
  const cols = await c.rows(sql`SELECT name FROM system.columns WHERE database = ${database} AND table = 'not_found' AND name = 'derived_visitor'`);
  if (cols.length > 0) return;
  await c.command(sql`ALTER TABLE ${db}.not_found ADD COLUMN derived_visitor Nullable(UInt64)`).catch((err: Error) => {
    if (!/already exists/.test(err.message)) throw err;
  });
}

/** Stores not-found views of humans and AI (bots' are dropped); `keep` are the indices left after import dedupe. */
export async function insertNotFound(c: ClickHouseConnection, db: Sql, events: StoredEvent[], keep: number[]): Promise<void> {
  const values = keep
    .map((i) => events[i])
    .filter((e) => e.cls <= LAST_VISITOR_CODE)
    .map((e) => ({
      project: e.projectId.toWellFormed(),
      date: new SqlDate(Math.floor(e.ts / DAY_MS)).iso(),
      ts: e.ts,
      path: e.path.toWellFormed(),
      visitor: e.visitor.toString(),
      cls: e.cls,
      referrer_host: storedReferrerHost(e.referrer)?.toWellFormed() ?? null,
      import_key: e.importKey === null ? null : e.importKey.toString(),
      derived_visitor: e.derivedVisitor === undefined || e.derivedVisitor === null ? null : e.derivedVisitor.toString(),
    }));
  if (values.length > 0) await c.insert(`${db.text}.not_found`, values);
}
