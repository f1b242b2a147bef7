// DuckDB: what the reports that count over the first-seen layout share (visitors: daily/daily_site;
// referrers and AI companies: daily_keys; AI companies per path: daily_path_keys). A key's first row
// inside whole days [d1, d2) is the one whose previous day (per bit) is before d1, so exact distinct
// counts are filtered counts; the rows not compacted yet are added by newKeyCtes (a key counts when
// the compacted rows in range lack it), or as they are where the counts are distinct pairs anyway.
import { AI_BIT, HUMAN_BIT } from '../traffic-class.ts';
import { HAS_AI, HAS_HUMAN, LACKS } from '../engines/duckdb/reads.ts';
import { int } from '../engines/duckdb/state.ts';

/** The condition "this row is its key's first in a range starting at day d1" for a link column (prev_h, prev_a, prev_t). */
export function firstIn(d1: number | null): (col: string) => string {
  const d = d1 === null ? 'NULL' : int(d1);
  return (col) => `(${col} IS NULL OR ${col} < ${d})`;
}

/** Filtered counts (human, ai, total) of the keys whose first row in range is counted here. */
export function firstSeenCounts(d1: number | null): string {
  const first = firstIn(d1);
  return `count(*) FILTER (WHERE ${HAS_HUMAN('mask')} AND ${first('prev_h')}) AS human,
    count(*) FILTER (WHERE ${HAS_AI('mask')} AND ${first('prev_a')}) AS ai, count(*) FILTER (WHERE ${first('prev_t')}) AS total`;
}

/**
 * The distinct keys (k) of `rows` (a table, CTE or subquery), with `more` aggregates, to map to
 * classes or companies once each: any_value keeps DuckDB from pushing a filter on the mapping below
 * the grouping, where it would run on every row (as a filter on a grouped column would be).
 */
export const keysOf = (rows: string, more = '') => `SELECT any_value(k) AS k${more} FROM ${rows} GROUP BY k`;

export interface NewKeys {
  /** CTE names: `new_<scope>keys`, `compacted_<scope>masks`, `new_<scope>counts`. */
  scope: string;
  /** The rows not compacted yet, in range: the key columns and `mask`. */
  fresh: string;
  /** The compacted rows in range (the same key columns and `mask`). */
  compacted: string;
  key: string[];
  /** Key columns the counts are grouped by (none: one row). */
  group: string[];
}

/**
 * CTEs over the rows not compacted yet: `new_<scope>keys` (their keys and masks),
 * `compacted_<scope>masks` (the masks the compacted rows in range hold for those keys) and
 * `new_<scope>counts` (group columns, human, ai, total): the keys (and bits) the compacted rows lack.
 */
export function newKeyCtes({ scope, fresh, compacted, key, group }: NewKeys): string {
  const keys = `new_${scope}keys`;
  const known = `compacted_${scope}masks`;
  const on = (a: string, b: string) => key.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND ');
  const groupCols = group.map((c) => `n.${c}, `).join('');
  return `${keys} AS (SELECT ${key.join(', ')}, bit_or(mask) AS mask FROM (${fresh}) GROUP BY ALL),
        ${known} AS (SELECT ${key.map((c) => `d.${c}`).join(', ')}, bit_or(d.mask) AS mask FROM (${compacted}) d SEMI JOIN ${keys} ON ${on('d', keys)} GROUP BY ALL),
        new_${scope}counts AS (SELECT ${groupCols}count(*) FILTER (WHERE ${HAS_HUMAN('n.mask')} AND ${LACKS('k.mask', HUMAN_BIT)}) AS human,
                         count(*) FILTER (WHERE ${HAS_AI('n.mask')} AND ${LACKS('k.mask', AI_BIT)}) AS ai, count(*) FILTER (WHERE k.mask IS NULL) AS total
                  FROM ${keys} n LEFT JOIN ${known} k ON ${on('n', 'k')}${group.length ? ` GROUP BY ${group.map((c) => `n.${c}`).join(', ')}` : ''})`;
}
