// Paths that answered not found (404/410), from their own table (never page views): exact distinct
// visitors per path with COUNT(DISTINCT) / uniqExact — not-found traffic is a small share of a site's,
// so the first-seen layout of the page-view reports is not needed — in the visitors report's order,
// with the totals and each path's top referring hosts.
import { NotFoundResponse, PagedQuery } from '../../contracts/analytics.ts';
import { AI_BIT, HUMAN_BIT } from '../traffic-class.ts';
import { tsCond, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { int, num, rows as rowsOf } from '../engines/duckdb/state.ts';
import { tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { inList, raw, sql } from '../engines/clickhouse/sql.ts';
import { ROW_ORDER, type Counts, type Page } from './path-page.ts';
import { iso, type Report, type ReportParams } from './report.ts';

/** A path that answered "not found", with its exact visitors (humans and AI only) and where they came from. */
export interface NotFoundRow extends Counts {
  path: string;
  /** Distinct server-derived identities (address and user agent); views without a known address count in none. */
  derivedVisitors: number;
  /** Views by humans and AI. */
  views: number;
  firstSeen: number;
  lastSeen: number;
  /** Referring hosts by distinct visitors, at most NOT_FOUND_REFERRERS; null host: none sent. */
  referrers: { host: string | null; visitors: number }[];
}

export interface NotFoundReport {
  totals: Counts & { views: number; derivedVisitors: number };
  rows: NotFoundRow[];
  hasMore: boolean;
}

/** Referrers listed per not-found path, at most. */
export const NOT_FOUND_REFERRERS = 5;

export const notFound: Report<typeof PagedQuery, typeof NotFoundResponse, NotFoundReport> = {
  name: 'not-found',
  summary: 'Pages not found',
  description:
    'Paths that answered 404 or 410 (events and collect calls with `status`), with exact distinct visitors split into human and AI, views, first and last seen, and the top referring hosts. Such views count in no other report. Same `dateFrom`/`dateTo`/`limit`/`offset` rules and order as the visitors operation.',
  query: PagedQuery,
  response: NotFoundResponse,
  duckdb,
  clickhouse,
  wire: (r) => ({ totals: r.totals, paths: r.rows.map((p) => ({ ...p, firstSeen: iso(p.firstSeen), lastSeen: iso(p.lastSeen) })), hasMore: r.hasMore }),
};

async function duckdb(db: DuckDbReads, { projectId, range, ...page }: ReportParams<typeof PagedQuery>): Promise<NotFoundReport> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return notFoundReport([], [], page);
  const nf = `nf AS (SELECT path, visitor, cls, ts, referrer_host, derived_visitor FROM not_found WHERE ${[`project_key = ${int(pk)}`, ...tsCond(range)].join(' AND ')})`;
  // count(DISTINCT) skips NULLs: views without a known address count in no derived identity.
  const counts = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS human, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai,
    count(DISTINCT visitor) AS total, count(DISTINCT derived_visitor) AS derived_visitors, count(*) AS views`;
  const pageSql = `WITH ${nf}, paths AS (SELECT path, ${counts}, min(ts) AS first_seen, max(ts) AS last_seen,
      row_number() OVER (ORDER BY ${ROW_ORDER}) AS position FROM nf GROUP BY path
      ORDER BY position LIMIT ${int(page.limit + 1)} OFFSET ${int(page.offset)}),
    referred AS (SELECT path, referrer_host, count(DISTINCT visitor) AS referred FROM nf WHERE path IN (SELECT path FROM paths) GROUP BY ALL)
    SELECT paths.*, referred.referrer_host, referred.referred FROM paths LEFT JOIN referred USING (path)`;
  return db.readers.use(async (c) => {
    const totals = await rowsOf(c, `WITH ${nf} SELECT ${counts} FROM nf`);
    return notFoundReport(totals, await rowsOf(c, pageSql), page);
  });
}

// uniqExact skips NULLs: views without a known address count in no derived identity.
const CH_COUNTS = raw(
  `uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS human, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, uniqExact(visitor) AS total, uniqExact(derived_visitor) AS derived_visitors, count() AS views`,
);

async function clickhouse(db: ClickHouseReads, { projectId, range, ...page }: ReportParams<typeof PagedQuery>): Promise<NotFoundReport> {
  const where = sql`project = ${projectId} AND ${chTsCond(range.from, range.to)}`;
  const totals = await db.rows(sql`SELECT ${CH_COUNTS} FROM ${db.db}.not_found WHERE ${where}`);
  const paths = await db.rows(sql`SELECT path, ${CH_COUNTS}, min(ts) AS first_seen, max(ts) AS last_seen FROM ${db.db}.not_found WHERE ${where}
    GROUP BY path ORDER BY ${raw(ROW_ORDER)} LIMIT ${page.offset}, ${page.limit + 1}`);
  if (paths.length === 0) return notFoundReport(totals, [], page);
  const referred = await db.rows(sql`SELECT path, referrer_host, uniqExact(visitor) AS referred FROM ${db.db}.not_found
    WHERE ${where} AND path IN ${inList(paths.map((p) => String(p.path)))} GROUP BY path, referrer_host`);
  const hosts = new Map<string, typeof referred>();
  for (const r of referred) hosts.set(String(r.path), [...(hosts.get(String(r.path)) ?? []), r]);
  // One row per path and host, in the paths' order (as the DuckDB query answers).
  const rows = paths.flatMap((p, position) => (hosts.get(String(p.path)) ?? [{}]).map((h) => ({ ...p, position, referrer_host: h.referrer_host, referred: h.referred })));
  return notFoundReport(totals, rows, page);
}

/**
 * The report from either engine's answer (the same columns): the totals, and the page's paths — one
 * row per path and referring host, `position` giving the order — fetched one row past the page so
 * `hasMore` is known.
 */
function notFoundReport(totals: Record<string, unknown>[], pathRows: Record<string, unknown>[], page: Page): NotFoundReport {
  const t = totals[0] ?? {};
  const byPath = new Map<string, NotFoundRow & { position: number }>();
  for (const r of pathRows) {
    const path = String(r.path);
    let row = byPath.get(path);
    if (!row) {
      row = { path, human: num(r.human), ai: num(r.ai), total: num(r.total), derivedVisitors: num(r.derived_visitors), views: num(r.views), firstSeen: num(r.first_seen), lastSeen: num(r.last_seen), referrers: [], position: num(r.position) };
      byPath.set(path, row);
    }
    if (r.referred !== null && r.referred !== undefined) row.referrers.push({ host: r.referrer_host === null || r.referrer_host === undefined ? null : String(r.referrer_host), visitors: num(r.referred) });
  }
  const rows = [...byPath.values()].sort((a, b) => a.position - b.position);
  for (const row of rows) {
    // Most visitors first; hosts in code-point order, "no referrer" last.
    row.referrers.sort((a, b) => b.visitors - a.visitors || (a.host === null ? 1 : b.host === null ? -1 : a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
    row.referrers.splice(NOT_FOUND_REFERRERS);
  }
  return {
    totals: { human: num(t.human), ai: num(t.ai), total: num(t.total), derivedVisitors: num(t.derived_visitors), views: num(t.views) },
    rows: rows.slice(0, page.limit).map(({ position: _, ...row }) => row),
    hasMore: rows.length > page.limit,
  };
}
