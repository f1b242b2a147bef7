// What the visitors and views reports share: a page of paths with their counts and the site-wide
// totals, in one order on both engines; on ClickHouse, the day-table and raw-event rows of a range.
import { splitRange, type Range } from '../dates.ts';
import { CLASS_CODE } from '../traffic-class.ts';
import { edgeCond, IS_VISITOR, dayCond as chDayCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import type { DuckDbReads } from '../engines/duckdb/reads.ts';
import { join, raw, sql, type Sql } from '../engines/clickhouse/sql.ts';
import { int, num } from '../engines/duckdb/state.ts';

export interface Counts {
  human: number;
  ai: number;
  total: number;
}

export interface PathCounts extends Counts {
  path: string;
}

export interface PagedCounts {
  totals: Counts;
  rows: PathCounts[];
  hasMore: boolean;
}

export interface Page {
  limit: number;
  offset: number;
}

/** The order of the rows (the API's contract, ROW_ORDER of the contracts): most first, then by path (bytewise: Unicode code point order). */
export const ROW_ORDER = 'total DESC, path ASC';

export const EMPTY_PAGE: PagedCounts = { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };

/** DuckDB: the page of `per_path(path_id, human, ai, total)` and `totals(human, ai, total)`, CTEs that `ctes` builds for the project key. */
export async function duckdbPage(db: DuckDbReads, projectId: string, ctes: (pk: number) => string, page: Page): Promise<PagedCounts> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return EMPTY_PAGE;
  const query = `WITH ${ctes(pk)},
      ranked AS (SELECT p.path AS path, per_path.human AS human, per_path.ai AS ai, per_path.total AS total FROM per_path JOIN paths p ON p.path_id = per_path.path_id
                 ORDER BY ${ROW_ORDER} LIMIT ${int(page.limit)} OFFSET ${int(page.offset)})
      SELECT totals.human AS total_human, totals.ai AS total_ai, totals.total AS total_total, (SELECT count(*) FROM per_path) AS paths, r.path, r.human, r.ai, r.total
      FROM totals LEFT JOIN (SELECT *, row_number() OVER (ORDER BY ${ROW_ORDER}) AS position FROM ranked) r ON true ORDER BY r.position`;
  const rows = await db.rows(query);
  const first = rows[0];
  return {
    totals: { human: num(first?.total_human), ai: num(first?.total_ai), total: num(first?.total_total) },
    rows: rows.filter((r) => r.path !== null && r.path !== undefined).map((r) => ({ path: String(r.path), human: num(r.human), ai: num(r.ai), total: num(r.total) })),
    hasMore: num(first?.paths) > page.offset + page.limit,
  };
}

/** A page of rows (one past the page, to tell whether more exist) and the totals row, as the report's result. */
export function pagedCounts(rows: Record<string, unknown>[], totals: Record<string, unknown> | undefined, page: Page): PagedCounts {
  const counts = (r: Record<string, unknown> | undefined): Counts => ({ human: num(r?.human), ai: num(r?.ai), total: num(r?.total) });
  return {
    totals: counts(totals),
    rows: rows.slice(0, page.limit).map((r) => ({ path: String(r.path), ...counts(r) })),
    hasMore: rows.length > page.limit,
  };
}

/**
 * ClickHouse: rows (path?, visitor, views_h, views_a) of the range: whole days from a day table,
 * partial days from raw events (one row per view, counted as one view of its class).
 */
function source(db: ClickHouseReads, projectId: string, range: Range, perPath: boolean): Sql | null {
  const split = splitRange(range);
  const p = sql`project = ${projectId}`;
  const cols = perPath ? raw('path, visitor') : raw('visitor');
  const parts: Sql[] = [];
  if (split.days !== 'none') {
    const table = perPath ? raw('daily') : raw('daily_site');
    parts.push(sql`SELECT ${cols}, views_h, views_a FROM ${db.db}.${table} WHERE ${p} AND ${chDayCond(split.days.d1, split.days.d2)}`);
  }
  if (split.edges.length) {
    parts.push(sql`SELECT ${cols}, toUInt64(cls = ${CLASS_CODE.human}) AS views_h, toUInt64(cls = ${CLASS_CODE.ai}) AS views_a FROM ${db.db}.events
      WHERE ${p} AND ${IS_VISITOR} AND (${edgeCond(split.edges)})`);
  }
  if (parts.length === 0) return null;
  return parts.length === 1 ? parts[0] : sql`${join(parts, ' UNION ALL ')}`;
}

/** ClickHouse: the page of paths and the totals, each counted by `agg` (human, ai, total) over the range's rows. */
export async function clickhousePage(db: ClickHouseReads, projectId: string, range: Range, page: Page, agg: Sql): Promise<PagedCounts> {
  const perPath = source(db, projectId, range, true);
  const site = source(db, projectId, range, false);
  if (!perPath || !site) return EMPTY_PAGE;
  // One row past the page tells whether more paths exist.
  const rowsQ = sql`SELECT path, ${agg} FROM (${perPath}) GROUP BY path HAVING total > 0
      ORDER BY ${raw(ROW_ORDER)} LIMIT ${page.offset}, ${page.limit + 1}`;
  const [rows, totals] = await Promise.all([db.rows(rowsQ), db.rows(sql`SELECT ${agg} FROM (${site})`)]);
  return pagedCounts(rows, totals[0], page);
}
