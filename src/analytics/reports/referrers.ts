// Where readers come from: page views' referring hosts from the raw events, classed by the source
// list (referrer-sources.ts), with exact distinct visitors per host and per class, and per UTC day
// the humans sent by AI answers. The ClickHouse SQL is for 18.16 and current releases alike.
import { PagedQuery, ReferrersResponse } from '../../contracts/analytics.ts';
import { REFERRER_HOST_PATTERN } from '../engine.ts';
import { SOURCE_CLASSES, type SourceClass, type SourceRule } from '../referrer-sources.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../traffic-class.ts';
import { tsCond, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { int, num, rows as rowsOf } from '../engines/duckdb/state.ts';
import { tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
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
function duckdbSourceOf(host: string, sources: readonly SourceRule[]): string {
  const cases = sources.map((r) => `WHEN ${host} = ${quote(r.host)} OR ${host} LIKE ${quote(`%.${r.host}`)} THEN ${quote(r.category)}`);
  return cases.length ? `CASE ${cases.join(' ')} ELSE 'other' END` : `'other'`;
}

const DUCKDB_COUNTS = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS human, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai, count(DISTINCT visitor) AS total`;

// The project's own hosts are no referrers (own-hosts.ts isOwnHost): such a view reads as having none
// (not left out: its reader still counts among the day's humans), rows stored before the rule included.
// DuckDB: the referring host of a view (NULL for none); the AI-companies report reads it too.
export function duckdbHost(own: OwnHosts): string {
  // Stored referrers are hosts; rows written before that kept the whole URL, read for its host here.
  const stored = `CASE WHEN referrer LIKE '%://%' THEN nullif(lower(regexp_extract(referrer, ${quote(REFERRER_HOST_PATTERN)}, 1)), '') ELSE referrer END`;
  return own.size === 0 ? stored : `CASE WHEN (${stored}) NOT IN (${[...own].map(quote).join(', ')}) THEN ${stored} END`;
}

/** ClickHouse: the referring host of a view as duckdbHost reads it ('' for none). */
export function clickhouseHost(own: OwnHosts): Sql {
  const stored = sql`if(like(ifNull(referrer, ''), '%://%'), lower(extract(ifNull(referrer, ''), ${REFERRER_HOST_PATTERN})), ifNull(referrer, ''))`;
  return own.size === 0 ? stored : sql`if(${stored} IN ${inList([...own])}, '', ${stored})`;
}

async function duckdb(db: DuckDbReads, { projectId, range, ownHosts = NO_OWN_HOSTS, rules, ...page }: ReportParams<typeof PagedQuery>): Promise<ReferrersReport> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return referrersReport([], [], [], page);
  const host = duckdbHost(ownHosts);
  const base = `WITH hosts AS (SELECT ts, visitor, cls, ${host} AS host FROM events WHERE ${duckdbWhere(pk, range)}),
    sourced AS (SELECT ts, visitor, cls, host, ${duckdbSourceOf('host', rulesOf(rules).sources)} AS source FROM hosts)`;
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

/** ClickHouse: the class of `host` by the source list. */
function clickhouseSourceOf(host: Sql, rules: readonly SourceRule[]): Sql {
  if (rules.length === 0) return raw(`'other'`);
  const arms = rules.flatMap((r) => [sql`(${host} = ${r.host} OR like(${host}, ${`%.${r.host}`}))`, sql`${r.category}`]);
  return sql`multiIf(${join(arms)}, 'other')`;
}

const CLICKHOUSE_COUNTS = raw(`uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS human, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, uniqExact(visitor) AS total`);

async function clickhouse(db: ClickHouseReads, { projectId, range, ownHosts = NO_OWN_HOSTS, rules, ...page }: ReportParams<typeof PagedQuery>): Promise<ReferrersReport> {
  const host = clickhouseHost(ownHosts);
  const sourced = sql`SELECT ts, visitor, cls, host, ${clickhouseSourceOf(raw('host'), rulesOf(rules).sources)} AS source
    FROM (SELECT ts, visitor, cls, ${host} AS host FROM ${db.db}.events WHERE ${clickhouseWhere(projectId, range)})`;
  const classes = await db.rows(sql`SELECT source, ${CLICKHOUSE_COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY source`);
  const pageRows = await db.rows(sql`SELECT host, any(source) AS source, ${CLICKHOUSE_COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY host
    ORDER BY total DESC, host ASC LIMIT ${page.offset}, ${page.limit + 1}`);
  const days = await db.rows(sql`SELECT intDiv(ts, 86400000) AS day, uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS humans,
    uniqExactIf(visitor, cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai FROM (${sourced}) GROUP BY day ORDER BY day`);
  return referrersReport(classes, pageRows, days, page);
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
