// Every read of the DuckDB store: the visitors and views queries (first-seen day layout, plus raw events
// at partial-day edges and the rows not compacted yet, NEW_ROWS), the time series and the agents report.
import { DAY_MS, HOUR_MS, splitRange, type Range } from '../../dates.ts';
import type { AgentRow, Counts, NotFoundReport, Page, PagedCounts, ReferrersReport, TimeseriesPoint } from '../../engine.ts';
import { queryNotFound } from './not-found.ts';
import { queryReferrers } from './referrers.ts';
import type { OwnHosts } from '../../own-hosts.ts';
import { AI_BIT, CLASS_CODE, CLASS_NAME, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { NEW_ROWS } from './writes.ts';
import { int, num, rows as rowsOf, type Dictionaries, type PendingRows, type Pool, type Row } from './state.ts';

/** The order of visitors and views rows (the API's contract): most first, then by path (bytewise: Unicode code point order). */
const ROW_ORDER = 'total DESC, path ASC';

/** Rows of visitors (humans and AI), not other bots. */
const IS_VISITOR = `cls <= ${LAST_VISITOR_CODE}`;
const HAS_HUMAN = (mask: string) => `${mask} & ${HUMAN_BIT} = ${HUMAN_BIT}`;
const HAS_AI = (mask: string) => `${mask} & ${AI_BIT} = ${AI_BIT}`;
const LACKS = (mask: string, bit: number) => `coalesce(${mask}, 0) & ${bit} = 0`;

/**
 * CTEs over the rows not compacted yet, per `key` (path and visitor, or visitor site-wide):
 * `new_<scope>keys` (their keys and masks), `compacted_<scope>masks` (the masks the day table already
 * holds for those keys in range) and `new_<scope>counts`: the keys (and bits) the day table lacks.
 */
function newKeyCtes(p: string, dc: string, key: string[], table: string, scope: string): string {
  const keys = `new_${scope}keys`;
  const known = `compacted_${scope}masks`;
  const perPath = key.includes('path_id');
  const join = (a: string, b: string) => key.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND ');
  return `${keys} AS (SELECT ${key.join(', ')}, bit_or(mask) AS mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc} GROUP BY ALL),
        ${known} AS (SELECT ${key.map((c) => `d.${c}`).join(', ')}, bit_or(d.mask) AS mask FROM ${table} d SEMI JOIN ${keys} ON ${join('d', keys)}
                WHERE d.${p} AND ${dc.replaceAll('day', 'd.day')} GROUP BY ALL),
        new_${scope}counts AS (SELECT ${perPath ? 'n.path_id, ' : ''}count(*) FILTER (WHERE ${HAS_HUMAN('n.mask')} AND ${LACKS('k.mask', HUMAN_BIT)}) AS human,
                         count(*) FILTER (WHERE ${HAS_AI('n.mask')} AND ${LACKS('k.mask', AI_BIT)}) AS ai, count(*) FILTER (WHERE k.mask IS NULL) AS total
                  FROM ${keys} n LEFT JOIN ${known} k ON ${join('n', 'k')}${perPath ? ' GROUP BY n.path_id' : ''})`;
}

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

  /** CTEs `per_path(path_id, human, ai, total)` and `totals(human, ai, total)` of exact distinct visitors. */
  private visitorCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    if (split.edges.length === 0 && split.days !== 'none') return this.wholeDayVisitorCtes(pk, split.days);
    // General path (a bound inside a day): whole days from the day tables plus raw events at the edges.
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(`SELECT path_id, visitor, mask FROM daily WHERE ${p} AND ${dc}`, `SELECT path_id, visitor, mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`);
    }
    parts.push(`SELECT path_id, visitor, cls AS mask FROM events WHERE ${p} AND ${IS_VISITOR} AND ${this.edgeCond(split.edges)}`);
    return `
      src AS (${parts.join(' UNION ALL ')}),
      path_visitors AS MATERIALIZED (SELECT path_id, visitor, bit_or(mask) AS mask FROM src GROUP BY ALL),
      per_path AS MATERIALIZED (SELECT path_id, count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total
                                FROM path_visitors GROUP BY path_id),
      totals AS (SELECT count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total
                 FROM (SELECT visitor, bit_or(mask) AS mask FROM path_visitors GROUP BY visitor))`;
  }

  /**
   * Whole days only: a key's first row in range is the one whose previous day (per bit) is before
   * the range, so distinct counts are filtered counts of the day tables.
   */
  private wholeDayVisitorCtes(pk: number, days: { d1: number | null; d2: number | null }): string {
    const p = `project_key = ${int(pk)}`;
    const dc = this.dayCond(days);
    const d1 = days.d1 === null ? 'NULL' : int(days.d1);
    const first = (col: string) => `(${col} IS NULL OR ${col} < ${d1})`;
    const counts = `count(*) FILTER (WHERE ${HAS_HUMAN('mask')} AND ${first('prev_h')}) AS human,
                    count(*) FILTER (WHERE ${HAS_AI('mask')} AND ${first('prev_a')}) AS ai, count(*) FILTER (WHERE ${first('prev_t')}) AS total`;
    const compacted = `
        compacted AS (SELECT path_id, ${counts} FROM daily WHERE ${p} AND ${dc} GROUP BY path_id),
        compacted_site AS (SELECT ${counts} FROM daily_site WHERE ${p} AND ${dc})`;
    if ((this.pending.byProject.get(pk) ?? 0) === 0) {
      return `${compacted},
        per_path AS MATERIALIZED (SELECT path_id, human, ai, total FROM compacted WHERE total > 0),
        totals AS (SELECT human, ai, total FROM compacted_site)`;
    }
    // Rows not compacted yet: a key of theirs counts when the compacted rows in range lack it.
    return `${compacted},
        ${newKeyCtes(p, dc, ['path_id', 'visitor'], 'daily', '')},
        per_path AS MATERIALIZED (SELECT path_id, sum(human)::BIGINT AS human, sum(ai)::BIGINT AS ai, sum(total)::BIGINT AS total
                                  FROM (SELECT * FROM compacted UNION ALL SELECT * FROM new_counts) GROUP BY path_id HAVING sum(total) > 0),
        ${newKeyCtes(p, dc, ['visitor'], 'daily_site', 'site_')},
        totals AS (SELECT c.human + n.human AS human, c.ai + n.ai AS ai, c.total + n.total AS total FROM compacted_site c, new_site_counts n)`;
  }

  /** CTEs `per_path` and `totals` of views (human, ai, total). */
  private viewCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(
        `SELECT path_id, views_h AS human, views_a AS ai FROM daily WHERE ${p} AND ${dc}`,
        `SELECT path_id, views_h AS human, views_a AS ai FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`,
      );
    }
    if (split.edges.length) {
      parts.push(`SELECT path_id, (cls = ${CLASS_CODE.human})::INTEGER AS human, (cls = ${CLASS_CODE.ai})::INTEGER AS ai FROM events WHERE ${p} AND ${IS_VISITOR} AND ${this.edgeCond(split.edges)}`);
    }
    return `
      per_path AS MATERIALIZED (SELECT path_id, sum(human)::BIGINT AS human, sum(ai)::BIGINT AS ai, sum(human + ai)::BIGINT AS total
                                FROM (${parts.join(' UNION ALL ')}) GROUP BY path_id HAVING sum(human + ai) > 0),
      totals AS (SELECT coalesce(sum(human), 0) AS human, coalesce(sum(ai), 0) AS ai, coalesce(sum(total), 0) AS total FROM per_path)`;
  }

  private async paged(projectId: string, ctes: (pk: number) => string, page: Page): Promise<PagedCounts> {
    const pk = this.dict.projectKeys.get(projectId);
    if (pk === undefined) return { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };
    const sql = `WITH ${ctes(pk)},
      ranked AS (SELECT p.path AS path, per_path.human AS human, per_path.ai AS ai, per_path.total AS total FROM per_path JOIN paths p ON p.path_id = per_path.path_id
                 ORDER BY ${ROW_ORDER} LIMIT ${int(page.limit)} OFFSET ${int(page.offset)})
      SELECT totals.human AS total_human, totals.ai AS total_ai, totals.total AS total_total, (SELECT count(*) FROM per_path) AS paths, r.path, r.human, r.ai, r.total
      FROM totals LEFT JOIN (SELECT *, row_number() OVER (ORDER BY ${ROW_ORDER}) AS position FROM ranked) r ON true ORDER BY r.position`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    const first = rows[0];
    const totals: Counts = { human: num(first?.total_human), ai: num(first?.total_ai), total: num(first?.total_total) };
    const paths = num(first?.paths);
    return {
      totals,
      rows: rows.filter((r) => r.path !== null && r.path !== undefined).map((r) => ({ path: String(r.path), human: num(r.human), ai: num(r.ai), total: num(r.total) })),
      hasMore: paths > page.offset + page.limit,
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
    const conds = [`project_key = ${int(pk)}`, IS_VISITOR];
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT bucket, count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) AS total, sum(views)::BIGINT AS views,
        sum(views_h)::BIGINT AS views_h, sum(views_a)::BIGINT AS views_a
      FROM (SELECT ts // ${size} AS bucket, visitor, bit_or(cls) AS mask, count(*) AS views, count(*) FILTER (WHERE ${HAS_HUMAN('cls')}) AS views_h,
        count(*) FILTER (WHERE ${HAS_AI('cls')}) AS views_a FROM events WHERE ${conds.join(' AND ')} GROUP BY ALL)
      GROUP BY bucket ORDER BY bucket`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    return rows.map((r) => ({ start: num(r.bucket) * size, human: num(r.human), ai: num(r.ai), total: num(r.total), views: num(r.views), humanViews: num(r.views_h), aiViews: num(r.views_a) }));
  }

  async agents(projectId: string, range: Range): Promise<AgentRow[]> {
    const pk = this.dict.projectKeys.get(projectId);
    if (pk === undefined) return [];
    const conds = [`project_key = ${int(pk)}`, `cls >= ${CLASS_CODE.ai}`]; // AI and other bots
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT coalesce(agent, 'Other bots') AS agent, cls, count(DISTINCT visitor) AS visitors, count(*) AS views FROM events
      WHERE ${conds.join(' AND ')} GROUP BY ALL ORDER BY visitors DESC, views DESC, agent`;
    const rows = await this.readers.use((c) => rowsOf(c, sql));
    return rows.map((r) => ({ agent: String(r.agent), category: CLASS_NAME[num(r.cls)], visitors: num(r.visitors), views: num(r.views) }));
  }

  notFound(projectId: string, range: Range, page: Page): Promise<NotFoundReport> {
    return queryNotFound(this.readers, this.dict, projectId, range, page);
  }

  referrers(projectId: string, range: Range, page: Page, own: OwnHosts): Promise<ReferrersReport> {
    return queryReferrers(this.readers, this.dict, projectId, range, page, own);
  }

  /** Runs SQL on a reader connection (benchmarks and diagnostics only; never with user input). */
  sql(query: string): Promise<Row[]> {
    return this.readers.use((c) => rowsOf(c, query));
  }
}
