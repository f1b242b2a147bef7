// Exact distinct visitors per path and site-wide, human and AI. Both engines count whole days from
// the first-seen layout (a key counts on its first row in range: a filtered count, no hash set) plus
// the rows not compacted (DuckDB) or folded (ClickHouse) yet; a range with a bound inside a day adds
// the raw events of those partial days.
import { PagedQuery, VisitorsResponse } from '../../contracts/analytics.ts';
import { splitRange, type Range } from '../dates.ts';
import { dayCond, edgeCond, HAS_AI, HAS_HUMAN, IS_VISITOR, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { firstSeenCounts, newKeyCtes } from './first-seen.ts';
import { int, NEW_ROWS } from '../engines/duckdb/state.ts';
import { dayCond as chDayCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { firstCounts, firstDay, foldState, newKeyCounts } from './first-seen-clickhouse.ts';
import { raw, sql } from '../engines/clickhouse/sql.ts';
import { clickhousePage, duckdbPage, EMPTY_PAGE, pagedCounts, ROW_ORDER, type Page, type PagedCounts } from './path-page.ts';
import type { Report } from './report.ts';

export const visitors: Report<typeof PagedQuery, typeof VisitorsResponse, PagedCounts> = {
  name: 'visitors',
  summary: 'Get unique visitors',
  description:
    'Exact distinct visitors per path and site-wide, split into human and AI; `total` is deduplicated across both. `dateFrom` inclusive, `dateTo` exclusive.',
  query: PagedQuery,
  response: VisitorsResponse,
  duckdb: (db, p) => duckdbPage(db, p.projectId, (pk) => duckdbCtes(db, pk, p.range), p),
  clickhouse(db, p) {
    const split = splitRange(p.range);
    if (split.edges.length === 0 && split.days !== 'none') return clickhouseFirstSeen(db, p.projectId, split.days.d1, split.days.d2, p);
    const agg = raw('uniqExactIf(visitor, views_h > 0) AS human, uniqExactIf(visitor, views_a > 0) AS ai, uniqExact(visitor) AS total');
    return clickhousePage(db, p.projectId, p.range, p, agg);
  },
  wire: ({ totals, rows, hasMore }) => ({ totals, visitors: rows, hasMore }),
};

/** DuckDB: CTEs `per_path(path_id, human, ai, total)` and `totals(human, ai, total)` of exact distinct visitors. */
function duckdbCtes(db: DuckDbReads, pk: number, range: Range): string {
  const split = splitRange(range);
  const p = `project_key = ${int(pk)}`;
  if (split.edges.length === 0 && split.days !== 'none') return wholeDayCtes(db, pk, split.days);
  // General path (a bound inside a day): whole days from the day tables plus raw events at the edges.
  const parts: string[] = [];
  if (split.days !== 'none') {
    const dc = dayCond(split.days);
    parts.push(`SELECT path_id, visitor, mask FROM daily WHERE ${p} AND ${dc}`, `SELECT path_id, visitor, mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`);
  }
  parts.push(`SELECT path_id, visitor, cls AS mask FROM events WHERE ${p} AND ${IS_VISITOR} AND ${edgeCond(split.edges)}`);
  return `
      src AS (${parts.join(' UNION ALL ')}),
      path_visitors AS MATERIALIZED (SELECT path_id, visitor, bit_or(mask) AS mask FROM src GROUP BY ALL),
      per_path AS MATERIALIZED (SELECT path_id, count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total
                                FROM path_visitors GROUP BY path_id),
      totals AS (SELECT count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total
                 FROM (SELECT visitor, bit_or(mask) AS mask FROM path_visitors GROUP BY visitor))`;
}

/**
 * DuckDB, whole days only: a key's first row in range is the one whose previous day (per bit) is
 * before the range, so distinct counts are filtered counts of the day tables.
 */
function wholeDayCtes(db: DuckDbReads, pk: number, days: { d1: number | null; d2: number | null }): string {
  const p = `project_key = ${int(pk)}`;
  const dc = dayCond(days);
  const counts = firstSeenCounts(days.d1);
  const compacted = `
        compacted AS (SELECT path_id, ${counts} FROM daily WHERE ${p} AND ${dc} GROUP BY path_id),
        compacted_site AS (SELECT ${counts} FROM daily_site WHERE ${p} AND ${dc})`;
  if ((db.pending.byProject.get(pk) ?? 0) === 0) {
    return `${compacted},
        per_path AS MATERIALIZED (SELECT path_id, human, ai, total FROM compacted WHERE total > 0),
        totals AS (SELECT human, ai, total FROM compacted_site)`;
  }
  // Rows not compacted yet: a key of theirs counts when the compacted rows in range lack it.
  const fresh = (key: string) => `SELECT ${key}, mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`;
  const stored = (table: string, key: string) => `SELECT ${key}, mask FROM ${table} WHERE ${p} AND ${dc}`;
  return `${compacted},
        ${newKeyCtes({ scope: '', fresh: fresh('path_id, visitor'), compacted: stored('daily', 'path_id, visitor'), key: ['path_id', 'visitor'], group: ['path_id'] })},
        per_path AS MATERIALIZED (SELECT path_id, sum(human)::BIGINT AS human, sum(ai)::BIGINT AS ai, sum(total)::BIGINT AS total
                                  FROM (SELECT * FROM compacted UNION ALL SELECT * FROM new_counts) GROUP BY path_id HAVING sum(total) > 0),
        ${newKeyCtes({ scope: 'site_', fresh: fresh('visitor'), compacted: stored('daily_site', 'visitor'), key: ['visitor'], group: [] })},
        totals AS (SELECT c.human + n.human AS human, c.ai + n.ai AS ai, c.total + n.total AS total FROM compacted_site c, new_site_counts n)`;
}

/**
 * ClickHouse, whole days [d1, d2): a key counts on its first live row in range (previous day before
 * d1); keys of rows not folded yet count when the folded rows in range lack them (per bit).
 */
async function clickhouseFirstSeen(db: ClickHouseReads, projectId: string, d1: number | null, d2: number | null, page: Page): Promise<PagedCounts> {
  const days = chDayCond(d1, d2);
  if (days.text === '0') return EMPTY_PAGE;
  const first = firstDay(d1);
  const scope = sql`project = ${projectId} AND ${days}`;
  const { foldedUpTo, unfolded } = await foldState(db, scope);
  const counts = (key: string[], table: string) => {
    const group = key.slice(0, -1);
    const cols = raw(group.map((c) => `${c}, `).join(''));
    const groupBy = group.length ? raw(`GROUP BY ${group.join(', ')}`) : raw('');
    const base = sql`SELECT ${cols}${firstCounts(first)} FROM ${db.db}.${raw(table)} WHERE ${scope} ${groupBy}`;
    const fresh = sql`SELECT ${raw(key.join(', '))}, cls FROM ${db.db}.pending WHERE ins > ${foldedUpTo} AND ${scope}`;
    return { base, extra: newKeyCounts({ fresh, table: sql`${db.db}.${raw(table)}`, where: scope, key, group }) };
  };
  const per = counts(['path', 'visitor'], 'seen');
  const site = counts(['visitor'], 'seen_site');
  // One row past the page tells whether more paths exist.
  const perRows = unfolded ? sql`SELECT path, sum(human) AS human, sum(ai) AS ai, sum(total) AS total FROM (${per.base} UNION ALL ${per.extra}) GROUP BY path` : per.base;
  const rowsQ = sql`SELECT path, human, ai, total FROM (${perRows}) WHERE total > 0 ORDER BY ${raw(ROW_ORDER)} LIMIT ${page.offset}, ${page.limit + 1}`;
  const totQ = unfolded ? sql`SELECT sum(human) AS human, sum(ai) AS ai, sum(total) AS total FROM (${site.base} UNION ALL ${site.extra})` : site.base;
  const [rows, totals] = await Promise.all([db.rows(rowsQ), db.rows(totQ)]);
  return pagedCounts(rows, totals[0], page);
}
