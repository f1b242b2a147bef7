// Not-found views on ClickHouse: stored raw in their own table (never page views), counted exactly
// per path with uniqExact. Written for ClickHouse 18.16 and current releases alike (no window functions).
import { DAY_MS } from '../../dates.ts';
import { notFoundReport, storedReferrerHost, type NotFoundReport, type Page, type StoredEvent } from '../../engine.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { ClickHouseConnection } from './connection.ts';
import { inList, raw, sql, SqlDate, type Sql } from './sql.ts';

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

// uniqExact skips NULLs: views without a known address count in no derived identity.
const COUNTS = raw(
  `uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS human, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, uniqExact(visitor) AS total, uniqExact(derived_visitor) AS derived_visitors, count() AS views`,
);

/** The not-found report: paths by distinct visitors (the visitors report's order), with totals and referrers. */
export async function queryNotFound(c: ClickHouseConnection, db: Sql, where: Sql, page: Page): Promise<NotFoundReport> {
  const totals = await c.rows(sql`SELECT ${COUNTS} FROM ${db}.not_found WHERE ${where}`);
  const paths = await c.rows(sql`SELECT path, ${COUNTS}, min(ts) AS first_seen, max(ts) AS last_seen FROM ${db}.not_found WHERE ${where}
    GROUP BY path ORDER BY total DESC, path ASC LIMIT ${page.offset}, ${page.limit + 1}`);
  if (paths.length === 0) return notFoundReport(totals, [], page);
  const referred = await c.rows(sql`SELECT path, referrer_host, uniqExact(visitor) AS referred FROM ${db}.not_found
    WHERE ${where} AND path IN ${inList(paths.map((p) => String(p.path)))} GROUP BY path, referrer_host`);
  const hosts = new Map<string, typeof referred>();
  for (const r of referred) hosts.set(String(r.path), [...(hosts.get(String(r.path)) ?? []), r]);
  // One row per path and host, in the paths' order (as the DuckDB query answers).
  const rows = paths.flatMap((p, position) => (hosts.get(String(p.path)) ?? [{}]).map((h) => ({ ...p, position, referrer_host: h.referrer_host, referred: h.referred })));
  return notFoundReport(totals, rows, page);
}
