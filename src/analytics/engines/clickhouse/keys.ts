// The rows the referrers and AI-companies reports count over on ClickHouse, as DuckDB's daily_keys
// and daily_agents: key rows per referring host (views of humans and AI with a referrer) and per
// assistant agent (AI views), with the view's class, folded into `seen_keys` (fold.ts); and views per
// (day, agent, class) of assistants and crawlers (no path: a per-path summary costs every insert a
// quarter more for the one per-path report, which reads a company's own events instead). Keys are stored raw (own hosts included):
// classes, companies and own hosts apply at query time, so a changed list applies to stored rows.
import { REFERRER_HOST_PATTERN } from '../../engine.ts';
import { CLASS_CODE, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { AGENT_VIEW_CLASSES, KEY_KIND } from '../duckdb/state.ts';
import { raw, sql, type Sql } from './sql.ts';

export { KEY_KIND };

/** A view's referring host as stored ('' for none): the host of an old row holding a whole URL, else the column. */
export const STORED_HOST = sql`if(like(ifNull(referrer, ''), '%://%'), lower(extract(ifNull(referrer, ''), ${REFERRER_HOST_PATTERN})), ifNull(referrer, ''))`;

/** The key columns of `seen_keys` and `pending_keys` (after project). */
export const KEY_COLUMNS = ['kind', 'k', 'visitor'];

/** The events matching `cond` as key rows of one kind (project, date, kind, k, visitor, cls, ins): a materialized view reads one SELECT. */
export function keyRows(db: Sql, kind: keyof typeof KEY_KIND, cond: Sql = raw('1')): Sql {
  const code = raw(String(KEY_KIND[kind]));
  return kind === 'host'
    ? sql`SELECT project, date, toUInt8(${code}) AS kind, ${STORED_HOST} AS k, visitor, cls, ins FROM ${db}.events
        WHERE cls <= ${LAST_VISITOR_CODE} AND ${STORED_HOST} != '' AND ${cond}`
    : sql`SELECT project, date, toUInt8(${code}) AS kind, ifNull(agent, '') AS k, visitor, cls, ins FROM ${db}.events
        WHERE cls = ${CLASS_CODE.ai} AND ifNull(agent, '') != '' AND ${cond}`;
}

/**
 * Views of the events matching `cond` per (project, date, agent, class) of assistants and crawlers,
 * as `daily_agents` rows. (`agent` is both the alias and the column: on 18.16 the WHERE
 * reads the alias, so the condition is written to mean the same either way.)
 */
export const agentViewRows = (db: Sql, cond: Sql = raw('1')): Sql =>
  sql`SELECT project, date, ifNull(agent, '') AS agent, cls, toUInt64(count()) AS views FROM ${db}.events
    WHERE cls IN (${raw(AGENT_VIEW_CLASSES)}) AND agent != '' AND ${cond} GROUP BY project, date, agent, cls`;
