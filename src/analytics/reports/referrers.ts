// Where readers come from: page views' referring hosts, classed by the source list
// (referrer-sources.ts), with exact distinct visitors per host and per class, and per UTC day the
// humans sent by AI answers. Whole-day ranges count over the first-seen rows per (host, visitor)
// (DuckDB `daily_keys`, ClickHouse `seen_keys`) and per visitor (`daily_site`, `seen_site`), plus
// the rows not compacted or folded yet, classing the few hosts at query time; a range with a bound
// inside a day reads the raw events. The ClickHouse SQL is for 18.16 and current releases alike.
import { PagedQuery, ReferrersResponse } from '../../contracts/analytics.ts';
import { SOURCE_CLASSES, type SourceClass, type SourceRule } from '../referrer-sources.ts';
import { AI_BIT, HUMAN_BIT, KEY_KIND, LAST_VISITOR_CODE } from '../traffic-class.ts';
import { dayCond, HAS_AI, HAS_HUMAN, tsCond, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { ALL_PATH_HOSTS, int, KEY_ROWS, NEW_ROWS, num, rows as rowsOf, STORED_HOST, UNCOMPACTED, type PathHosts } from '../engines/duckdb/state.ts';
import { splitRange } from '../dates.ts';
import { firstIn, keysOf, newKeyCtes } from './first-seen.ts';
import { dayCond as chDayCond, HAS_BIT, tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { STORED_HOST as CH_STORED_HOST } from '../engines/clickhouse/keys.ts';
import { firstCounts, firstDay, foldState, newKeyCounts } from './first-seen-clickhouse.ts';
import { inList, join, raw, sql, type Sql } from '../engines/clickhouse/sql.ts';
import { NO_OWN_HOSTS, type OwnHosts } from '../own-hosts.ts';
import type { Range } from '../dates.ts';
import type { Counts, Page } from './path-page.ts';
import { iso, rulesOf, type Report, type ReportParams } from './report.ts';

/** Referring hosts by class and by host, with exact visitors, and the share of humans sent by AI answers per day. */
export interface ReferrersReport {
  /** Distinct visitors per class of source (`other`: hosts on no list; readers with no referrer are left out). */
  classes: (Counts & { source: SourceClass })[];
  rows: (Counts & { host: string; source: SourceClass })[];
  hasMore: boolean;
  /** Per UTC day: distinct human visitors, and those of them who came from an AI assistant's answer. */
  aiShare: { start: number; humans: number; fromAiAssistant: number }[];
}

export const referrers: Report<typeof PagedQuery, typeof ReferrersResponse, ReferrersReport> = {
  name: 'referrers',
  summary: 'Where readers come from',
  description:
    "Referring hosts of page views with exact distinct visitors (human, AI, total), each classed ai_assistant, search, social or other by the source list (extendable with FOLIO_AGENTS_FILE), the same per class, and per UTC day the human visitors and how many of them arrived from an AI answer. Only the referrer's host is stored.",
  query: PagedQuery,
  response: ReferrersResponse,
  duckdb,
  clickhouse,
  wire: (r) => ({ classes: r.classes, referrers: r.rows, hasMore: r.hasMore, aiShare: r.aiShare.map((d) => ({ ...d, start: iso(d.start) })) }),
};

// The events the report reads, on each engine: the project's views by visitors (humans and AI) in the range.
const duckdbWhere = (pk: number, range: Range) => [`project_key = ${int(pk)}`, `cls <= ${LAST_VISITOR_CODE}`, ...tsCond(range)].join(' AND ');
const clickhouseWhere = (projectId: string, range: Range) => sql`project = ${projectId} AND ${chTsCond(range.from, range.to)} AND cls <= ${LAST_VISITOR_CODE}`;

/** A DuckDB string literal. */
export const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** DuckDB: the class of `host` (a SQL expression) by the source list, as a CASE of host literals (plain names, safe as SQL text). */
export function duckdbSourceOf(host: string, sources: readonly SourceRule[]): string {
  const cases = sources.map((r) => `WHEN ${host} = ${quote(r.host)} OR ${host} LIKE ${quote(`%.${r.host}`)} THEN ${quote(r.category)}`);
  return cases.length ? `CASE ${cases.join(' ')} ELSE 'other' END` : `'other'`;
}

/**
 * DuckDB: the referring hosts whose rows per path are kept for these lists: the AI assistants' (the
 * only hosts a report reads per path). The analytics service opens the engine with it (state.ts).
 */
export function duckdbPathHosts(sources: readonly SourceRule[]): PathHosts {
  return {
    key: JSON.stringify({ ai_assistant: sources.map((r) => [r.host, r.category]) }),
    kept: (hostRows) => `SELECT k FROM (${keysOf(hostRows)}) WHERE ${duckdbSourceOf('k', sources)} = 'ai_assistant'`,
  };
}

/** Throws unless the store keeps the rows per path of every host these lists class as an AI assistant. */
export function needPathHosts(db: DuckDbReads, sources: readonly SourceRule[]): void {
  const kept = db.pathHosts.key;
  if (kept === ALL_PATH_HOSTS.key || kept === duckdbPathHosts(sources).key) return;
  throw new Error('This DuckDB store keeps referring hosts per path for other lists than the ones this report was asked with: open the engine with the same rules (duckdbPathHosts).');
}

const DUCKDB_COUNTS = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS human, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai, count(DISTINCT visitor) AS total`;

// The project's own hosts are no referrers (own-hosts.ts isOwnHost): such a view reads as having none
// (not left out: its reader still counts among the day's humans), rows stored before the rule included.
// DuckDB: the referring host of a view (NULL for none); the AI-companies report reads it too.
export function duckdbHost(own: OwnHosts): string {
  return own.size === 0 ? STORED_HOST : `CASE WHEN (${STORED_HOST}) NOT IN (${[...own].map(quote).join(', ')}) THEN ${STORED_HOST} END`;
}

/** DuckDB: the condition on a stored host column that leaves out the project's own hosts. */
export const duckdbNotOwn = (col: string, own: OwnHosts) => (own.size === 0 ? 'true' : `${col} NOT IN (${[...own].map(quote).join(', ')})`);

/** ClickHouse: the referring host of a view as duckdbHost reads it ('' for none). */
export function clickhouseHost(own: OwnHosts): Sql {
  return own.size === 0 ? CH_STORED_HOST : sql`if(${CH_STORED_HOST} IN ${inList([...own])}, '', ${CH_STORED_HOST})`;
}

/** ClickHouse: the condition on a stored host column that leaves out the project's own hosts. */
export const clickhouseNotOwn = (col: string, own: OwnHosts): Sql => (own.size === 0 ? raw('1') : sql`${raw(col)} NOT IN ${inList([...own])}`);

async function duckdb(db: DuckDbReads, { projectId, range, ownHosts = NO_OWN_HOSTS, rules, ...page }: ReportParams<typeof PagedQuery>): Promise<ReferrersReport> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return referrersReport([], [], [], page);
  const sources = rulesOf(rules).sources;
  const split = splitRange(range);
  if (split.edges.length === 0 && split.days !== 'none') return duckdbFirstSeen(db, pk, split.days, ownHosts, sources, page);
  return duckdbFromEvents(db, pk, range, ownHosts, sources, page);
}

/** DuckDB, any range: COUNT(DISTINCT) over the raw events (a range with a bound inside a day; the benchmark's naive query). */
export async function duckdbFromEvents(db: DuckDbReads, pk: number, range: Range, ownHosts: OwnHosts, sources: readonly SourceRule[], page: Page): Promise<ReferrersReport> {
  const host = duckdbHost(ownHosts);
  const base = `WITH hosts AS (SELECT ts, visitor, cls, ${host} AS host FROM events WHERE ${duckdbWhere(pk, range)}),
    sourced AS (SELECT ts, visitor, cls, host, ${duckdbSourceOf('host', sources)} AS source FROM hosts)`;
  const referred = `${base}, referred AS (SELECT * FROM sourced WHERE host IS NOT NULL)`;
  return db.readers.use(async (c) => {
    const classes = await rowsOf(c, `${referred} SELECT source, ${DUCKDB_COUNTS} FROM referred GROUP BY source`);
    const pageRows = await rowsOf(c, `${referred} SELECT host, any_value(source) AS source, ${DUCKDB_COUNTS} FROM referred GROUP BY host
      ORDER BY total DESC, host LIMIT ${int(page.limit + 1)} OFFSET ${int(page.offset)}`);
    const days = await rowsOf(c, `${base} SELECT ts // 86400000 AS day, count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS humans,
      count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai FROM sourced GROUP BY day ORDER BY day`);
    return referrersReport(classes, pageRows, days, page);
  });
}

/**
 * DuckDB, whole days [d1, d2): per host, the filtered counts of the first-seen rows (daily_keys,
 * kind host); per class, the keys' first rows in range grouped per visitor with a bit pair per
 * class, so a visitor sent by two hosts of one class counts once; per day, the humans of daily_site (each
 * visitor's first human row of the day) and the distinct humans among the ai_assistant hosts' rows. Rows not compacted yet are
 * added: per host and per day as keys the compacted rows lack, in the distinct counts as they are.
 */
async function duckdbFirstSeen(
  db: DuckDbReads,
  pk: number,
  days: { d1: number | null; d2: number | null },
  own: OwnHosts,
  sources: readonly SourceRule[],
  page: Page,
): Promise<ReferrersReport> {
  const p = `project_key = ${int(pk)}`;
  const dc = dayCond(days);
  const first = firstIn(days.d1);
  const pending = (db.pending.byProject.get(pk) ?? 0) > 0;
  const hostRows = `${p} AND kind = ${KEY_KIND.host} AND ${dc} AND ${duckdbNotOwn('k', own)}`;
  const fresh = `SELECT k, visitor, mask, day FROM (${KEY_ROWS(UNCOMPACTED)}) WHERE ${hostRows}`;
  // Each key's first rows in range (per bit), with the bits they count: one row per (host, visitor) has t.
  const bits = `(CASE WHEN ${HAS_HUMAN('mask')} AND ${first('prev_h')} THEN ${HUMAN_BIT} ELSE 0 END) | (CASE WHEN ${HAS_AI('mask')} AND ${first('prev_a')} THEN ${AI_BIT} ELSE 0 END)`;
  const counted = `SELECT k, count(*) FILTER (WHERE ${HAS_HUMAN('mask')}) AS human, count(*) FILTER (WHERE ${HAS_AI('mask')}) AS ai, count(*) FILTER (WHERE t) AS total FROM r GROUP BY k`;
  const perHost = pending
    ? `${newKeyCtes({ scope: 'host_', fresh, compacted: `SELECT k, visitor, mask FROM daily_keys WHERE ${hostRows}`, key: ['k', 'visitor'], group: ['k'] })},
      per_host AS (SELECT k, sum(human)::BIGINT AS human, sum(ai)::BIGINT AS ai, sum(total)::BIGINT AS total
                   FROM (${counted} UNION ALL SELECT * FROM new_host_counts) GROUP BY k HAVING sum(total) > 0)`
    : `per_host AS (${counted})`;
  // Per class, the distinct (class, visitor) pairs: grouped per visitor alone (an integer: faster than
  // grouping by class and visitor), its bits per class side by side (2 per class: human, AI).
  const classIndex = (source: string) => `CASE ${source} ${SOURCE_CLASSES.map((c, i) => `WHEN ${quote(c)} THEN ${i}`).join(' ')} END`;
  const classCounts = SOURCE_CLASSES.map((_c, i) => {
    const bit = (b: number) => `m & ${b << (2 * i)} <> 0`;
    return `count(*) FILTER (WHERE ${bit(HUMAN_BIT)}) AS h${i}, count(*) FILTER (WHERE ${bit(AI_BIT)}) AS a${i}, count(*) FILTER (WHERE ${bit(HUMAN_BIT | AI_BIT)}) AS t${i}`;
  }).join(', ');
  const pairs = `SELECT k, visitor, mask FROM r${pending ? ` UNION ALL SELECT k, visitor, mask FROM (${fresh})` : ''}`;
  // Hosts and classes in one statement over the first rows (part 0: the page of hosts in order; part 1: the classes).
  const hostsAndClasses = `WITH r AS MATERIALIZED (SELECT k, visitor, ${bits} AS mask, ${first('prev_t')} AS t FROM daily_keys
          WHERE ${hostRows} AND (${first('prev_t')} OR ${first('prev_h')} OR ${first('prev_a')})),
      ${perHost},
      hs AS MATERIALIZED (SELECT k, ${duckdbSourceOf('k', sources)} AS source FROM (SELECT k FROM per_host GROUP BY k)),
      paged AS (SELECT k AS host, source, human, ai, total, row_number() OVER (ORDER BY total DESC, k) AS pos FROM per_host JOIN hs USING (k)
                ORDER BY total DESC, host LIMIT ${int(page.limit + 1)} OFFSET ${int(page.offset)}),
      per_visitor AS (SELECT p.visitor, bit_or(p.mask::INTEGER << (2 * ${classIndex('hs.source')})) AS m FROM (${pairs}) p JOIN hs USING (k) GROUP BY p.visitor),
      per_class AS (SELECT ${classCounts} FROM per_visitor)
    SELECT 0 AS part, pos, host, source, human, ai, total FROM paged
    UNION ALL ${SOURCE_CLASSES.map((c, i) => `SELECT 1, 0, NULL, ${quote(c)}, h${i}, a${i}, t${i} FROM per_class`).join(' UNION ALL ')}
    ORDER BY part, pos`;
  const siteFresh = `SELECT day, visitor, mask FROM (${NEW_ROWS}) WHERE ${p} AND ${dc}`;
  // A visitor's first human row of each day: a key has a second row on a day whose views were
  // compacted twice (the fold appends it, linked to the first), so rows alone would count it twice.
  const dayHumans = `SELECT day, count(*) FILTER (WHERE ${HAS_HUMAN('mask')} AND (prev_h IS NULL OR prev_h < day)) AS humans FROM daily_site WHERE ${p} AND ${dc} GROUP BY day`;
  const humans = pending
    ? `WITH ${newKeyCtes({ scope: 'site_', fresh: siteFresh, compacted: `SELECT day, visitor, mask FROM daily_site WHERE ${p} AND ${dc}`, key: ['day', 'visitor'], group: ['day'] })}
       SELECT day, sum(humans)::BIGINT AS humans FROM (${dayHumans} UNION ALL SELECT day, human FROM new_site_counts) GROUP BY day`
    : dayHumans;
  const humanRows = `SELECT day, k, visitor FROM daily_keys WHERE ${hostRows} AND ${HAS_HUMAN('mask')}
    ${pending ? `UNION ALL SELECT day, k, visitor FROM (${fresh}) WHERE ${HAS_HUMAN('mask')}` : ''}`;
  const fromAi = `WITH r AS (${humanRows}), hs AS MATERIALIZED (SELECT k, ${duckdbSourceOf('k', sources)} AS source FROM (${keysOf('r')}))
    SELECT day, count(*) AS from_ai FROM (SELECT r.day, r.visitor FROM r JOIN hs USING (k) WHERE hs.source = 'ai_assistant' GROUP BY ALL) GROUP BY day`;
  // The two statements on two reader connections at once.
  const [rows, dayRows] = await Promise.all([
    db.rows(hostsAndClasses),
    db.rows(`WITH h AS (${humans}), a AS (${fromAi}) SELECT h.day, h.humans, coalesce(a.from_ai, 0) AS from_ai FROM h LEFT JOIN a USING (day) ORDER BY h.day`),
  ]);
  return referrersReport(
    rows.filter((r) => num(r.part) === 1),
    rows.filter((r) => num(r.part) === 0),
    dayRows,
    page,
  );
}

/** ClickHouse: the class of `host` by the source list. */
export function clickhouseSourceOf(host: Sql, rules: readonly SourceRule[]): Sql {
  if (rules.length === 0) return raw(`'other'`);
  const arms = rules.flatMap((r) => [sql`(${host} = ${r.host} OR like(${host}, ${`%.${r.host}`}))`, sql`${r.category}`]);
  return sql`multiIf(${join(arms)}, 'other')`;
}

const CLICKHOUSE_COUNTS = raw(`uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS human, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, uniqExact(visitor) AS total`);

async function clickhouse(db: ClickHouseReads, { projectId, range, ownHosts = NO_OWN_HOSTS, rules, ...page }: ReportParams<typeof PagedQuery>): Promise<ReferrersReport> {
  const sources = rulesOf(rules).sources;
  const split = splitRange(range);
  if (split.edges.length === 0 && split.days !== 'none') return clickhouseFirstSeen(db, projectId, split.days, ownHosts, sources, page);
  return clickhouseFromEvents(db, projectId, range, ownHosts, sources, page);
}

/** ClickHouse, any range: uniqExact over the raw events (a range with a bound inside a day; the benchmark's naive query). */
export async function clickhouseFromEvents(db: ClickHouseReads, projectId: string, range: Range, ownHosts: OwnHosts, sources: readonly SourceRule[], page: Page): Promise<ReferrersReport> {
  const host = clickhouseHost(ownHosts);
  const sourced = sql`SELECT ts, visitor, cls, host, ${clickhouseSourceOf(raw('host'), sources)} AS source
    FROM (SELECT ts, visitor, cls, ${host} AS host FROM ${db.db}.events WHERE ${clickhouseWhere(projectId, range)})`;
  const classes = await db.rows(sql`SELECT source, ${CLICKHOUSE_COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY source`);
  const pageRows = await db.rows(sql`SELECT host, any(source) AS source, ${CLICKHOUSE_COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY host
    ORDER BY total DESC, host ASC LIMIT ${page.offset}, ${page.limit + 1}`);
  const days = await db.rows(sql`SELECT intDiv(ts, 86400000) AS day, uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS humans,
    uniqExactIf(visitor, cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai FROM (${sourced}) GROUP BY day ORDER BY day`);
  return referrersReport(classes, pageRows, days, page);
}

/**
 * ClickHouse, whole days [d1, d2): per host, the filtered counts of the first-seen rows (seen_keys,
 * kind host); per class, each (host, visitor) key's bits counted in range, grouped by host first so
 * the few hosts are classed once, then distinct per (class, visitor); per day, the humans of
 * seen_site (one live row per day and visitor) and the distinct humans among the ai_assistant hosts'
 * human rows. Rows not folded yet are added: per host and per day as keys the folded rows lack, in the
 * distinct counts as they are.
 */
async function clickhouseFirstSeen(
  db: ClickHouseReads,
  projectId: string,
  { d1, d2 }: { d1: number | null; d2: number | null },
  own: OwnHosts,
  sources: readonly SourceRule[],
  page: Page,
): Promise<ReferrersReport> {
  const days = chDayCond(d1, d2);
  if (days.text === '0') return referrersReport([], [], [], page);
  const first = firstDay(d1);
  const scope = sql`project = ${projectId} AND ${days}`;
  const { foldedUpTo, unfolded } = await foldState(db, scope);
  const hostRows = sql`${scope} AND kind = ${KEY_KIND.host} AND ${clickhouseNotOwn('k', own)}`;
  const keys = sql`${db.db}.seen_keys`;
  const fresh = sql`SELECT date, k, visitor, cls FROM ${db.db}.pending_keys WHERE ins > ${foldedUpTo} AND ${hostRows}`;
  const [pageRows, classRows, dayRows] = await Promise.all([
    db.rows(hostPage(keys, hostRows, first, unfolded ? fresh : null, sources, page)),
    db.rows(classCounts(keys, hostRows, first, unfolded ? fresh : null, sources)),
    db.rows(dayCounts(db, scope, hostRows, foldedUpTo, unfolded ? fresh : null, sources)),
  ]);
  return referrersReport(classRows, pageRows, dayRows, page);
}

/** A bit beside the visitor bits in a key's counted bits: the key counts in `total`. */
const TOTAL_BIT = 4;

/** The page of hosts (one past it), by their keys' first rows in range (plus the unfolded keys the folded rows lack). */
function hostPage(keys: Sql, hostRows: Sql, first: Sql, fresh: Sql | null, sources: readonly SourceRule[], page: Page): Sql {
  const base = sql`SELECT k, ${firstCounts(first)} FROM ${keys} WHERE ${hostRows} GROUP BY k`;
  const perHost = fresh
    ? sql`SELECT k, sum(human) AS human, sum(ai) AS ai, sum(total) AS total FROM (${base} UNION ALL
        ${newKeyCounts({ fresh, table: keys, where: hostRows, key: ['k', 'visitor'], group: ['k'] })}) GROUP BY k`
    : base;
  const paged = sql`SELECT k AS host, human, ai, total FROM (${perHost}) WHERE total > 0 ORDER BY total DESC, host ASC LIMIT ${page.offset}, ${page.limit + 1}`;
  return sql`SELECT host, ${clickhouseSourceOf(raw('host'), sources)} AS source, human, ai, total FROM (${paged}) ORDER BY total DESC, host ASC`;
}

/**
 * Distinct visitors per class over each (host, visitor) key's first rows in range (per bit), grouped
 * by host first so the few hosts are classed once. Sign is not needed: distinct visitors, not rows.
 */
function classCounts(keys: Sql, hostRows: Sql, first: Sql, fresh: Sql | null, sources: readonly SourceRule[]): Sql {
  const bit = (b: number, cond: Sql) => sql`if(${cond}, ${raw(String(b))}, 0)`;
  const bits = sql`${bit(HUMAN_BIT, sql`${HAS_BIT('mask', HUMAN_BIT)} AND ph < ${first}`)} + ${bit(AI_BIT, sql`${HAS_BIT('mask', AI_BIT)} AND pa < ${first}`)} + ${bit(TOTAL_BIT, sql`pt < ${first}`)}`;
  const rows = sql`SELECT k, visitor, toUInt8(${bits}) AS bits FROM ${keys} WHERE ${hostRows} AND (ph < ${first} OR pa < ${first} OR pt < ${first})
    ${fresh ? sql`UNION ALL SELECT k, visitor, toUInt8(cls + ${raw(String(TOTAL_BIT))}) AS bits FROM (${fresh})` : raw('')}`;
  const byHost = sql`SELECT ${clickhouseSourceOf(raw('k'), sources)} AS source, vb FROM (SELECT k, groupArray((visitor, bits)) AS vb FROM (${rows}) GROUP BY k)`;
  const has = (b: number) => HAS_BIT('x.2', b);
  return sql`SELECT source, uniqExactIf(x.1, ${has(HUMAN_BIT)}) AS human, uniqExactIf(x.1, ${has(AI_BIT)}) AS ai, uniqExactIf(x.1, ${has(TOTAL_BIT)}) AS total
    FROM (${byHost}) ARRAY JOIN vb AS x GROUP BY source`;
}

/**
 * Per day: the distinct humans (seen_site, plus the unfolded visitors its rows lack) and the distinct
 * humans an ai_assistant host sent (human rows of those hosts, plus unfolded ones, distinct per day).
 */
function dayCounts(db: ClickHouseReads, scope: Sql, hostRows: Sql, foldedUpTo: number, fresh: Sql | null, sources: readonly SourceRule[]): Sql {
  const site = sql`${db.db}.seen_site`;
  const humans = sql`SELECT toUInt32(date) AS day, toInt64(sumIf(sign, ${HAS_BIT('mask', HUMAN_BIT)})) AS humans, toInt64(0) AS from_ai FROM ${site} WHERE ${scope} GROUP BY day`;
  const freshSite = sql`SELECT date, visitor, cls FROM ${db.db}.pending WHERE ins > ${foldedUpTo} AND ${scope}`;
  const newHumans = fresh
    ? sql`UNION ALL SELECT toUInt32(date) AS day, human AS humans, toInt64(0) AS from_ai FROM (${newKeyCounts({ fresh: freshSite, table: site, where: scope, key: ['date', 'visitor'], group: ['date'] })})`
    : raw('');
  const humanRows = sql`SELECT k, date, visitor FROM ${db.db}.seen_keys WHERE ${hostRows} AND ${HAS_BIT('mask', HUMAN_BIT)}
    ${fresh ? sql`UNION ALL SELECT k, date, visitor FROM (${fresh}) WHERE cls = ${HUMAN_BIT}` : raw('')}`;
  const aiHosts = sql`SELECT groupArray((date, visitor)) AS dv FROM (${humanRows}) GROUP BY k
    HAVING ${clickhouseSourceOf(raw('k'), sources)} = 'ai_assistant'`;
  const fromAi = sql`SELECT toUInt32(x.1) AS day, toInt64(0) AS humans, toInt64(uniqExact(x.2)) AS from_ai FROM (${aiHosts}) ARRAY JOIN dv AS x GROUP BY day`;
  return sql`SELECT day, sum(humans) AS humans, sum(from_ai) AS from_ai FROM (${humans} ${newHumans} UNION ALL ${fromAi}) GROUP BY day ORDER BY day`;
}

/** The report from either engine's three queries (the same columns; page rows in order, one past the page). */
function referrersReport(classRows: Record<string, unknown>[], pageRows: Record<string, unknown>[], dayRows: Record<string, unknown>[], page: Page): ReferrersReport {
  const counts = (r: Record<string, unknown>): Counts => ({ human: num(r.human), ai: num(r.ai), total: num(r.total) });
  const bySource = new Map(classRows.map((r) => [String(r.source), counts(r)]));
  return {
    classes: SOURCE_CLASSES.map((source) => ({ source, ...(bySource.get(source) ?? { human: 0, ai: 0, total: 0 }) })),
    rows: pageRows.slice(0, page.limit).map((r) => ({ host: String(r.host), source: String(r.source) as SourceClass, ...counts(r) })),
    hasMore: pageRows.length > page.limit,
    aiShare: dayRows.map((r) => ({ start: num(r.day) * 86_400_000, humans: num(r.humans), fromAiAssistant: num(r.from_ai) })),
  };
}
