// The referrers report on DuckDB: page views' referring hosts from the raw events, classed by the
// source list (referrer-sources.ts, as a CASE of host literals: plain names, safe as SQL text), with
// exact distinct visitors per host and per class, and per day the humans sent by AI answers.
import type { Range } from '../../dates.ts';
import { REFERRER_HOST_PATTERN, referrersReport, type Page, type ReferrersReport } from '../../engine.ts';
import { sourceRules } from '../../referrer-sources.ts';
import type { OwnHosts } from '../../own-hosts.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { int, rows as rowsOf, type Dictionaries, type Pool } from './state.ts';

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

/** The class of `host` (a SQL expression) by the source list. */
function sourceOf(host: string): string {
  const cases = sourceRules().map((r) => `WHEN ${host} = ${quote(r.host)} OR ${host} LIKE ${quote(`%.${r.host}`)} THEN ${quote(r.category)}`);
  return cases.length ? `CASE ${cases.join(' ')} ELSE 'other' END` : `'other'`;
}

const COUNTS = `count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS human, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai, count(DISTINCT visitor) AS total`;

export async function queryReferrers(readers: Pool, dict: Dictionaries, projectId: string, range: Range, page: Page, own: OwnHosts): Promise<ReferrersReport> {
  const pk = dict.projectKeys.get(projectId);
  if (pk === undefined) return referrersReport([], [], [], page);
  const conds = [`project_key = ${int(pk)}`, `cls <= ${LAST_VISITOR_CODE}`];
  if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
  if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
  // Stored referrers are hosts; rows written before that kept the whole URL, read for its host here.
  const stored = `CASE WHEN referrer LIKE '%://%' THEN nullif(lower(regexp_extract(referrer, ${quote(REFERRER_HOST_PATTERN)}, 1)), '') ELSE referrer END`;
  // The project's own hosts are no referrers (own-hosts.ts isOwnHost): such a view reads as having none
  // (not left out: its reader still counts among the day's humans).
  const host = own.size === 0 ? stored : `CASE WHEN (${stored}) NOT IN (${[...own].map(quote).join(', ')}) THEN ${stored} END`;
  const base = `WITH hosts AS (SELECT ts, visitor, cls, ${host} AS host FROM events WHERE ${conds.join(' AND ')}),
    sourced AS (SELECT ts, visitor, cls, host, ${sourceOf('host')} AS source FROM hosts)`;
  const referred = `${base}, referred AS (SELECT * FROM sourced WHERE host IS NOT NULL)`;
  return readers.use(async (c) => {
    const classes = await rowsOf(c, `${referred} SELECT source, ${COUNTS} FROM referred GROUP BY source`);
    const pageRows = await rowsOf(c, `${referred} SELECT host, any_value(source) AS source, ${COUNTS} FROM referred GROUP BY host
      ORDER BY total DESC, host LIMIT ${int(page.limit + 1)} OFFSET ${int(page.offset)}`);
    const days = await rowsOf(c, `${base} SELECT ts // 86400000 AS day, count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS humans,
      count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT} AND source = 'ai_assistant') AS from_ai FROM sourced GROUP BY day ORDER BY day`);
    return referrersReport(classes, pageRows, days, page);
  });
}
