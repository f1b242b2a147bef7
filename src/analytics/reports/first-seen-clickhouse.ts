// ClickHouse: what the reports that count over the first-seen layout share (visitors: seen/seen_site;
// referrers and AI companies: seen_keys, per path seen_path_keys). A key's first live row inside whole
// days [d1, d2) is the one whose previous day (per bit) is before d1; a row and its cancellation carry
// the same values, so summing `sign` over the rows a filter keeps counts live rows only, merged or not. Rows written since
// the last fold (`pending`, `pending_keys` with ins above the watermark) are added by newKeyCounts:
// a key counts for each bit the folded rows in range lack.
//
// Distinct counts over visitors (a class's, a company's) need no sign: a row a fold replaced always
// has a live version of the same key and day whose mask holds its bits (masks only grow), so the
// visitors of the rows a filter keeps, cancelled or not, are those of its live rows.
import { AI_BIT, HUMAN_BIT } from '../traffic-class.ts';
import { HAS_BIT, LACKS_BIT, num, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { inList, raw, sql, type Sql } from '../engines/clickhouse/sql.ts';

/** The day a range of whole days starts at, as the links are compared with (-1 is "never seen before"). */
export const firstDay = (d1: number | null): Sql => raw(String(Math.max(d1 ?? 0, 0)));

/** Filtered counts (human, ai, total) of the keys whose first row in range is counted here. */
export const firstCounts = (first: Sql): Sql =>
  sql`sumIf(sign, ${HAS_BIT('mask', HUMAN_BIT)} AND ph < ${first}) AS human, sumIf(sign, ${HAS_BIT('mask', AI_BIT)} AND pa < ${first}) AS ai,
    sumIf(sign, pt < ${first}) AS total`;

export interface FoldState {
  /** Events with ins ≤ this are folded. */
  foldedUpTo: number;
  /** Whether `pending` holds unfolded rows matching the scope (usually not: then the queries are plain filtered counts). */
  unfolded: boolean;
}

/** The watermark, and whether any unfolded visitor row matches `scope` (project and days); key rows are of the same inserts. */
export async function foldState(db: ClickHouseReads, scope: Sql): Promise<FoldState> {
  const state = await db.rows(sql`SELECT max(watermark) AS folded_up_to, (SELECT count() FROM ${db.db}.pending
      WHERE ins > (SELECT max(watermark) FROM ${db.db}.fold_state) AND ${scope}) AS unfolded_rows FROM ${db.db}.fold_state`);
  return { foldedUpTo: num(state[0]?.folded_up_to), unfolded: num(state[0]?.unfolded_rows) > 0 };
}

/** The live rows of `table` matching `where`, as their `cols` (one row per live row). */
export function liveRows(table: Sql, where: Sql, cols: readonly string[]): Sql {
  const group = [...new Set([...cols, 'date', 'mask', 'ph', 'pa', 'pt'])].join(', ');
  return sql`SELECT ${raw(cols.join(', '))} FROM ${table} WHERE ${where} GROUP BY ${raw(group)} HAVING sum(sign) > 0`;
}

export interface NewKeys {
  /** The unfolded rows in range: the key columns and `cls`. */
  fresh: Sql;
  /** The folded table and the condition of its rows in range. */
  table: Sql;
  where: Sql;
  key: readonly string[];
  /** Key columns the counts are grouped by (none: one row). */
  group: readonly string[];
}

/** Counts (group columns, human, ai, total) of the unfolded rows' keys and bits the folded rows in range lack. */
export function newKeyCounts({ fresh, table, where, key, group }: NewKeys): Sql {
  const k = raw(key.join(', '));
  const newKeys = sql`SELECT ${k}, toUInt8(groupBitOr(cls)) AS new_mask FROM (${fresh}) GROUP BY ${k}`;
  const foldedMasks = sql`SELECT ${k}, toUInt8(groupBitOr(mask)) AS folded_mask FROM (
      ${liveRows(table, sql`${where} AND (${k}) IN (SELECT ${k} FROM (${newKeys}))`, [...key, 'mask'])}) GROUP BY ${k}`;
  const cols = raw(group.map((c) => `${c}, `).join(''));
  const groupBy = group.length ? raw(`GROUP BY ${group.join(', ')}`) : raw('');
  return sql`SELECT ${cols}toInt64(countIf(${HAS_BIT('new_mask', HUMAN_BIT)} AND ${LACKS_BIT('folded_mask', HUMAN_BIT)})) AS human,
      toInt64(countIf(${HAS_BIT('new_mask', AI_BIT)} AND ${LACKS_BIT('folded_mask', AI_BIT)})) AS ai, toInt64(countIf(folded_mask = 0)) AS total
    FROM (${newKeys}) AS new_keys ANY LEFT JOIN (${foldedMasks}) AS folded_masks USING (${k}) ${groupBy}`;
}

/** The most hosts hostsMatching lists literally. */
const MAX_LISTED = 1000;

/**
 * The right side of `k IN …` for the referring hosts of `hostRows` (a condition on key rows: scope,
 * kind, own hosts left out) that `matches` (a condition on k): the range's hosts from day_keys (one
 * row per host and day, where seen_keys has one per visitor too; and the unfolded key rows) grouped,
 * so the few are matched once each, then listed. The key rows are ordered by (project, kind, k):
 * ClickHouse reads only the listed hosts' ranges, not so for a subquery (8 against 38 ms at 1M). Past
 * MAX_LISTED hosts (a flood of made-up subdomains), the subquery.
 */
export async function hostsMatching(db: ClickHouseReads, { foldedUpTo, unfolded }: FoldState, hostRows: Sql, matches: Sql): Promise<Sql> {
  const rangeHosts = sql`SELECT k FROM ${db.db}.day_keys WHERE ${hostRows} GROUP BY k
    ${unfolded ? sql`UNION ALL SELECT k FROM ${db.db}.pending_keys WHERE ins > ${foldedUpTo} AND ${hostRows}` : raw('')}`;
  const hosts = sql`SELECT k FROM (${rangeHosts}) WHERE ${matches}`;
  const found = (await db.rows(sql`${hosts} LIMIT ${MAX_LISTED + 1}`)).map((r) => String(r.k));
  return found.length > MAX_LISTED ? sql`(${hosts})` : inList(found);
}
