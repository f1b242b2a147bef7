// Distinct human and AI visitors and page views per UTC day or hour, from the raw events.
import { TimeseriesQuery, TimeseriesResponse } from '../../contracts/analytics.ts';
import { DAY_MS, HOUR_MS } from '../dates.ts';
import { CLASS_CODE } from '../traffic-class.ts';
import { HAS_AI, HAS_HUMAN, IS_VISITOR, tsCond } from '../engines/duckdb/reads.ts';
import { int, num } from '../engines/duckdb/state.ts';
import { IS_VISITOR as CH_IS_VISITOR, tsCond as chTsCond } from '../engines/clickhouse/reads.ts';
import { sql } from '../engines/clickhouse/sql.ts';
import { iso, type Report } from './report.ts';

export interface TimeseriesPoint {
  start: number;
  human: number;
  ai: number;
  total: number;
  views: number;
  humanViews: number;
  aiViews: number;
}

/** Both engines answer in the same columns. */
const point = (size: number) => (r: Record<string, unknown>): TimeseriesPoint => ({
  start: num(r.bucket) * size,
  human: num(r.human),
  ai: num(r.ai),
  total: num(r.total),
  views: num(r.views),
  humanViews: num(r.views_h),
  aiViews: num(r.views_a),
});

export const timeseries: Report<typeof TimeseriesQuery, typeof TimeseriesResponse, { interval: 'day' | 'hour'; series: TimeseriesPoint[] }> = {
  name: 'timeseries',
  summary: 'Visitors over time',
  description: 'Distinct human and AI visitors and page views per UTC day or hour, for charts. `interval=hour` needs both bounds, at most 31 days apart.',
  query: TimeseriesQuery,
  response: TimeseriesResponse,
  async duckdb(db, { projectId, range, interval }) {
    const pk = db.projectKey(projectId);
    if (pk === undefined) return { interval, series: [] };
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const conds = [`project_key = ${int(pk)}`, IS_VISITOR, ...tsCond(range)];
    const rows = await db.rows(`SELECT bucket, count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total, sum(views)::BIGINT AS views,
        sum(views_h)::BIGINT AS views_h, sum(views_a)::BIGINT AS views_a
      FROM (SELECT ts // ${size} AS bucket, visitor, bit_or(cls) AS mask, count(*) AS views, count(*) FILTER (WHERE ${HAS_HUMAN('cls')}) AS views_h,
        count(*) FILTER (WHERE ${HAS_AI('cls')}) AS views_a FROM events WHERE ${conds.join(' AND ')} GROUP BY ALL)
      GROUP BY bucket ORDER BY bucket`);
    return { interval, series: rows.map(point(size)) };
  },
  async clickhouse(db, { projectId, range, interval }) {
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const rows = await db.rows(sql`SELECT intDiv(ts, ${size}) AS bucket, uniqExactIf(visitor, cls = ${CLASS_CODE.human}) AS human,
        uniqExactIf(visitor, cls = ${CLASS_CODE.ai}) AS ai, uniqExact(visitor) AS total, count() AS views,
        countIf(cls = ${CLASS_CODE.human}) AS views_h, countIf(cls = ${CLASS_CODE.ai}) AS views_a
      FROM ${db.db}.events WHERE project = ${projectId} AND ${CH_IS_VISITOR} AND ${chTsCond(range.from, range.to)}
      GROUP BY bucket ORDER BY bucket`);
    return { interval, series: rows.map(point(size)) };
  },
  wire: ({ interval, series }) => ({ interval, series: series.map((p) => ({ ...p, start: iso(p.start) })) }),
};
