// The first-seen layout on ClickHouse, as in DuckDB: `seen` holds one live row per (project, day, path,
// visitor) with its mask (1 human, 2 AI) and, per bit, the previous day the key was seen (ph, pa, pt;
// -1 for none), so an exact distinct count over the days [d1, d2) is a filtered count of the rows in
// range whose previous day is before d1 — no hash set. `seen_site` is the same per (project, day,
// visitor) for site-wide totals, `seen_keys` per (project, kind, day, key, visitor) for the
// referrers and AI-companies reports (keys.ts: a referring host or an assistant agent), and
// `seen_path_keys` per (project, kind, day, key, path, visitor) for the AI-companies report per path.
//
// ClickHouse has no cheap UPDATE, so a row is changed by inserting its cancellation (sign -1, the old
// values) beside the new row (sign +1): CollapsingMergeTree folds such pairs in background merges, and
// every query sums `sign`, so answers never depend on merges having happened. Late rows (a key seen on
// an earlier day than its stored rows) relink the key's later rows the same way.
//
// A fold takes the events written in an insertion-time window (`ins`, ms) and, per touched key, merges
// its live rows with the window's days, recomputes the links and writes only the rows that changed,
// in one INSERT … SELECT run inside the server. The touched keys' stored rows are found by a 64-bit
// hash of the key (a tuple IN over strings is ~8× slower on 18.16); a key that only shares the hash
// comes back with its own rows unchanged, so nothing is written for it.
import { AI_BIT, HUMAN_BIT } from '../../traffic-class.ts';
import { KEY_COLUMNS, PATH_KEY_COLUMNS, pathKeyRows } from './keys.ts';
import { raw, sql, type Sql } from './sql.ts';

/** Each first-seen table, its key columns (after project) and the table of unfolded rows it is folded from. */
export const FOLDS = [
  { table: 'seen', key: ['path', 'visitor'], from: 'pending' },
  { table: 'seen_site', key: ['visitor'], from: 'pending' },
  { table: 'seen_keys', key: KEY_COLUMNS, from: 'pending_keys' },
  { table: 'seen_path_keys', key: PATH_KEY_COLUMNS, from: 'pending_keys' },
] as const;

export type FoldTable = (typeof FOLDS)[number]['table'];

/** A fold's source: the unfolded rows of its `from` table matching `cond` (key rows per path: those with a path). */
export function foldSource(db: Sql, f: (typeof FOLDS)[number], cond: Sql): Sql {
  if (f.table === 'seen_path_keys') return pathKeyRows(db, cond);
  return sql`SELECT project, date, ${raw(f.key.join(', '))}, cls FROM ${db}.${raw(f.from)} WHERE ${cond}`;
}

/**
 * The INSERT that adds the distinct (project, date, kind, k) of `table`'s rows matching `cond` to
 * `day_keys`: a set, so inserting a key again (a retried fold, a migration beside a fold) changes nothing.
 */
export const dayKeysStatement = (db: Sql, table: Sql, cond: Sql): Sql =>
  sql`INSERT INTO ${db}.day_keys (project, date, kind, k) SELECT project, date, kind, k FROM ${table} WHERE ${cond} GROUP BY project, date, kind, k`;

/** Settings of a fold's INSERT: one block per partition, so a row's cancellation and replacement land together. */
export const FOLD_SETTINGS: Record<string, string> = {
  min_insert_block_size_rows: '1000000000',
  min_insert_block_size_bytes: '100000000000',
  max_insert_block_size: '1000000000',
};

/**
 * The INSERT that folds `source` (rows with project, date, the key columns and a visitor class `cls`)
 * into `table`, keyed by `key` (FOLDS).
 */
export function foldStatement(db: Sql, table: FoldTable, key: readonly string[], source: Sql): Sql {
  const k = raw(['project', ...key].join(', '));
  const target = raw(table);
  const bit = (b: number) => raw(String(b));
  /** The latest day before position i (with the bit set, unless b = 0), -1 for none. */
  const prev = (b: number) =>
    b === 0
      ? sql`arrayReduce('max', arrayConcat([toInt32(-1)], arrayFilter((d, j) -> j < i, D, arrayEnumerate(D))))`
      : sql`arrayReduce('max', arrayConcat([toInt32(-1)], arrayFilter((d, mm, j) -> j < i AND bitAnd(mm, ${bit(b)}) = ${bit(b)}, D, M, arrayEnumerate(D))))`;
  const fresh = sql`SELECT ${k}, toInt32(date) AS day, toUInt8(groupBitOr(cls)) AS m FROM (${source}) GROUP BY ${k}, day`;
  return sql`INSERT INTO ${db}.${target} (${k}, date, mask, ph, pa, pt, sign)
    SELECT ${k}, toDate(D[i]) AS date, r.2 AS mask, r.3 AS ph, r.4 AS pa, r.5 AS pt, r.1 AS sign
    FROM (
      SELECT ${k}, D, M, HO, OM, OPH, OPA, OPT, i,
        ${prev(HUMAN_BIT)} AS nph, ${prev(AI_BIT)} AS npa, ${prev(0)} AS npt,
        HO[i] = 0 OR OM[i] != M[i] OR OPH[i] != nph OR OPA[i] != npa OR OPT[i] != npt AS changed
      FROM (
        SELECT ${k}, arraySort(groupArray((day, m, ho, om, oph, opa, opt))) AS T,
          arrayMap(t -> t.1, T) AS D, arrayMap(t -> t.2, T) AS M, arrayMap(t -> t.3, T) AS HO, arrayMap(t -> t.4, T) AS OM,
          arrayMap(t -> t.5, T) AS OPH, arrayMap(t -> t.6, T) AS OPA, arrayMap(t -> t.7, T) AS OPT
        FROM (
          SELECT ${k}, day, toUInt8(groupBitOr(m0)) AS m, max(old) AS ho, toUInt8(maxIf(m0, old = 1)) AS om,
            toInt32(maxIf(ph0, old = 1)) AS oph, toInt32(maxIf(pa0, old = 1)) AS opa, toInt32(maxIf(pt0, old = 1)) AS opt
          FROM (
            SELECT ${k}, toInt32(date) AS day, mask AS m0, ph AS ph0, pa AS pa0, pt AS pt0, toUInt8(1) AS old
            FROM ${db}.${target}
            WHERE cityHash64(${k}) IN (SELECT cityHash64(${k}) FROM (${source}))
            GROUP BY ${k}, date, mask, ph, pa, pt HAVING sum(sign) > 0
            UNION ALL
            SELECT ${k}, day, m AS m0, toInt32(-2) AS ph0, toInt32(-2) AS pa0, toInt32(-2) AS pt0, toUInt8(0) AS old FROM (${fresh})
          )
          GROUP BY ${k}, day
        )
        GROUP BY ${k}
      )
      ARRAY JOIN arrayEnumerate(D) AS i
    )
    ARRAY JOIN arrayFilter(x -> x.1 != 0, [
      (toInt8(if(changed AND HO[i] = 1, -1, 0)), OM[i], OPH[i], OPA[i], OPT[i]),
      (toInt8(if(changed, 1, 0)), M[i], nph, npa, npt)
    ]) AS r`;
}
