// The effect of a merged job on the pages it touched: for equal windows before and after the merge
// (impact-windows.ts, clipped to the time since the merge and to the first event there is), per page
// and in total (deduplicated across pages), exact distinct human and AI visitors, views by both,
// distinct humans who arrived from an AI answer (referrer source class ai_assistant, the project's own
// hosts excluded), and distinct not-found visitors on the old addresses. Raw events filtered by path
// (a job touches a few pages): DuckDB and ClickHouse SQL side by side, the same answer.
import { Type } from 'typebox';
import { ImpactCounts } from '../../contracts/impact.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../traffic-class.ts';
import { equalWindows, type EqualWindows } from '../impact-windows.ts';
import { NO_OWN_HOSTS } from '../own-hosts.ts';
import { int, num, rows as rowsOf } from '../engines/duckdb/state.ts';
import type { DuckDbReads } from '../engines/duckdb/reads.ts';
import { tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { inList, raw, sql } from '../engines/clickhouse/sql.ts';
import { clickhouseHost, clickhouseSourceOf, duckdbHost, duckdbSourceOf, quote } from './referrers.ts';
import { rulesOf, type Report, type ReportParams } from './report.ts';

/** One page's addresses: where its views count, and where its not-found visitors do. */
const PageAddresses = Type.Object({
  views: Type.Array(Type.String(), { description: 'Site paths whose page views count (current and old addresses).' }),
  notFound: Type.Array(Type.String(), { description: 'Old addresses whose not-found visitors count (moved or removed pages, redirect sources).' }),
});

export const JobImpactParams = Type.Object({
  pages: Type.Array(PageAddresses),
  /** The merge (ms since the epoch). */
  at: Type.Integer(),
  days: Type.Integer({ minimum: 1 }),
  now: Type.Integer(),
});

const Counted = Type.Object({ before: ImpactCounts, after: ImpactCounts });

export const JobImpactCounts = Type.Object({
  windows: Type.Union([Type.Null(), Type.Object({ before: Type.Object({ from: Type.Integer(), to: Type.Integer() }), after: Type.Object({ from: Type.Integer(), to: Type.Integer() }), length: Type.Number(), clipped: Type.Union([Type.String(), Type.Null()]) })]),
  total: Counted,
  pages: Type.Array(Counted),
});

type Counts = { humans: number; ai: number; views: number; fromAiAnswers: number; notFound: number };
export interface JobImpactResult {
  /** Null while the merge is less than a day old (nothing counted). */
  windows: EqualWindows | null;
  total: { before: Counts; after: Counts };
  pages: { before: Counts; after: Counts }[];
}

type Params = ReportParams<typeof JobImpactParams>;

export const jobImpact: Report<typeof JobImpactParams, typeof JobImpactCounts, JobImpactResult> = {
  name: 'job-impact',
  summary: 'The effect of a merged job on its pages',
  description: 'Per page and in total, equal windows before and after the merge: human and AI visitors, views, humans from AI answers, not-found visitors on old addresses.',
  query: JobImpactParams,
  response: JobImpactCounts,
  duckdb,
  clickhouse,
  wire: (r) => r,
};

const ZERO: Counts = { humans: 0, ai: 0, views: 0, fromAiAnswers: 0, notFound: 0 };

/** Addresses a site path is read at: as the site links it, with a trailing slash, and as Markdown (AI readers). */
export function addressesOf(sitePath: string): string[] {
  if (sitePath === '/') return ['/', '/index.md'];
  const bare = sitePath.replace(/\/+$/, '');
  return [bare, `${bare}/`, `${bare}.md`];
}

/** The (page, address) pairs, every address once per page; `all`: every address once. */
function pairs(pages: Params['pages'], kind: 'views' | 'notFound'): { list: [number, string][]; all: string[] } {
  const list: [number, string][] = [];
  pages.forEach((p, i) => {
    for (const a of new Set(p[kind])) list.push([i, a]);
  });
  return { list, all: [...new Set(list.map(([, a]) => a))] };
}

/** The answer from either engine's rows: `page` -1 is the total; `after` 0 or 1. */
function result(windows: EqualWindows | null, count: number, viewRows: Record<string, unknown>[], nfRows: Record<string, unknown>[]): JobImpactResult {
  const out: JobImpactResult = { windows, total: { before: { ...ZERO }, after: { ...ZERO } }, pages: Array.from({ length: count }, () => ({ before: { ...ZERO }, after: { ...ZERO } })) };
  const slot = (r: Record<string, unknown>) => {
    const page = num(r.page);
    const side = num(r.after) === 1 ? 'after' : 'before';
    return page === -1 ? out.total[side] : out.pages[page]?.[side];
  };
  for (const r of viewRows) {
    const c = slot(r);
    if (c) Object.assign(c, { humans: num(r.humans), ai: num(r.ai), views: num(r.views), fromAiAnswers: num(r.from_ai) });
  }
  for (const r of nfRows) {
    const c = slot(r);
    if (c) c.notFound = num(r.not_found);
  }
  return out;
}

/** The earliest event of either table before the merge: where the data starts. */
const firstOf = (rows: Record<string, unknown>[]) => {
  const ts = rows.map((r) => r.first).filter((v) => v !== null && v !== undefined).map(Number).filter((v) => v > 0);
  return ts.length ? Math.min(...ts) : null;
};

const DUCKDB_COUNTS = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS humans, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai,
  count(*) AS views, count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai`;

const values = (list: [number, string][]) => list.map(([i, a]) => `(${int(i)}, ${quote(a)})`).join(', ');

async function duckdb(db: DuckDbReads, { projectId, pages, at, days, now, ownHosts = NO_OWN_HOSTS, rules }: Params): Promise<JobImpactResult> {
  const pk = db.projectKey(projectId);
  const views = pairs(pages, 'views');
  const nf = pairs(pages, 'notFound');
  if (pk === undefined) return result(equalWindows(at, days, now, null), pages.length, [], []);
  return db.readers.use(async (c) => {
    const first = await rowsOf(c, `SELECT min(ts) AS first FROM events WHERE project_key = ${int(pk)} AND ts < ${int(at)}
      UNION ALL SELECT min(ts) AS first FROM not_found WHERE project_key = ${int(pk)} AND ts < ${int(at)}`);
    const windows = equalWindows(at, days, now, firstOf(first));
    if (!windows || pages.length === 0) return result(windows, pages.length, [], []);
    const span = `ts >= ${int(windows.before.from)} AND ts < ${int(windows.after.to)}`;
    const side = `(ts >= ${int(at)})::INTEGER AS after`;
    let viewRows: Record<string, unknown>[] = [];
    if (views.list.length > 0) {
      const ev = `ev AS (SELECT e.ts, e.visitor, e.cls, p.path, ${duckdbHost(ownHosts)} AS host FROM events e JOIN paths p ON p.path_id = e.path_id AND p.project_key = e.project_key
          WHERE e.project_key = ${int(pk)} AND e.cls <= ${LAST_VISITOR_CODE} AND e.${span} AND p.path IN (${views.all.map(quote).join(', ')})),
        w AS (SELECT ts, visitor, cls, path, ${side}, ${duckdbSourceOf('host', rulesOf(rules).sources)} AS source FROM ev),
        addr(page, path) AS (VALUES ${values(views.list)})`;
      viewRows = await rowsOf(c, `WITH ${ev} SELECT page, after, ${DUCKDB_COUNTS} FROM w JOIN addr USING (path) GROUP BY page, after
        UNION ALL SELECT -1 AS page, after, ${DUCKDB_COUNTS} FROM w GROUP BY after`);
    }
    let nfRows: Record<string, unknown>[] = [];
    if (nf.list.length > 0) {
      const w = `w AS (SELECT visitor, path, ${side} FROM not_found WHERE project_key = ${int(pk)} AND cls <= ${LAST_VISITOR_CODE} AND ${span} AND path IN (${nf.all.map(quote).join(', ')})),
        addr(page, path) AS (VALUES ${values(nf.list)})`;
      nfRows = await rowsOf(c, `WITH ${w} SELECT page, after, count(DISTINCT visitor) AS not_found FROM w JOIN addr USING (path) GROUP BY page, after
        UNION ALL SELECT -1 AS page, after, count(DISTINCT visitor) AS not_found FROM w GROUP BY after`);
    }
    return result(windows, pages.length, viewRows, nfRows);
  });
}

const CLICKHOUSE_COUNTS = raw(`uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS humans, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, count() AS views,
  uniqExactIf(visitor, cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai`);

/**
 * ClickHouse: each row once per page holding its path (arrayJoin over the pages' address lists; 18.16
 * has no VALUES join, and its lambdas see only their arguments, so the path comes in as an array too).
 */
const pageOf = (list: [number, string][]) => {
  const pages = list.map(([i]) => i);
  return sql`arrayJoin(arrayFilter((g, a, p) -> a = p, ${pages}, ${list.map(([, a]) => a)}, replicate(path, ${pages})))`;
};

async function clickhouse(db: ClickHouseReads, { projectId, pages, at, days, now, ownHosts = NO_OWN_HOSTS, rules }: Params): Promise<JobImpactResult> {
  const views = pairs(pages, 'views');
  const nf = pairs(pages, 'notFound');
  const first = await db.rows(sql`SELECT min(ts) AS first FROM ${db.db}.events WHERE project = ${projectId} AND ts < ${at}
    UNION ALL SELECT min(ts) AS first FROM ${db.db}.not_found WHERE project = ${projectId} AND ts < ${at}`);
  const windows = equalWindows(at, days, now, firstOf(first));
  if (!windows || pages.length === 0) return result(windows, pages.length, [], []);
  const span = chTsCond(windows.before.from, windows.after.to);
  const side = sql`toUInt8(ts >= ${at}) AS after`;
  let viewRows: Record<string, unknown>[] = [];
  if (views.list.length > 0) {
    const w = sql`SELECT ts, visitor, cls, path, ${side}, ${clickhouseSourceOf(raw('host'), rulesOf(rules).sources)} AS source
      FROM (SELECT ts, visitor, cls, path, ${clickhouseHost(ownHosts)} AS host FROM ${db.db}.events
        WHERE project = ${projectId} AND cls <= ${LAST_VISITOR_CODE} AND ${span} AND path IN ${inList(views.all)})`;
    viewRows = [
      ...(await db.rows(sql`SELECT ${pageOf(views.list)} AS page, after, ${CLICKHOUSE_COUNTS} FROM (${w}) GROUP BY page, after`)),
      ...(await db.rows(sql`SELECT -1 AS page, after, ${CLICKHOUSE_COUNTS} FROM (${w}) GROUP BY after`)),
    ];
  }
  let nfRows: Record<string, unknown>[] = [];
  if (nf.list.length > 0) {
    const w = sql`SELECT visitor, path, ${side} FROM ${db.db}.not_found WHERE project = ${projectId} AND cls <= ${LAST_VISITOR_CODE} AND ${span} AND path IN ${inList(nf.all)}`;
    nfRows = [
      ...(await db.rows(sql`SELECT ${pageOf(nf.list)} AS page, after, uniqExact(visitor) AS not_found FROM (${w}) GROUP BY page, after`)),
      ...(await db.rows(sql`SELECT -1 AS page, after, uniqExact(visitor) AS not_found FROM (${w}) GROUP BY after`)),
    ];
  }
  return result(windows, pages.length, viewRows, nfRows);
}
