// Every read of the DuckDB store: the visitors and views queries (first-seen day layout, plus raw events
// at partial-day edges and the rows not compacted yet, NEW_ROWS), the time series and the agents report.
import { DAY_MS, HOUR_MS, splitRange, type Range } from '../../dates.ts';
import type { AgentRow, Counts, Page, PagedCounts, TimeseriesPoint } from '../../engine.ts';
import { CLS_NAME } from '../../engine.ts';
import { NEW_ROWS } from './writes.ts';
import { int, num, rows as rowsOf, type Dictionaries, type PendingRows, type Pool, type Row } from './state.ts';

/** The order of visitors and views rows (the API's contract): most first, then by path (bytewise: Unicode code point order). */
const ROW_ORDER = 't DESC, path ASC';

export class DuckDbQueries {
  private readonly readers: Pool;
  private readonly dict: Dictionaries;
  private readonly pending: PendingRows;

  constructor(readers: Pool, dict: Dictionaries, pending: PendingRows) {
    this.readers = readers;
    this.dict = dict;
    this.pending = pending;
  }

  private dayCond(days: { d1: number | null; d2: number | null }): string {
    const c: string[] = [];
    if (days.d1 !== null) c.push(`day >= ${int(days.d1)}`);
    if (days.d2 !== null) c.push(`day < ${int(days.d2)}`);
    return c.length ? c.join(' AND ') : 'true';
  }

  private edgeCond(edges: [number, number][]): string {
    return edges.length ? '(' + edges.map(([a, b]) => `(ts >= ${int(a)} AND ts < ${int(b)})`).join(' OR ') + ')' : 'false';
  }

  /** CTEs `per(path_id, h, a, t)` and `tot(h, a, t)` of exact distinct visitors. */
  private visitorCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    if (split.edges.length === 0 && split.days !== 'none') {
      const dc = this.dayCond(split.days);
      const d1 = split.days.d1 === null ? 'NULL' : int(split.days.d1);
      const first = (col: string) => `(${col} IS NULL OR ${col} < ${d1})`;
      const base = `
        base AS (SELECT path_id, count(*) FILTER (WHERE mask & 1 = 1 AND ${first('prev_h')}) AS h,
                        count(*) FILTER (WHERE mask & 2 = 2 AND ${first('prev_a')}) AS a, count(*) FILTER (WHERE ${first('prev_t')}) AS t
                 FROM daily WHERE ${p} AND ${dc} GROUP BY path_id),
        sbase AS (SELECT count(*) FILTER (WHERE mask & 1 = 1 AND ${first('prev_h')}) AS h,
                         count(*) FILTER (WHERE mask & 2 = 2 AND ${first('prev_a')}) AS a, count(*) FILTER (WHERE ${first('prev_t')}) AS t
                  FROM daily_site WHERE ${p} AND ${dc})`;
      if ((this.pending.byProject.get(pk) ?? 0) === 0) {
        return `${base},
        per AS MATERIALIZED (SELECT path_id, h, a, t FROM base WHERE t > 0),
        tot AS (SELECT h, a, t FROM sbase)`;
      }
      // Rows not compacted yet: a key of theirs counts when the compacted rows in range lack it.
      return `${base},
        rk AS (SELECT path_id, visitor, bit_or(mask) AS m FROM (${NEW_ROWS}) WHERE ${p} AND ${dc} GROUP BY ALL),
        hit AS (SELECT d.path_id, d.visitor, bit_or(d.mask) AS m FROM daily d SEMI JOIN rk ON d.path_id = rk.path_id AND d.visitor = rk.visitor
                WHERE d.${p} AND ${dc.replaceAll('day', 'd.day')} GROUP BY ALL),
        extra AS (SELECT rk.path_id, count(*) FILTER (WHERE rk.m & 1 = 1 AND coalesce(hit.m, 0) & 1 = 0) AS h,
                         count(*) FILTER (WHERE rk.m & 2 = 2 AND coalesce(hit.m, 0) & 2 = 0) AS a, count(*) FILTER (WHERE hit.m IS NULL) AS t
                  FROM rk LEFT JOIN hit ON rk.path_id = hit.path_id AND rk.visitor = hit.visitor GROUP BY rk.path_id),
        per AS MATERIALIZED (SELECT path_id, sum(h)::BIGINT AS h, sum(a)::BIGINT AS a, sum(t)::BIGINT AS t FROM (SELECT * FROM base UNION ALL SELECT * FROM extra)
                GROUP BY path_id HAVING sum(t) > 0),
        srk AS (SELECT visitor, bit_or(mask) AS m FROM (${NEW_ROWS}) WHERE ${p} AND ${dc} GROUP BY visitor),
        shit AS (SELECT d.visitor, bit_or(d.mask) AS m FROM daily_site d SEMI JOIN srk ON d.visitor = srk.visitor
                 WHERE d.${p} AND ${dc.replaceAll('day', 'd.day')} GROUP BY ALL),
        sextra AS (SELECT count(*) FILTER (WHERE srk.m & 1 = 1 AND coalesce(shit.m, 0) & 1 = 0) AS h,
                          count(*) FILTER (WHERE srk.m & 2 = 2 AND coalesce(shit.m, 0) & 2 = 0) AS a, count(*) FILTER (WHERE shit.m IS NULL) AS t
                   FROM srk LEFT JOIN shit ON srk.visitor = shit.visitor),
        tot AS (SELECT sbase.h + sextra.h AS h, sbase.a + sextra.a AS a, sbase.t + sextra.t AS t FROM sbase, sextra)`;
    }
    // General path (a bound inside a day): whole days from the day tables plus raw events at the edges.
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(`SELECT path_id, visitor, mask FROM daily WHERE ${p} AND ${dc}`, `SELECT path_id, visitor, mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`);
    }
    parts.push(`SELECT path_id, visitor, cls AS mask FROM events WHERE ${p} AND cls <= 2 AND ${this.edgeCond(split.edges)}`);
    return `
      src AS (${parts.join(' UNION ALL ')}),
      pv AS MATERIALIZED (SELECT path_id, visitor, bit_or(mask) AS m FROM src GROUP BY ALL),
      per AS MATERIALIZED (SELECT path_id, count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t FROM pv GROUP BY path_id),
      tot AS (SELECT count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t
              FROM (SELECT visitor, bit_or(m) AS m FROM pv GROUP BY visitor))`;
  }

  private viewCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(
        `SELECT path_id, views_h AS h, views_a AS a FROM daily WHERE ${p} AND ${dc}`,
        `SELECT path_id, views_h AS h, views_a AS a FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`,
      );
    }
    if (split.edges.length) {
      parts.push(`SELECT path_id, (cls = 1)::INTEGER AS h, (cls = 2)::INTEGER AS a FROM events WHERE ${p} AND cls <= 2 AND ${this.edgeCond(split.edges)}`);
    }
    return `
      per AS MATERIALIZED (SELECT path_id, sum(h)::BIGINT AS h, sum(a)::BIGINT AS a, sum(h + a)::BIGINT AS t FROM (${parts.join(' UNION ALL ')}) GROUP BY path_id HAVING sum(h + a) > 0),
      tot AS (SELECT coalesce(sum(h), 0) AS h, coalesce(sum(a), 0) AS a, coalesce(sum(t), 0) AS t FROM per)`;
  }

  private async paged(projectId: string, ctes: (pk: number) => string, page: Page): Promise<PagedCounts> {
    const pk = this.dict.projectKeys.get(projectId);
    if (pk === undefined) return { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };
    const sql = `WITH ${ctes(pk)},
      ranked AS (SELECT p.path AS path, per.h AS h, per.a AS a, per.t AS t FROM per JOIN paths p ON p.path_id = per.path_id
                 ORDER BY ${ROW_ORDER} LIMIT ${int(page.limit)} OFFSET ${int(page.offset)})
      SELECT tot.h AS th, tot.a AS ta, tot.t AS tt, (SELECT count(*) FROM per) AS n, r.path, r.h, r.a, r.t
      FROM tot LEFT JOIN (SELECT *, row_number() OVER (ORDER BY ${ROW_ORDER}) AS rn FROM ranked) r ON true ORDER BY r.rn`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    const first = rows[0];
    const totals: Counts = { human: num(first?.th), ai: num(first?.ta), total: num(first?.tt) };
    const n = num(first?.n);
    return {
      totals,
      rows: rows.filter((r) => r.path !== null && r.path !== undefined).map((r) => ({ path: String(r.path), human: num(r.h), ai: num(r.a), total: num(r.t) })),
      hasMore: n > page.offset + page.limit,
    };
  }

  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, (pk) => this.visitorCtes(pk, range), page);
  }

  views(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, (pk) => this.viewCtes(pk, range), page);
  }

  async timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]> {
    const pk = this.dict.projectKeys.get(projectId);
    if (pk === undefined) return [];
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const conds = [`project_key = ${int(pk)}`, 'cls <= 2'];
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT b, count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t, sum(v)::BIGINT AS v
      FROM (SELECT ts // ${size} AS b, visitor, bit_or(cls) AS m, count(*) AS v FROM events WHERE ${conds.join(' AND ')} GROUP BY ALL)
      GROUP BY b ORDER BY b`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    return rows.map((r) => ({ start: num(r.b) * size, human: num(r.h), ai: num(r.a), total: num(r.t), views: num(r.v) }));
  }

  async agents(projectId: string, range: Range): Promise<AgentRow[]> {
    const pk = this.dict.projectKeys.get(projectId);
    if (pk === undefined) return [];
    const conds = [`project_key = ${int(pk)}`, 'cls >= 2'];
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT coalesce(agent, 'Other bots') AS agent, cls, count(DISTINCT visitor) AS v, count(*) AS n FROM events
      WHERE ${conds.join(' AND ')} GROUP BY ALL ORDER BY v DESC, n DESC, agent`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    return rows.map((r) => ({ agent: String(r.agent), category: CLS_NAME[num(r.cls)], visitors: num(r.v), views: num(r.n) }));
  }

  /** Runs SQL on a reader connection (benchmarks and diagnostics only; never with user input). */
  sql(query: string): Promise<Row[]> {
    return this.readers.use((c) => rowsOf(c, query));
  }
}
