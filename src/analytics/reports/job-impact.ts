// The effect of a merged job on the pages it touched: for equal windows of whole UTC days before and
// after the day of the merge (impact-windows.ts, clipped to the days since the merge and to the first
// event there is), per page and in total (deduplicated across pages), exact distinct human and AI
// visitors, views by both, distinct humans who arrived from an AI answer (referrer source class
// ai_assistant, the project's own hosts excluded), and distinct not-found visitors on the old
// addresses. Both engines read the day tables of the pages' paths (DuckDB up to 32 pages, beyond
// that its raw events): side by side, the same answer.
import type { DuckDBConnection } from '@duckdb/node-api';
import { Type } from 'typebox';
import { ImpactCounts } from '../../contracts/impact.ts';
import { AI_BIT, HUMAN_BIT, KEY_KIND, LAST_VISITOR_CODE } from '../traffic-class.ts';
import { DAY_MS } from '../dates.ts';
import { beforeOpens, daysBetween, equalWindows, type EqualWindows } from '../impact-windows.ts';
import { NO_OWN_HOSTS, type OwnHosts } from '../own-hosts.ts';
import type { SourceRule } from '../referrer-sources.ts';
import { int, num, rows as rowsOf, UNCOMPACTED } from '../engines/duckdb/state.ts';
import { HAS_AI, HAS_HUMAN, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { dayCond as chDayCond, HAS_BIT, tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { pathKeyRows } from '../engines/clickhouse/keys.ts';
import { foldState, hostsMatching } from './first-seen-clickhouse.ts';
import { keysOf } from './first-seen.ts';
import { inList, join, raw, sql, SqlDate, type Sql } from '../engines/clickhouse/sql.ts';
import { clickhouseNotOwn, clickhouseSourceOf, duckdbHost, duckdbNotOwn, duckdbSourceOf, needPathHosts, quote } from './referrers.ts';
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
  /** Null until the first whole UTC day after the merge's day is over (nothing counted). */
  windows: EqualWindows | null;
  total: { before: Counts; after: Counts };
  pages: { before: Counts; after: Counts }[];
}

type Params = ReportParams<typeof JobImpactParams>;

export const jobImpact: Report<typeof JobImpactParams, typeof JobImpactCounts, JobImpactResult> = {
  name: 'job-impact',
  summary: 'The effect of a merged job on its pages',
  description: 'Per page and in total, equal windows of whole UTC days before and after the day of the merge: human and AI visitors, views, humans from AI answers, not-found visitors on old addresses.',
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

/**
 * DuckDB: the rows in the windows (whole days), as comparisons of their `day` column a scan filters
 * by: the windows' span, less the day of the merge between them (an OR of the two ranges was
 * evaluated row by row: 3× slower).
 */
function windowDays(windows: EqualWindows, day = 'day'): string {
  const between = daysBetween(windows);
  const span = `${day} >= ${int(windows.before.from / DAY_MS)} AND ${day} < ${int(windows.after.to / DAY_MS)}`;
  return between.length ? `${span} AND ${day} NOT IN (${between.map(int).join(', ')})` : span;
}

/** The earliest event of either table before the merge: where the data starts. */
const firstOf = (rows: Record<string, unknown>[]) => {
  const ts = rows.map((r) => r.first).filter((v) => v !== null && v !== undefined).map(Number).filter((v) => v > 0);
  return ts.length ? Math.min(...ts) : null;
};

const DUCKDB_COUNTS = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS humans, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai,
  count(*) AS views, count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai`;

const values = (list: [number, string][]) => list.map(([i, a]) => `(${int(i)}, ${quote(a)})`).join(', ');

/**
 * DuckDB: the first event before the merge, as far as equalWindows needs it. Any event (either table)
 * at or before `opens`, where the asked windows would start, leaves them unclipped, and one row found
 * ends the scan; only without one is the earliest event after `opens` looked for.
 */
async function duckdbFirst(c: DuckDBConnection, pk: number, at: number, opens: number): Promise<number | null> {
  const probe = (table: string) => `SELECT (SELECT ts FROM ${table} WHERE project_key = ${int(pk)} AND ts <= ${int(opens)} LIMIT 1) AS first`;
  const early = (await rowsOf(c, `${probe('events')} UNION ALL ${probe('not_found')}`)).find((r) => r.first !== null && r.first !== undefined);
  if (early) return Number(early.first);
  const after = (table: string) => `SELECT min(ts) AS first FROM ${table} WHERE project_key = ${int(pk)} AND ts > ${int(opens)} AND ts < ${int(at)}`;
  return firstOf(await rowsOf(c, `${after('events')} UNION ALL ${after('not_found')}`));
}

/** What the views queries need besides the connection. */
interface ViewsAsked {
  pk: number;
  pages: number;
  views: ReturnType<typeof pairs>;
  windows: EqualWindows;
  /** Whether the project has rows not compacted yet. */
  pending: boolean;
  ownHosts: OwnHosts;
  sources: readonly SourceRule[];
}

/**
 * DuckDB: the windows first (where the data starts), beside the pages' path ids; then the views and
 * the not-found visitors, side by side on two reader connections.
 */
async function duckdb(db: DuckDbReads, { projectId, pages, at, days, now, ownHosts = NO_OWN_HOSTS, rules }: Params): Promise<JobImpactResult> {
  const pk = db.projectKey(projectId);
  const views = pairs(pages, 'views');
  const nf = pairs(pages, 'notFound');
  if (pk === undefined) return result(equalWindows(at, days, now, null), pages.length, [], []);
  const byBits = views.list.length > 0 && pages.length <= MAX_BIT_PAGES;
  const [first, ids] = await Promise.all([
    db.readers.use((c) => duckdbFirst(c, pk, at, beforeOpens(at, days, now))),
    byBits ? db.rows(`SELECT path_id, path FROM paths WHERE project_key = ${int(pk)} AND path IN (${views.all.map(quote).join(', ')})`) : [],
  ]);
  const windows = equalWindows(at, days, now, first);
  if (!windows || pages.length === 0) return result(windows, pages.length, [], []);
  const pending = (db.pending.byProject.get(pk) ?? 0) > 0;
  const asked: ViewsAsked = { pk, pages: pages.length, views, windows, pending, ownHosts, sources: rulesOf(rules).sources };
  needPathHosts(db, asked.sources);
  const none = Promise.resolve([]);
  const [viewRows, nfRows] = await Promise.all([
    views.list.length === 0 ? none : db.readers.use((c) => (byBits ? duckdbPageBits(c, asked, ids) : duckdbPerPage(c, asked))),
    nf.list.length === 0 ? none : db.readers.use((c) => duckdbNotFound(c, pk, windows, nf)),
  ]);
  return result(windows, pages.length, viewRows, nfRows);
}

/** DuckDB: distinct not-found visitors on the old addresses per (page, side), and in total. */
function duckdbNotFound(c: DuckDBConnection, pk: number, windows: EqualWindows, nf: ReturnType<typeof pairs>): Promise<Record<string, unknown>[]> {
  const w = `w AS (SELECT visitor, path, (ts >= ${int(windows.after.from)})::INTEGER AS after FROM not_found WHERE project_key = ${int(pk)} AND cls <= ${LAST_VISITOR_CODE} AND ${windowDays(windows)} AND path IN (${nf.all.map(quote).join(', ')})),
    addr(page, path) AS (VALUES ${values(nf.list)})`;
  return rowsOf(c, `WITH ${w} SELECT page, after, count(DISTINCT visitor) AS not_found FROM w JOIN addr USING (path) GROUP BY page, after
    UNION ALL SELECT -1 AS page, after, count(DISTINCT visitor) AS not_found FROM w GROUP BY after`);
}

/**
 * DuckDB, any number of pages (those above MAX_BIT_PAGES): distinct counts per (page, side) over the
 * views joined to the (page, address) pairs, and again in total: two groupings by visitor, the source
 * class per view.
 */
async function duckdbPerPage(c: DuckDBConnection, { pk, views, windows, ownHosts, sources }: ViewsAsked): Promise<Record<string, unknown>[]> {
  const ev = `ev AS (SELECT e.ts, e.visitor, e.cls, p.path, ${duckdbHost(ownHosts)} AS host FROM events e JOIN paths p ON p.path_id = e.path_id AND p.project_key = e.project_key
      WHERE e.project_key = ${int(pk)} AND e.cls <= ${LAST_VISITOR_CODE} AND ${windowDays(windows, 'e.day')} AND p.path IN (${views.all.map(quote).join(', ')})),
    w AS (SELECT ts, visitor, cls, path, (ts >= ${int(windows.after.from)})::INTEGER AS after, ${duckdbSourceOf('host', sources)} AS source FROM ev),
    addr(page, path) AS (VALUES ${values(views.list)})`;
  return rowsOf(c, `WITH ${ev} SELECT page, after, ${DUCKDB_COUNTS} FROM w JOIN addr USING (path) GROUP BY page, after
    UNION ALL SELECT -1 AS page, after, ${DUCKDB_COUNTS} FROM w GROUP BY after`);
}

/**
 * Pages up to 32: each page one bit of a UBIGINT, its bit + 32 after the merge, so one grouping per
 * visitor (one integer key) holds every page's counts on both sides and the totals.
 */
const MAX_BIT_PAGES = 32;

/**
 * DuckDB: whether an event not compacted yet is a human's view from an AI answer (a boolean SQL
 * expression): its class is human and its referring host (`host`) is of class ai_assistant. A cheap
 * necessary condition first, so the class CASE of every rule in order (duckdbSourceOf), the costly
 * part, runs on few rows: the raw `referrer` (a host or, in rows stored before hosts were, a whole
 * URL in any case) contains an ai_assistant host in any case.
 */
function duckdbFromAi(sources: readonly SourceRule[], host: string): string {
  const ai = sources.filter((r) => r.category === 'ai_assistant').map((r) => r.host);
  if (ai.length === 0) return 'false';
  const maybe = `referrer IS NOT NULL AND regexp_matches(referrer, ${quote(ai.map((h) => h.replaceAll('.', '\\.')).join('|'))}, 'i')`;
  return `CASE WHEN ${HAS_HUMAN('cls')} AND ${maybe} THEN ${duckdbSourceOf(host, sources)} = 'ai_assistant' ELSE false END`;
}

/**
 * DuckDB, up to MAX_BIT_PAGES pages: each row carries the bits of the pages its address belongs to
 * (shifted by 32 after the merge), ORed per visitor for humans, AI and humans from AI answers; beside
 * it the views per (side, address). The visitors' bit patterns, counted (few distinct ones), give
 * each page's visitors on each side (its bit set) and the totals (any bit of the side). Only the
 * visitors seen off the busiest address are grouped so; the others are counted per side from that
 * address's first rows (its links). The windows are whole days, read from the day tables (`daily` for
 * visitors and views, `daily_path_keys` for humans from AI answers, the hosts classed at query time)
 * and, for the rows not compacted yet, from `events`. The path ids (`ids`, the pages' addresses'
 * rows of `paths`) are literals, so the scans filter by them.
 */
async function duckdbPageBits(c: DuckDBConnection, { pk, pages, views, windows, pending, ownHosts, sources }: ViewsAsked, ids: Record<string, unknown>[]): Promise<Record<string, unknown>[]> {
  const bitsOf = new Map<string, bigint>();
  for (const [i, a] of views.list) bitsOf.set(a, (bitsOf.get(a) ?? 0n) | (1n << BigInt(i)));
  if (ids.length === 0) return [];
  const pageBits = new Map(ids.map((r) => [num(r.path_id), bitsOf.get(String(r.path)) ?? 0n]));
  // A row's page bits on its side: those of its address, shifted by 32 after the merge.
  const bits = (a = '') => `(CASE ${a}path_id ${[...pageBits].map(([id, b]) => `WHEN ${int(id)} THEN ${b.toString()}::UBIGINT`).join(' ')} END) << (32 * ${a}after)`;
  const rows = `project_key = ${int(pk)} AND path_id IN (${[...pageBits.keys()].map(int).join(', ')})`;
  // The windows are whole days (equalWindows): read from the day tables, with the rows not compacted yet.
  const inDays = windowDays(windows);
  const [beforeOpens, afterOpens] = [int(windows.before.from / DAY_MS), int(windows.after.from / DAY_MS)];
  const dayAfter = `(day >= ${afterOpens})::UTINYINT`;
  // `linked`: a row of `daily`. Its links (prev_h, prev_a) tell whether it is the first row of its
  // (path, visitor) on its side (fh, fa: the human and AI bits), read once in the scan.
  const firstOn = (prev: string) => `(${prev} IS NULL OR ${prev} < CASE WHEN day >= ${afterOpens} THEN ${afterOpens} ELSE ${beforeOpens} END)`;
  const parts = [`SELECT ${dayAfter} AS after, visitor, path_id, mask, views_h + views_a AS n, false AS from_ai, true AS linked,
    ${HAS_HUMAN('mask')} AND ${firstOn('prev_h')} AS fh, ${HAS_AI('mask')} AND ${firstOn('prev_a')} AS fa FROM daily WHERE ${rows} AND ${inDays}`];
  // Only a human's view from an AI answer has a row here (the human and view counts come from `daily`):
  // the humans' rows of the pages' referring hosts, each host classed once (keysOf), not per row.
  const fromAiRows = sources.some((r) => r.category === 'ai_assistant')
    ? `hr AS MATERIALIZED (SELECT day, visitor, path_id, k FROM daily_path_keys WHERE ${rows} AND kind = ${KEY_KIND.host} AND ${inDays} AND ${HAS_HUMAN('mask')}),
      ai_hosts AS (SELECT k FROM (${keysOf('hr')}) WHERE ${duckdbNotOwn('k', ownHosts)} AND ${duckdbSourceOf('k', sources)} = 'ai_assistant'),`
    : '';
  if (fromAiRows) parts.push(`SELECT ${dayAfter}, visitor, path_id, 0, 0, true, false, false, false FROM hr SEMI JOIN ai_hosts USING (k)`);
  if (pending) {
    parts.push(`SELECT ${dayAfter}, visitor, path_id, cls, 1, ${duckdbFromAi(sources, duckdbHost(ownHosts))}, false, false, false
      FROM events WHERE ${rows} AND cls <= ${LAST_VISITOR_CODE} AND ${UNCOMPACTED} AND ${inDays}`);
  }
  // Most rows are of one address (the busiest page's): its visitors seen nowhere else (no other
  // address, no row from an AI answer or not compacted) are counted per side from its rows' links,
  // without grouping; only the other visitors' rows are grouped per visitor into bit patterns.
  // The rows once (MATERIALIZED). Per (side, address): the views, and the first rows of its (path,
  // visitor) keys; the busiest address's visitors alone are its first rows less the shared visitors'.
  const firsts = `count(*) FILTER (WHERE fh) AS nh, count(*) FILTER (WHERE fa) AS na`;
  const grouped = await rowsOf(c, `WITH ${fromAiRows} e AS MATERIALIZED (${parts.join(' UNION ALL ')}),
      per_address AS MATERIALIZED (SELECT after, path_id, sum(n) AS views, count(*) FILTER (WHERE linked) AS linked_rows, ${firsts}
        FROM e GROUP BY after, path_id),
      busiest AS MATERIALIZED (SELECT path_id FROM per_address GROUP BY path_id ORDER BY sum(linked_rows) DESC, path_id LIMIT 1),
      shared AS (SELECT DISTINCT visitor FROM e WHERE NOT linked OR path_id NOT IN (SELECT path_id FROM busiest)),
      sr AS MATERIALIZED (SELECT * FROM e SEMI JOIN shared USING (visitor)),
      g AS (SELECT bit_or(CASE WHEN ${HAS_HUMAN('mask')} THEN b ELSE 0 END) AS h, bit_or(CASE WHEN ${HAS_AI('mask')} THEN b ELSE 0 END) AS a,
          bit_or(CASE WHEN from_ai THEN b ELSE 0 END) AS f FROM (SELECT visitor, mask, from_ai, ${bits()} AS b FROM sr) GROUP BY visitor),
      taken AS (SELECT after, ${firsts} FROM sr WHERE path_id IN (SELECT path_id FROM busiest) GROUP BY after),
      alone AS (SELECT ${bits('p.')} AS bits, p.nh - coalesce(t.nh, 0) AS h, p.na - coalesce(t.na, 0) AS a
        FROM per_address p LEFT JOIN taken t USING (after) WHERE p.path_id IN (SELECT path_id FROM busiest))
    SELECT NULL AS after, NULL AS path_id, h, a, f, count(*) AS visitors, 0 AS views FROM g GROUP BY ALL
    UNION ALL SELECT NULL, NULL, bits, 0, 0, h, 0 FROM alone
    UNION ALL SELECT NULL, NULL, 0, bits, 0, a, 0 FROM alone
    UNION ALL SELECT after, path_id, 0, 0, 0, 0, views FROM per_address`);
  return fromBits(pages, pageBits, grouped);
}

/** The views rows `result` reads (per page and side, and page -1 the total) from the bit patterns' counts. */
function fromBits(pages: number, pageBits: Map<number, bigint>, grouped: Record<string, unknown>[]): Record<string, unknown>[] {
  const out = [0, 1].flatMap((after) => Array.from({ length: pages + 1 }, (_, i) => ({ page: i - 1, after, humans: 0, ai: 0, views: 0, from_ai: 0 })));
  const at = (page: number, after: number) => out[after * (pages + 1) + page + 1];
  const has = (bits: bigint, page: number) => ((bits >> BigInt(page)) & 1n) === 1n;
  for (const r of grouped) {
    if (r.path_id !== null) {
      // Views per address: once in the total, once in each page it belongs to.
      const after = num(r.after);
      const bits = pageBits.get(num(r.path_id)) ?? 0n;
      at(-1, after).views += num(r.views);
      for (let p = 0; p < pages; p++) if (has(bits, p)) at(p, after).views += num(r.views);
      continue;
    }
    const n = num(r.visitors);
    for (const after of [0, 1]) {
      // This side's 32 bits of each mask.
      const side = (mask: unknown) => (BigInt(mask as bigint) >> BigInt(32 * after)) & 0xffffffffn;
      const [h, a, f] = [side(r.h), side(r.a), side(r.f)];
      for (let p = -1; p < pages; p++) {
        const c = at(p, after);
        const set = (bits: bigint) => (p === -1 ? bits !== 0n : has(bits, p));
        if (set(h)) c.humans += n;
        if (set(a)) c.ai += n;
        if (set(f)) c.from_ai += n;
      }
    }
  }
  return out;
}

/** ClickHouse: the counts over rows of `daily` (view sums vh, va) and of human views from AI answers (fa). */
const CLICKHOUSE_COUNTS = raw(`uniqExactIf(visitor, vh > 0) AS humans, uniqExactIf(visitor, va > 0) AS ai, sum(vh + va) AS views, uniqExactIf(visitor, fa = 1) AS from_ai`);

/**
 * ClickHouse: each row once per page holding its path and once for the total (page -1), so one pass
 * counts both: arrayJoin over the pages of the row's address, found by the address's index in a
 * constant array (pages numbered from 1, so the total's 0 fits the same type; 18.16 has no VALUES
 * join).
 */
const pageOf = ({ list, all }: ReturnType<typeof pairs>) => {
  const pagesOf = all.map((a) => list.filter(([, b]) => b === a).map(([i]) => i + 1));
  return sql`arrayJoin(arrayPushFront(arrayElement(${pagesOf}, indexOf(${all}, path)), 0)) - 1`;
};

/** ClickHouse: the rows in the windows by their `date`, which the tables' keys lead with (as windowDays). */
function chWindowDays(windows: EqualWindows): Sql {
  const between = daysBetween(windows).map((d) => sql`date != ${new SqlDate(d)}`);
  return join([chDayCond(windows.before.from / DAY_MS, windows.after.to / DAY_MS), ...between], ' AND ');
}

/** ClickHouse: where the data starts, probed as on DuckDB (a row at or before `opens` is enough). */
async function clickhouseFirst(db: ClickHouseReads, projectId: string, at: number, opens: number): Promise<number | null> {
  const probe = (table: string) => sql`SELECT ts AS first FROM ${db.db}.${raw(table)} WHERE project = ${projectId} AND ${chTsCond(null, opens + 1)} LIMIT 1`;
  const early = (await Promise.all([db.rows(probe('events')), db.rows(probe('not_found'))])).flat();
  if (early.length > 0) return firstOf(early);
  const after = (table: string) => sql`SELECT min(ts) AS first FROM ${db.db}.${raw(table)} WHERE project = ${projectId} AND ${chTsCond(opens + 1, at)}`;
  return firstOf(await db.rows(sql`${after('events')} UNION ALL ${after('not_found')}`));
}

/**
 * ClickHouse: the windows are whole days, so visitors and views come from `daily` (view sums per
 * day, path and visitor, written on insert; its key leads with the date and path), humans from AI
 * answers from the first-seen key rows per path (`seen_path_keys`, keyed by kind and host), and
 * not-found visitors from `not_found` (keyed by date and path). Per page and in total.
 */
async function clickhouse(db: ClickHouseReads, { projectId, pages, at, days, now, ownHosts = NO_OWN_HOSTS, rules }: Params): Promise<JobImpactResult> {
  const views = pairs(pages, 'views');
  const nf = pairs(pages, 'notFound');
  const windows = equalWindows(at, days, now, await clickhouseFirst(db, projectId, at, beforeOpens(at, days, now)));
  if (!windows || pages.length === 0) return result(windows, pages.length, [], []);
  const w: ChWindows = { scope: sql`project = ${projectId} AND ${chWindowDays(windows)}`, side: sql`toUInt8(date >= ${new SqlDate(windows.after.from / DAY_MS)}) AS after` };
  const [viewRows, nfRows] = await Promise.all([
    views.list.length > 0 ? clickhouseViews(db, w, views, ownHosts, rulesOf(rules).sources) : [],
    nf.list.length > 0 ? clickhouseNotFound(db, w, nf) : [],
  ]);
  return result(windows, pages.length, viewRows, nfRows);
}

/** A ClickHouse job-impact query's rows: the project and the windows' days, and the side of a row. */
interface ChWindows {
  scope: Sql;
  side: Sql;
}

/** ClickHouse: the counts of rows `w` per page and in total, in one pass (pageOf). */
function chPerPageAndTotal(db: ClickHouseReads, w: Sql, addresses: ReturnType<typeof pairs>, counts: Sql): Promise<Record<string, unknown>[]> {
  return db.rows(sql`SELECT ${pageOf(addresses)} AS page, after, ${counts} FROM (${w}) GROUP BY page, after`);
}

/**
 * ClickHouse: visitors and views from `daily`; humans from AI answers from the key rows per path of
 * the ai_assistant hosts among the range's (found first) with a human's view, unfolded rows as they are.
 */
async function clickhouseViews(db: ClickHouseReads, { scope, side }: ChWindows, views: ReturnType<typeof pairs>, ownHosts: OwnHosts, sources: readonly SourceRule[]): Promise<Record<string, unknown>[]> {
  const fold = await foldState(db, scope);
  const aiHosts = await hostsMatching(db, fold, sql`${scope} AND kind = ${KEY_KIND.host} AND ${clickhouseNotOwn('k', ownHosts)}`, sql`${clickhouseSourceOf(raw('k'), sources)} = 'ai_assistant'`);
  const paths = sql`path IN ${inList(views.all)}`;
  const fromAi = sql`kind = ${KEY_KIND.host} AND k IN ${aiHosts} AND ${paths}`;
  const fromAiRows = sql`SELECT path, visitor, date FROM ${db.db}.seen_path_keys WHERE ${scope} AND ${fromAi} AND ${HAS_BIT('mask', HUMAN_BIT)}
    ${fold.unfolded ? sql`UNION ALL SELECT path, visitor, date FROM (${pathKeyRows(db.db, sql`ins > ${fold.foldedUpTo} AND ${scope}`)}) WHERE ${fromAi} AND cls = ${HUMAN_BIT}` : raw('')}`;
  const w = sql`SELECT path, visitor, ${side}, views_h AS vh, views_a AS va, toUInt8(0) AS fa FROM ${db.db}.daily WHERE ${scope} AND ${paths}
    UNION ALL SELECT path, visitor, ${side}, toUInt64(0), toUInt64(0), toUInt8(1) FROM (${fromAiRows})`;
  return chPerPageAndTotal(db, w, views, CLICKHOUSE_COUNTS);
}

/** ClickHouse: not-found visitors on the old addresses (`not_found` is keyed by date and path). */
function clickhouseNotFound(db: ClickHouseReads, { scope, side }: ChWindows, nf: ReturnType<typeof pairs>): Promise<Record<string, unknown>[]> {
  const w = sql`SELECT visitor, path, ${side} FROM ${db.db}.not_found WHERE ${scope} AND cls <= ${LAST_VISITOR_CODE} AND path IN ${inList(nf.all)}`;
  return chPerPageAndTotal(db, w, nf, raw('uniqExact(visitor) AS not_found'));
}
