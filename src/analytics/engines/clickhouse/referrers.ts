// The referrers report on ClickHouse: page views' referring hosts from the raw events, classed by
// the source list (referrer-sources.ts), with exact distinct visitors per host and per class, and per
// day the humans sent by AI answers. For ClickHouse 18.16 and current releases alike.
import { REFERRER_HOST_PATTERN, referrersReport, type Page, type ReferrersReport } from '../../engine.ts';
import { sourceRules } from '../../referrer-sources.ts';
import type { OwnHosts } from '../../own-hosts.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { ClickHouseConnection } from './connection.ts';
import { inList, join, raw, sql, type Sql } from './sql.ts';

/** The class of `host` by the source list. */
function sourceOf(host: Sql): Sql {
  const rules = sourceRules();
  if (rules.length === 0) return raw(`'other'`);
  const arms = rules.flatMap((r) => [sql`(${host} = ${r.host} OR like(${host}, ${`%.${r.host}`}))`, sql`${r.category}`]);
  return sql`multiIf(${join(arms)}, 'other')`;
}

const COUNTS = raw(`uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS human, uniqExactIf(visitor, cls = ${AI_BIT}) AS ai, uniqExact(visitor) AS total`);

/** `where`: the project and the time range. */
export async function queryReferrers(c: ClickHouseConnection, db: Sql, where: Sql, page: Page, own: OwnHosts): Promise<ReferrersReport> {
  // Stored referrers are hosts; rows written before that kept the whole URL, read for its host here.
  const stored = sql`if(like(ifNull(referrer, ''), '%://%'), lower(extract(ifNull(referrer, ''), ${REFERRER_HOST_PATTERN})), ifNull(referrer, ''))`;
  // The project's own hosts are no referrers (own-hosts.ts isOwnHost): such a view reads as having none
  // (not left out: its reader still counts among the day's humans).
  const host = own.size === 0 ? stored : sql`if(${stored} IN ${inList([...own])}, '', ${stored})`;
  const sourced = sql`SELECT ts, visitor, cls, host, ${sourceOf(raw('host'))} AS source
    FROM (SELECT ts, visitor, cls, ${host} AS host FROM ${db}.events WHERE ${where} AND cls <= ${LAST_VISITOR_CODE})`;
  const classes = await c.rows(sql`SELECT source, ${COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY source`);
  const pageRows = await c.rows(sql`SELECT host, any(source) AS source, ${COUNTS} FROM (${sourced}) WHERE host != '' GROUP BY host
    ORDER BY total DESC, host ASC LIMIT ${page.offset}, ${page.limit + 1}`);
  const days = await c.rows(sql`SELECT intDiv(ts, 86400000) AS day, uniqExactIf(visitor, cls = ${HUMAN_BIT}) AS humans,
    uniqExactIf(visitor, cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai FROM (${sourced}) GROUP BY day ORDER BY day`);
  return referrersReport(classes, pageRows, days, page);
}
