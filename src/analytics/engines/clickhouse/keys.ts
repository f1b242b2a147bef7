// The rows the referrers and AI-companies reports count over on ClickHouse, as DuckDB's daily_keys
// and daily_agents: key rows per referring host (views of humans and AI with a referrer) and per
// assistant agent (AI views), with the view's class and path, folded into `seen_keys` and per path
// into `seen_path_keys` (fold.ts); and views per (day, agent, class) of assistants and crawlers, and
// the same per path (v8, for the one per-path report: days stored before it read the events). Keys
// are stored raw (own hosts included): classes, companies and own hosts apply at query time, so a
// changed list applies to stored rows.
import { REFERRER_HOST_PATTERN } from '../../engine.ts';
import { AGENT_VIEW_CLASSES, CLASS_CODE, KEY_KIND, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { raw, sql, type Sql } from './sql.ts';

/** A view's referring host as stored ('' for none): the host of an old row holding a whole URL, else the column. */
export const STORED_HOST = sql`if(like(ifNull(referrer, ''), '%://%'), lower(extract(ifNull(referrer, ''), ${REFERRER_HOST_PATTERN})), ifNull(referrer, ''))`;

/** The key columns of `seen_keys` (after project). */
export const KEY_COLUMNS = ['kind', 'k', 'visitor'];

/** The key columns of `seen_path_keys` (after project). */
export const PATH_KEY_COLUMNS = ['kind', 'k', 'path', 'visitor'];

/** How key rows carry the path: none (migration 5's views), as stored, or as `pending_keys` holds it (Nullable: 18.16's views do not convert). */
export const KEY_PATH = { none: raw(''), column: raw('path, '), pending: raw('toNullable(path) AS path, ') } as const;

/** The events matching `cond` as key rows of one kind (project, date, kind, k, [path,] visitor, cls, ins): a materialized view reads one SELECT. */
export function keyRows(db: Sql, kind: keyof typeof KEY_KIND, cond: Sql = raw('1'), path: Sql = KEY_PATH.column): Sql {
  const code = raw(String(KEY_KIND[kind]));
  return kind === 'host'
    ? sql`SELECT project, date, toUInt8(${code}) AS kind, ${STORED_HOST} AS k, ${path}visitor, cls, ins FROM ${db}.events
        WHERE cls <= ${LAST_VISITOR_CODE} AND ${STORED_HOST} != '' AND ${cond}`
    : sql`SELECT project, date, toUInt8(${code}) AS kind, ifNull(agent, '') AS k, ${path}visitor, cls, ins FROM ${db}.events
        WHERE cls = ${CLASS_CODE.ai} AND ifNull(agent, '') != '' AND ${cond}`;
}

/**
 * The unfolded key rows of `pending_keys` matching `cond` that carry a path (the rows migration 5's
 * views wrote have none; migration 6 folded their events from `events`), path as a String. (The inner alias `p`: 18.16's
 * WHERE would read an alias `path` instead of the column.)
 */
export const pathKeyRows = (db: Sql, cond: Sql): Sql =>
  sql`SELECT project, date, kind, k, assumeNotNull(p) AS path, visitor, cls, ins FROM (
      SELECT project, date, kind, k, path AS p, visitor, cls, ins FROM ${db}.pending_keys WHERE path IS NOT NULL AND ${cond})`;

/**
 * Views of the events matching `cond` per (project, date, agent, class) of assistants and crawlers,
 * as `daily_agents` rows; `perPath`: per (project, date, agent, path, class), as `agent_path_views`
 * rows. (`agent` is both the alias and the column: on 18.16 the WHERE reads the alias, so the
 * condition is written to mean the same either way.)
 */
export const agentViewRows = (db: Sql, cond: Sql = raw('1'), perPath = false): Sql => {
  const path = raw(perPath ? 'path, ' : '');
  return sql`SELECT project, date, ifNull(agent, '') AS agent, ${path}cls, toUInt64(count()) AS views FROM ${db}.events
    WHERE cls IN (${raw(AGENT_VIEW_CLASSES)}) AND agent != '' AND ${cond} GROUP BY project, date, agent, ${path}cls`;
};
