// Every read of the ClickHouse store. Visitors over whole days come from the first-seen layout
// (fold.ts: a filtered count, no hash set) plus the rows not folded yet; a range with a bound inside
// a day, views, the time series and the agents report read the per-day tables and raw events.
// Counting is exact (uniqExact, never uniq).
import { DAY_MS, HOUR_MS, splitRange, type Range } from '../../dates.ts';
import type { AgentRow, Counts, NotFoundReport, Page, PagedCounts, ReferrersReport, TimeseriesPoint } from '../../engine.ts';
import { queryNotFound } from './not-found.ts';
import type { OwnHosts } from '../../own-hosts.ts';
import { queryReferrers } from './referrers.ts';
import { AI_BIT, CLASS_CODE, CLASS_NAME, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { ClickHouseConnection } from './connection.ts';
import { join, MAX_DATE_DAY, raw, sql, SqlDate, type Sql } from './sql.ts';

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
/** The order of visitors and views rows (the API's contract): most first, then by path (bytewise: Unicode code point order). */
const ROW_ORDER = raw('total DESC, path ASC');
/** Events of visitors (humans and AI), not other bots. */
const IS_VISITOR = raw(`cls <= ${LAST_VISITOR_CODE}`);
const HAS_BIT = (mask: string, bit: number) => raw(`bitAnd(${mask}, ${bit}) = ${bit}`);
const LACKS_BIT = (mask: string, bit: number) => raw(`bitAnd(${mask}, ${bit}) = 0`);

/**
 * `date` condition for days [d1, d2), clamped to what a ClickHouse Date holds (stored events are
 * from 1970 on and never far in the future, so bounds outside 0..MAX_DATE_DAY are open or empty).
 */
function dayCond(d1: number | null, d2: number | null): Sql {
  const c: Sql[] = [];
  if (d1 !== null && d1 > MAX_DATE_DAY) return raw('0');
  if (d2 !== null && d2 <= 0) return raw('0');
  if (d1 !== null && d2 !== null && d1 >= d2) return raw('0');
  if (d1 !== null && d1 > 0) c.push(sql`date >= ${new SqlDate(d1)}`);
  if (d2 !== null && d2 <= MAX_DATE_DAY) c.push(sql`date < ${new SqlDate(d2)}`);
  return c.length ? join(c, ' AND ') : raw('1');
}

/** `ts` condition for [from, to) plus the matching `date` bounds (for the primary index). */
function tsCond(from: number | null, to: number | null): Sql {
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

/** A page of rows (one past the page, to tell whether more exist) and the totals row, as the API's answer. */
function pagedCounts(rows: Record<string, unknown>[], totals: Record<string, unknown> | undefined, page: Page): PagedCounts {
  const counts = (r: Record<string, unknown> | undefined): Counts => ({ human: num(r?.human), ai: num(r?.ai), total: num(r?.total) });
  return {
    totals: counts(totals),
    rows: rows.slice(0, page.limit).map((r) => ({ path: String(r.path), ...counts(r) })),
    hasMore: rows.length > page.limit,
  };
}

const EMPTY: PagedCounts = { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };

export class ClickHouseQueries {
  private readonly c: ClickHouseConnection;
  private readonly db: Sql;

  constructor(c: ClickHouseConnection, db: Sql) {
    this.c = c;
    this.db = db;
  }

  async visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    const split = splitRange(range);
    if (split.edges.length === 0 && split.days !== 'none') return this.firstSeen(projectId, split.days.d1, split.days.d2, page);
    return this.paged(projectId, range, page, 'visitors');
  }

  views(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, range, page, 'views');
  }

  /**
   * Whole days [d1, d2): a key counts on its first live row in range (previous day before d1); keys of
   * rows not folded yet count when the folded rows in range lack them (per bit).
   */
  private async firstSeen(projectId: string, d1: number | null, d2: number | null, page: Page): Promise<PagedCounts> {
    const days = dayCond(d1, d2);
    if (days.text === '0') return EMPTY;
    const first = raw(String(Math.max(d1 ?? 0, 0)));
    const p = sql`project = ${projectId}`;
    // The watermark, and whether any row of this project and range is not folded yet (usually none:
    // then the queries are plain filtered counts).
    const state = await this.c.rows(sql`SELECT max(watermark) AS folded_up_to, (SELECT count() FROM ${this.db}.pending
      WHERE ins > (SELECT max(watermark) FROM ${this.db}.fold_state) AND ${p} AND ${days}) AS unfolded_rows FROM ${this.db}.fold_state`);
    const foldedUpTo = num(state[0]?.folded_up_to);
    const unfolded = num(state[0]?.unfolded_rows) > 0;
    const counts = (key: Sql, table: Sql) => {
      const groupBy = key.text === 'visitor' ? raw('') : sql`GROUP BY path`;
      const cols = key.text === 'visitor' ? raw('') : raw('path, ');
      const base = sql`SELECT ${cols}sumIf(sign, ${HAS_BIT('mask', HUMAN_BIT)} AND ph < ${first}) AS human, sumIf(sign, ${HAS_BIT('mask', AI_BIT)} AND pa < ${first}) AS ai,
          sumIf(sign, pt < ${first}) AS total
        FROM ${this.db}.${table} WHERE ${p} AND ${days} ${groupBy}`;
      // Rows written since the last fold: a key counts for each bit the folded rows in range lack.
      const newKeys = sql`SELECT ${key}, toUInt8(groupBitOr(cls)) AS new_mask FROM ${this.db}.pending WHERE ins > ${foldedUpTo} AND ${p} AND ${days} GROUP BY ${key}`;
      const foldedMasks = sql`SELECT ${key}, toUInt8(groupBitOr(mask)) AS folded_mask FROM (
          SELECT ${key}, mask FROM ${this.db}.${table} WHERE ${p} AND ${days} AND (${key}) IN (SELECT ${key} FROM (${newKeys}))
          GROUP BY ${key}, date, mask, ph, pa, pt HAVING sum(sign) > 0) GROUP BY ${key}`;
      const extra = sql`SELECT ${cols}toInt64(countIf(${HAS_BIT('new_mask', HUMAN_BIT)} AND ${LACKS_BIT('folded_mask', HUMAN_BIT)})) AS human,
          toInt64(countIf(${HAS_BIT('new_mask', AI_BIT)} AND ${LACKS_BIT('folded_mask', AI_BIT)})) AS ai, toInt64(countIf(folded_mask = 0)) AS total
        FROM (${newKeys}) AS new_keys ANY LEFT JOIN (${foldedMasks}) AS folded_masks USING (${key}) ${groupBy}`;
      return { base, extra };
    };
    const per = counts(raw('path, visitor'), raw('seen'));
    const site = counts(raw('visitor'), raw('seen_site'));
    // One row past the page tells whether more paths exist.
    const perRows = unfolded ? sql`SELECT path, sum(human) AS human, sum(ai) AS ai, sum(total) AS total FROM (${per.base} UNION ALL ${per.extra}) GROUP BY path` : per.base;
    const rowsQ = sql`SELECT path, human, ai, total FROM (${perRows}) WHERE total > 0 ORDER BY ${ROW_ORDER} LIMIT ${page.offset}, ${page.limit + 1}`;
    const totQ = unfolded ? sql`SELECT sum(human) AS human, sum(ai) AS ai, sum(total) AS total FROM (${site.base} UNION ALL ${site.extra})` : site.base;
    const [rows, totals] = await Promise.all([this.c.rows(rowsQ), this.c.rows(totQ)]);
    return pagedCounts(rows, totals[0], page);
  }

  private edgeCond(edges: [number, number][]): Sql {
    return join(
      edges.map(([a, b]) => sql`(${tsCond(a, b)})`),
      ' OR ',
    );
  }

  /**
   * Rows (path?, visitor, views_h, views_a) of the range: whole days from a day table, partial days
   * from raw events (one row per view, counted as one view of its class).
   */
  private source(projectId: string, range: Range, perPath: boolean): Sql | null {
    const split = splitRange(range);
    const p = sql`project = ${projectId}`;
    const cols = perPath ? raw('path, visitor') : raw('visitor');
    const parts: Sql[] = [];
    if (split.days !== 'none') {
      const table = perPath ? raw('daily') : raw('daily_site');
      parts.push(sql`SELECT ${cols}, views_h, views_a FROM ${this.db}.${table} WHERE ${p} AND ${dayCond(split.days.d1, split.days.d2)}`);
    }
    if (split.edges.length) {
      parts.push(sql`SELECT ${cols}, toUInt64(cls = ${CLASS_CODE.human}) AS views_h, toUInt64(cls = ${CLASS_CODE.ai}) AS views_a FROM ${this.db}.events
        WHERE ${p} AND ${IS_VISITOR} AND (${this.edgeCond(split.edges)})`);
    }
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0] : sql`${join(parts, ' UNION ALL ')}`;
  }

  /** Views, and visitors of ranges with a bound inside a day (uniqExact over day rows and edge events). */
  private async paged(projectId: string, range: Range, page: Page, kind: 'visitors' | 'views'): Promise<PagedCounts> {
    const perPath = this.source(projectId, range, true);
    const site = this.source(projectId, range, false);
    if (!perPath || !site) return EMPTY;
    const agg =
      kind === 'visitors'
        ? raw('uniqExactIf(visitor, views_h > 0) AS human, uniqExactIf(visitor, views_a > 0) AS ai, uniqExact(visitor) AS total')
        : raw('sum(views_h) AS human, sum(views_a) AS ai, sum(views_h + views_a) AS total');
    // One row past the page tells whether more paths exist.
    const rowsQ = sql`SELECT path, ${agg} FROM (${perPath}) GROUP BY path HAVING total > 0
      ORDER BY ${ROW_ORDER} LIMIT ${page.offset}, ${page.limit + 1}`;
    const totQ = sql`SELECT ${agg} FROM (${site})`;
    const [rows, totals] = await Promise.all([this.c.rows(rowsQ), this.c.rows(totQ)]);
    return pagedCounts(rows, totals[0], page);
  }

  async timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]> {
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const rows = await this.c.rows(sql`SELECT intDiv(ts, ${size}) AS bucket, uniqExactIf(visitor, cls = ${CLASS_CODE.human}) AS human,
        uniqExactIf(visitor, cls = ${CLASS_CODE.ai}) AS ai, uniqExact(visitor) AS total, count() AS views,
        countIf(cls = ${CLASS_CODE.human}) AS views_h, countIf(cls = ${CLASS_CODE.ai}) AS views_a
      FROM ${this.db}.events WHERE project = ${projectId} AND ${IS_VISITOR} AND ${tsCond(range.from, range.to)}
      GROUP BY bucket ORDER BY bucket`);
    return rows.map((r) => ({ start: num(r.bucket) * size, human: num(r.human), ai: num(r.ai), total: num(r.total), views: num(r.views), humanViews: num(r.views_h), aiViews: num(r.views_a) }));
  }

  notFound(projectId: string, range: Range, page: Page): Promise<NotFoundReport> {
    return queryNotFound(this.c, this.db, sql`project = ${projectId} AND ${tsCond(range.from, range.to)}`, page);
  }

  referrers(projectId: string, range: Range, page: Page, own: OwnHosts): Promise<ReferrersReport> {
    return queryReferrers(this.c, this.db, sql`project = ${projectId} AND ${tsCond(range.from, range.to)}`, page, own);
  }

  async agents(projectId: string, range: Range): Promise<AgentRow[]> {
    // `agent_name`, not `agent`: an alias equal to a column name would shadow the column inside ifNull.
    const rows = await this.c.rows(sql`SELECT ifNull(agent, 'Other bots') AS agent_name, cls, uniqExact(visitor) AS visitors, count() AS views
      FROM ${this.db}.events WHERE project = ${projectId} AND cls >= ${CLASS_CODE.ai} AND ${tsCond(range.from, range.to)}
      GROUP BY agent_name, cls ORDER BY visitors DESC, views DESC, agent_name ASC, cls ASC`);
    return rows.map((r) => ({ agent: String(r.agent_name), category: CLASS_NAME[num(r.cls)], visitors: num(r.visitors), views: num(r.views) }));
  }
}
