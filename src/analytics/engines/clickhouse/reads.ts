// What the reports' ClickHouse SQL runs on (src/analytics/reports/): the database and its rows,
// and the range conditions. Counting is exact (uniqExact, never uniq); literals go in through sql.ts.
import { DAY_MS } from '../../dates.ts';
import { LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { Row } from './connection.ts';
import { join, MAX_DATE_DAY, raw, sql, SqlDate, type Sql } from './sql.ts';

export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
/** Events of visitors (humans and AI), not other bots. */
export const IS_VISITOR = raw(`cls <= ${LAST_VISITOR_CODE}`);
export const HAS_BIT = (mask: string, bit: number) => raw(`bitAnd(${mask}, ${bit}) = ${bit}`);
export const LACKS_BIT = (mask: string, bit: number) => raw(`bitAnd(${mask}, ${bit}) = 0`);

/**
 * `date` condition for days [d1, d2), clamped to what a ClickHouse Date holds (stored events are
 * from 1970 on and never far in the future, so bounds outside 0..MAX_DATE_DAY are open or empty).
 */
export function dayCond(d1: number | null, d2: number | null): Sql {
  const c: Sql[] = [];
  if (d1 !== null && d1 > MAX_DATE_DAY) return raw('0');
  if (d2 !== null && d2 <= 0) return raw('0');
  if (d1 !== null && d2 !== null && d1 >= d2) return raw('0');
  if (d1 !== null && d1 > 0) c.push(sql`date >= ${new SqlDate(d1)}`);
  if (d2 !== null && d2 <= MAX_DATE_DAY) c.push(sql`date < ${new SqlDate(d2)}`);
  return c.length ? join(c, ' AND ') : raw('1');
}

/** `ts` condition for [from, to) plus the matching `date` bounds (for the primary index). */
export function tsCond(from: number | null, to: number | null): Sql {
  if (from !== null && to !== null && from >= to) return raw('0');
  const c: Sql[] = [];
  if (from !== null && from > 0) c.push(sql`ts >= ${from}`);
  if (to !== null) {
    if (to <= 0) return raw('0');
    c.push(sql`ts < ${to}`);
  }
  const d1 = from === null || from <= 0 ? null : Math.floor(from / DAY_MS);
  const d2 = to === null ? null : Math.floor((to - 1) / DAY_MS) + 1;
  c.push(dayCond(d1, d2));
  return join(c, ' AND ');
}

/** `ts` condition for the partial days at a range's edges. */
export function edgeCond(edges: [number, number][]): Sql {
  return join(
    edges.map(([a, b]) => sql`(${tsCond(a, b)})`),
    ' OR ',
  );
}

export interface ClickHouseReads {
  /** The database, quoted: tables are `${db}.events`. */
  readonly db: Sql;
  rows(q: Sql): Promise<Row[]>;
}
