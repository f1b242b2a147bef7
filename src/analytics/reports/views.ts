// Page views per path and site-wide, human and AI: whole days from the day tables (plus, on DuckDB,
// the rows not compacted yet), partial days from the raw events.
import { PagedQuery, ViewsResponse } from '../../contracts/analytics.ts';
import { splitRange, type Range } from '../dates.ts';
import { CLASS_CODE } from '../traffic-class.ts';
import { dayCond, edgeCond, IS_VISITOR } from '../engines/duckdb/reads.ts';
import { int, NEW_ROWS } from '../engines/duckdb/state.ts';
import { raw } from '../engines/clickhouse/sql.ts';
import { clickhousePage, duckdbPage, type PagedCounts } from './path-page.ts';
import type { Report } from './report.ts';

export const views: Report<typeof PagedQuery, typeof ViewsResponse, PagedCounts> = {
  name: 'views',
  summary: 'Get page views',
  description: 'Page-view counts per path and site-wide, split into human and AI. Same parameters and order as the visitors operation.',
  query: PagedQuery,
  response: ViewsResponse,
  duckdb: (db, p) => duckdbPage(db, p.projectId, (pk) => duckdbCtes(pk, p.range), p),
  clickhouse: (db, p) => clickhousePage(db, p.projectId, p.range, p, raw('sum(views_h) AS human, sum(views_a) AS ai, sum(views_h + views_a) AS total')),
  wire: ({ totals, rows, hasMore }) => ({ totals, views: rows, hasMore }),
};

/** DuckDB: CTEs `per_path` and `totals` of views (human, ai, total). */
function duckdbCtes(pk: number, range: Range): string {
  const split = splitRange(range);
  const p = `project_key = ${int(pk)}`;
  const parts: string[] = [];
  if (split.days !== 'none') {
    const dc = dayCond(split.days);
    parts.push(
      `SELECT path_id, views_h AS human, views_a AS ai FROM daily WHERE ${p} AND ${dc}`,
      `SELECT path_id, views_h AS human, views_a AS ai FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`,
    );
  }
  if (split.edges.length) {
    parts.push(`SELECT path_id, (cls = ${CLASS_CODE.human})::INTEGER AS human, (cls = ${CLASS_CODE.ai})::INTEGER AS ai FROM events WHERE ${p} AND ${IS_VISITOR} AND ${edgeCond(split.edges)}`);
  }
  return `
      per_path AS MATERIALIZED (SELECT path_id, sum(human)::BIGINT AS human, sum(ai)::BIGINT AS ai, sum(human + ai)::BIGINT AS total
                                FROM (${parts.join(' UNION ALL ')}) GROUP BY path_id HAVING sum(human + ai) > 0),
      totals AS (SELECT coalesce(sum(human), 0) AS human, coalesce(sum(ai), 0) AS ai, coalesce(sum(total), 0) AS total FROM per_path)`;
}
