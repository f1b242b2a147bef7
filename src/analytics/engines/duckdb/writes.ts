// Writes to the DuckDB store. Each write gets the next sequence number (`events_raw.seq`); the rows above
// the compacted sequence (compaction_state) are the ones not folded into the day tables yet. Rows
// without import keys are appended straight into `events_raw` (not-found views with them, see
// not-found.ts); keyed imports are staged (connection-local temp table) so their duplicates can be
// dropped in the same transaction that records `import_keys`. Compaction folds the new rows into the
// first-seen day tables (the not-found rows stay where they are, see not-found.ts); retention deletes whole days.
import { AI_BIT, HUMAN_BIT, KEY_KIND, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { BIGINT, DOUBLE, INTEGER, UTINYINT, VARCHAR, type DuckDBConnection, type DuckDBType } from '@duckdb/node-api';
import { DAY_MS } from '../../dates.ts';
import type { ImportColumns, StoredEvent } from '../../engine.ts';
import { SOURCE, storedReferrerHost } from '../../engine.ts';
import { AGENT_VIEW_ROWS, int, KEY_ROWS, NEW_ROWS, NOT_FOUND_CLS, num, rows as rowsOf, UNCOMPACTED, type Dictionaries, type PathHosts, type PendingRows } from './state.ts';
import { ChunkFiller, CHUNK_ROWS } from './columns.ts';
import { appendNotFound, type NotFoundRows } from './not-found.ts';

/** Columns in order, declared once: the types of an appender's chunks, and each column's number by name. */
function columns<C extends Record<string, DuckDBType>>(declared: C): { types: DuckDBType[]; at: Record<keyof C, number> } {
  const names = Object.keys(declared) as (keyof C)[];
  return { types: Object.values(declared), at: Object.fromEntries(names.map((n, i) => [n, i])) as Record<keyof C, number> };
}

// ts is staged as a DOUBLE (exact for ms timestamps) so no BigInt is made per row; it is stored as BIGINT.
const STAGE_COLUMNS = { grp: INTEGER, project_key: INTEGER, ts: DOUBLE, day: INTEGER, path_id: INTEGER, visitor: BIGINT, cls: UTINYINT, agent: VARCHAR, referrer: VARCHAR, source: UTINYINT, ikey: BIGINT };
const STAGE = columns(STAGE_COLUMNS);

export const STAGE_TABLE = `CREATE OR REPLACE TEMP TABLE stage (${Object.entries(STAGE_COLUMNS)
  .map(([name, type]) => `${name} ${type}`)
  .join(', ')})`;

/** The `events_raw` table's columns, as its migrations made them (appended to directly). */
const EVENTS = columns({ project_key: INTEGER, ts: BIGINT, day: INTEGER, path_id: INTEGER, visitor: BIGINT, cls: UTINYINT, agent: VARCHAR, referrer: VARCHAR, source: UTINYINT, seq: BIGINT });

/** The columns a view has in both the stage and `events` (ts is typed apart: a DOUBLE staged, a BIGINT stored). */
type ViewColumns = Record<'project_key' | 'day' | 'path_id' | 'visitor' | 'cls' | 'agent' | 'referrer' | 'source', number>;

/** Rows off..end of a write into those columns of a chunk. */
function fillView(f: ChunkFiller, c: ViewColumns, rows: StageRows, off: number, end: number): void {
  f.copy(c.project_key, rows.project.subarray(off, end));
  f.copy(c.day, daysOf(rows.ts, off, end));
  f.copy(c.path_id, rows.pathId.subarray(off, end));
  f.copy(c.visitor, rows.visitor.subarray(off, end));
  f.copy(c.cls, rows.cls.subarray(off, end));
  f.strings(c.agent, (j) => agentOf(rows, off + j));
  f.strings(c.referrer, (j) => (rows.referrer === null ? null : rows.referrer[off + j]));
  f.copy(c.source, rows.source.subarray(off, end));
}

/** The rows of one write as columns, ready for the stage table. */
export interface StageRows {
  n: number;
  /** Submission of a group commit per row; null: all 0. */
  group: Int32Array | null;
  project: Int32Array;
  ts: Float64Array;
  pathId: Int32Array;
  visitor: BigInt64Array;
  cls: Uint8Array;
  /** Index into `agents`, -1 for none. */
  agent: Int16Array;
  agents: string[];
  referrer: (string | null)[] | null;
  source: Uint8Array;
  key: BigInt64Array | null;
  /** Which rows have a key; null: all (when `key` is set). */
  hasKey: Uint8Array | null;
  /** No two rows have the same key. */
  distinctKeys: boolean;
}

  /** Rows of stored events (the events API, the browser script, the bulk endpoint). */
export async function rowsOfEvents(writer: DuckDBConnection, dict: Dictionaries, events: StoredEvent[]): Promise<StageRows> {
  const n = events.length;
  const rows: StageRows = {
    n,
    group: new Int32Array(n),
    project: new Int32Array(n),
    ts: new Float64Array(n),
    pathId: new Int32Array(n),
    visitor: new BigInt64Array(n),
    cls: new Uint8Array(n),
    agent: new Int16Array(n),
    agents: [],
    referrer: new Array(n),
    source: new Uint8Array(n),
    key: new BigInt64Array(n),
    hasKey: new Uint8Array(n),
    distinctKeys: false,
  };
  const agentIndex = new Map<string, number>();
  for (let i = 0; i < n; i++) {
    const e = events[i];
    const pk = dict.projectKey(e.projectId);
    rows.group![i] = e.group;
    rows.project[i] = pk;
    rows.ts[i] = e.ts;
    rows.pathId[i] = dict.pathId(pk, e.path);
    rows.visitor[i] = e.visitor;
    rows.cls[i] = e.cls;
    let a = -1;
    if (e.agent !== null) {
      a = agentIndex.get(e.agent) ?? -1;
      if (a < 0) agentIndex.set(e.agent, (a = rows.agents.push(e.agent) - 1));
    }
    rows.agent[i] = a;
    rows.referrer![i] = e.referrer;
    rows.source[i] = e.source;
    if (e.importKey !== null) {
      rows.key![i] = e.importKey;
      rows.hasKey![i] = 1;
    }
  }
  await dict.store(writer);
  return rows;
}

/** Rows of an import batch: its columns are used as they are. */
export async function rowsOfImport(writer: DuckDBConnection, dict: Dictionaries, c: ImportColumns): Promise<StageRows> {
  const pk = dict.projectKey(c.projectId);
  const ids = new Int32Array(c.paths.length);
  for (let p = 0; p < c.paths.length; p++) ids[p] = dict.pathId(pk, c.paths[p]);
  await dict.store(writer);
  const pathId = new Int32Array(c.n);
  for (let i = 0; i < c.n; i++) pathId[i] = ids[c.path[i]];
  return {
    n: c.n,
    group: null,
    project: new Int32Array(c.n).fill(pk),
    ts: c.ts,
    pathId,
    visitor: c.visitor,
    cls: c.cls,
    agent: c.agent,
    agents: c.agents,
    referrer: c.referrer,
    source: new Uint8Array(c.n).fill(SOURCE.import),
    key: c.key,
    hasKey: null,
    distinctKeys: c.distinctKeys,
  };
}

/**
 * Stores the rows and the write's not-found views (`missing`) in one transaction. Returns duplicates by
 * group. Rows with import keys are staged first (connection-local temp table) and their repeats dropped.
 */
export async function writeRows(writer: DuckDBConnection, pending: PendingRows, rows: StageRows, seq: number, missing: NotFoundRows | null): Promise<Map<number, number>> {
  const duplicates = new Map<number, number>();
  const n = rows.n;
  if (n === 0 && (missing === null || missing.kept.length === 0)) return duplicates;
  if (!hasKeys(rows)) {
    await appendRows(writer, pending, rows, seq, missing, duplicates);
    return duplicates;
  }
  let minDay = Infinity;
  let maxDay = -Infinity;
  const perGroup = new Map<number, number>();
  for (let i = 0; i < n; i++) {
    if (rows.hasKey !== null && rows.hasKey[i] !== 1) continue;
    const group = rows.group === null ? 0 : rows.group[i];
    perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
    const day = Math.floor(rows.ts[i] / DAY_MS);
    if (day < minDay) minDay = day;
    if (day > maxDay) maxDay = day;
  }
  try {
    const ap = await writer.createAppender('stage', 'main', 'temp');
    for (let off = 0; off < n; off += CHUNK_ROWS) {
      const end = Math.min(n, off + CHUNK_ROWS);
      const f = new ChunkFiller(STAGE.types, end - off);
      const c = STAGE.at;
      f.copy(c.grp, rows.group === null ? new Int32Array(end - off) : rows.group.subarray(off, end));
      f.copy(c.ts, rows.ts.subarray(off, end));
      fillView(f, c, rows, off, end);
      const keys = rows.key;
      if (keys === null) f.nullWhere(c.ikey, () => true);
      else {
        f.copy(c.ikey, keys.subarray(off, end));
        if (rows.hasKey !== null) f.nullWhere(c.ikey, (j) => rows.hasKey![off + j] !== 1);
      }
      ap.appendDataChunk(f.chunk);
    }
    ap.flushSync();
    ap.closeSync();
    await writer.run('BEGIN TRANSACTION');
    try {
      if (perGroup.size > 0) {
        // Drop repeats inside this batch (none in a batch known to hold distinct keys), then lines already imported.
        if (!rows.distinctKeys) {
          await writer.run(`DELETE FROM stage WHERE ikey IS NOT NULL AND rowid NOT IN
            (SELECT min(rowid) FROM stage WHERE ikey IS NOT NULL GROUP BY project_key, day, ikey)`);
        }
        // Constant day bounds let DuckDB skip the key table's row groups of other days (logs arrive in time order).
        await writer.run(`DELETE FROM stage s USING import_keys k
          WHERE s.ikey IS NOT NULL AND k.k = s.ikey AND k.project_key = s.project_key AND k.day = s.day
            AND k.day BETWEEN ${int(minDay)} AND ${int(maxDay)}`);
        for (const r of await rowsOf(writer, 'SELECT grp, count(*) AS n FROM stage WHERE ikey IS NOT NULL GROUP BY grp')) {
          perGroup.set(num(r.grp), (perGroup.get(num(r.grp)) ?? 0) - num(r.n));
        }
        for (const [g, d] of perGroup) if (d > 0) duplicates.set(g, d);
        await writer.run('INSERT INTO import_keys SELECT project_key, day, ikey FROM stage WHERE ikey IS NOT NULL');
      }
      await writer.run(`INSERT INTO events_raw SELECT project_key, ts::BIGINT, day, path_id, visitor, cls, agent, referrer, source, ${int(seq)} FROM stage`);
      if (missing !== null) await appendNotFound(writer, missing, duplicates);
      // Pending rows per project (an upper bound: duplicates are counted too), known before the commit
      // so a concurrent query never skips rows that are about to be visible.
      countPending(pending, rows);
      await writer.run('COMMIT');
    } catch (err) {
      await writer.run('ROLLBACK').catch(() => {});
      throw err;
    }
  } finally {
    await writer.run('DELETE FROM stage');
  }
  return duplicates;
}

function hasKeys(rows: StageRows): boolean {
  if (rows.key === null) return false;
  if (rows.hasKey === null) return true;
  for (let i = 0; i < rows.n; i++) if (rows.hasKey[i] === 1) return true;
  return false;
}

const agentOf = (rows: StageRows, i: number): string | null => (rows.agent[i] < 0 ? null : rows.agents[rows.agent[i]]);

/** The UTC day of each time in [off, end). */
function daysOf(ts: Float64Array, off: number, end: number): Int32Array {
  const out = new Int32Array(end - off);
  for (let i = off; i < end; i++) out[i - off] = Math.floor(ts[i] / DAY_MS);
  return out;
}

/** Adds the visitor rows (human, AI) per project to the pending count. */
function countPending(pending: PendingRows, rows: StageRows): void {
  let pk = -1;
  let run = 0;
  for (let i = 0; i < rows.n; i++) {
    if (rows.cls[i] > LAST_VISITOR_CODE) continue;
    if (rows.project[i] !== pk) {
      if (run > 0) pending.add(pk, run);
      pk = rows.project[i];
      run = 0;
    }
    run++;
  }
  if (run > 0) pending.add(pk, run);
}

/**
 * Rows without import keys (the events API, collect): appended straight into `events_raw` in one
 * transaction, with the write's unkeyed not-found views in the same appender. A small group commit then
 * pays no INSERT … SELECT (~3 ms each on 1,000 rows, more than the rows themselves), no second
 * transaction, and no second table's flush and commit for its not-found views (issue 34).
 */
async function appendRows(writer: DuckDBConnection, pending: PendingRows, rows: StageRows, seq: number, missing: NotFoundRows | null, duplicates: Map<number, number>): Promise<void> {
  const inline = missing !== null && !missing.keyed ? missing : null;
  await writer.run('BEGIN TRANSACTION');
  try {
    await appendEvents(writer, rows, inline, seq);
    if (missing !== null && missing.keyed) await appendNotFound(writer, missing, duplicates);
    // Known before the commit, so a concurrent query never skips rows that are about to be visible.
    countPending(pending, rows);
    await writer.run('COMMIT');
  } catch (err) {
    await writer.run('ROLLBACK').catch(() => {});
    throw err;
  }
}

/** The rows and the not-found rows into `events_raw` through one appender (inside the caller's transaction). */
async function appendEvents(writer: DuckDBConnection, rows: StageRows, missing: NotFoundRows | null, seq: number): Promise<void> {
  const n = rows.n;
  const m = missing?.kept.length ?? 0;
  if (n + m === 0) return;
  const ap = await writer.createAppender('events_raw');
  try {
    const c = EVENTS.at;
    for (let off = 0; off < n; off += CHUNK_ROWS) {
      const end = Math.min(n, off + CHUNK_ROWS);
      const f = new ChunkFiller(EVENTS.types, end - off);
      f.int64FromNumbers(c.ts, rows.ts.subarray(off, end));
      fillView(f, c, rows, off, end);
      f.int64Constant(c.seq, BigInt(seq));
      ap.appendDataChunk(f.chunk);
    }
    for (let off = 0; off < m; off += CHUNK_ROWS) {
      const end = Math.min(m, off + CHUNK_ROWS);
      ap.appendDataChunk(notFoundChunk(missing!, off, end, seq));
    }
    ap.flushSync();
  } finally {
    ap.closeSync();
  }
}

/** Not-found rows off..end as an `events_raw` chunk, in the encoding not-found.ts reads them with. */
function notFoundChunk(missing: NotFoundRows, off: number, end: number, seq: number) {
  const rows = missing.kept.slice(off, end);
  const c = EVENTS.at;
  const f = new ChunkFiller(EVENTS.types, rows.length);
  f.copy(c.project_key, Int32Array.from(missing.keys.slice(off, end)));
  f.copy(c.ts, BigInt64Array.from(rows, (e) => BigInt(e.ts)));
  f.copy(c.day, Int32Array.from(rows, (e) => Math.floor(e.ts / DAY_MS)));
  f.copy(c.path_id, Int32Array.from(missing.pathIds.slice(off, end)));
  f.copy(c.visitor, BigInt64Array.from(rows, (e) => e.visitor));
  f.copy(c.cls, Uint8Array.from(rows, (e) => e.cls | NOT_FOUND_CLS));
  f.strings(c.agent, (j) => (rows[j].derivedVisitor == null ? null : String(rows[j].derivedVisitor)));
  f.strings(c.referrer, (j) => storedReferrerHost(rows[j].referrer));
  f.copy(c.source, Uint8Array.from(rows, (e) => e.source));
  f.int64Constant(c.seq, BigInt(seq));
  return f.chunk;
}

/** The first-seen tables fold() keeps, and each one's key (besides project_key). */
export const FIRST_SEEN = {
  daily: ['path_id', 'visitor'],
  daily_site: ['visitor'],
  daily_keys: ['kind', 'k', 'visitor'],
  daily_path_keys: ['path_id', 'kind', 'k', 'visitor'],
} as const;
export type FirstSeenTable = keyof typeof FIRST_SEEN;

/** The first-seen tables of KEY_ROWS: per key, and per path and key. */
export const KEY_TABLES = ['daily_keys', 'daily_path_keys'] as const;

/**
 * Folds key rows (`keyRows`: KEY_ROWS of some events, or some of them) into `tables` (of KEY_TABLES):
 * the rows are made once (a temp table, c_keys, dropped by the caller) and folded into each;
 * `daily_path_keys` takes the agents' rows and the rows of the hosts `pathHosts` keeps, each host
 * tested once (c_path_hosts).
 */
export async function foldKeys(w: DuckDBConnection, keyRows: string, tables: readonly (typeof KEY_TABLES)[number][], pathHosts: PathHosts): Promise<void> {
  await w.run(`CREATE OR REPLACE TEMP TABLE c_keys AS ${keyRows}`);
  for (const t of tables) {
    let rows = 'SELECT * FROM temp.c_keys';
    const kept = t === 'daily_path_keys' ? pathHosts.kept(`temp.c_keys WHERE kind = ${KEY_KIND.host}`) : null;
    if (kept !== null) {
      await w.run(`CREATE OR REPLACE TEMP TABLE c_path_hosts AS ${kept}`);
      rows += ` WHERE kind = ${KEY_KIND.agent} OR k IN (SELECT k FROM temp.c_path_hosts)`;
    }
    await fold(w, t, [...FIRST_SEEN[t]], false, rows);
  }
}

/** The temp tables a compaction (or a migration's fold) leaves behind. */
export const FOLD_TEMPS = ['c_span', 'c_stored', 'c_new', 'c_last', 'c_late', 'c_keys', 'c_path_hosts'];

/**
 * Folds the rows written up to sequence `upTo` into the first-seen tables (daily, daily_site,
 * daily_keys, daily_path_keys: the hosts of `pathHosts`) and the agents' view sums (one transaction).
 */
export async function compact(w: DuckDBConnection, pending: PendingRows, upTo: number, pathHosts: PathHosts): Promise<void> {
  if (pending.total === 0) return;
  await w.run('BEGIN TRANSACTION');
  try {
    const source = `${NEW_ROWS} AND seq <= ${int(upTo)}`;
    await fold(w, 'daily', ['path_id', 'visitor'], true, source);
    await fold(w, 'daily_site', ['visitor'], false, source);
    const written = `${UNCOMPACTED} AND seq <= ${int(upTo)}`;
    await foldKeys(w, KEY_ROWS(written), KEY_TABLES, pathHosts);
    await w.run(`INSERT INTO daily_agents ${AGENT_VIEW_ROWS(written)}`);
    await w.run(`UPDATE compaction_state SET seq = ${int(upTo)}`);
    await w.run('COMMIT');
    pending.clear();
  } catch (err) {
    await w.run('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    for (const t of FOLD_TEMPS) await w.run(`DROP TABLE IF EXISTS temp.${t}`).catch(() => {});
  }
}

/**
 * Folds `source` (rows of project_key, day, path_id, visitor, mask, views_h, views_a) into `table`
 * (daily: per path and visitor; daily_site: per visitor; daily_keys: per kind, key and visitor;
 * daily_path_keys: per path, kind, key and visitor). Rows of one key form a sequence ordered by day
 * (then arrival); each row stores, per bit, the day of the previous row of its key having that bit
 * (prev_h, prev_a, prev_t), so "first row of the key inside [d1, d2)" is "prev < d1". Keys whose new
 * rows are not older than their stored rows (the usual case: traffic arrives in time order) are only
 * appended; those with one new day (most) need no window. Keys with an older row arriving late are rebuilt.
 * `source` is read twice when some key has several new days or is late: it must give the same rows
 * both times (it does inside the caller's transaction).
 */
export async function fold(w: DuckDBConnection, table: FirstSeenTable, key: string[], views: boolean, source: string): Promise<void> {
  const f = foldSql(table, key, views);
  const { kc, on } = f;
  const vsum = views ? ', sum(views_h)::INTEGER AS views_h, sum(views_a)::INTEGER AS views_a' : '';
  // Per new key: its first and last new day, and its rows' sums (the new row of a key with one new day).
  await w.run(`CREATE OR REPLACE TEMP TABLE c_span AS SELECT ${kc}, min(day) AS first_day, max(day) AS last_day, bit_or(mask)::UTINYINT AS mask${vsum}
    FROM (${source}) GROUP BY ${kc}`);
  // The stored rows of the keys in this batch (few: most keys are new), found with one scan of the table
  // and a small hash probe; their last day per bit, and (late keys) the rows to rebuild, come from them.
  await w.run(`CREATE OR REPLACE TEMP TABLE c_stored AS SELECT d.rowid AS row, ${f.of('d')}, d.day, d.mask${f.vcols.replaceAll(', ', ', d.')}
    FROM ${table} d SEMI JOIN c_span s ON ${on('d', 's')}`);
  await w.run(`CREATE OR REPLACE TEMP TABLE c_last AS SELECT ${kc}, max(day) AS last_t,
      max(day) FILTER (WHERE ${f.has('d', HUMAN_BIT)}) AS last_h, max(day) FILTER (WHERE ${f.has('d', AI_BIT)}) AS last_a
    FROM c_stored d GROUP BY ${kc}`);
  // Late: a new day older than the key's last stored one.
  await w.run(`CREATE OR REPLACE TEMP TABLE c_late AS SELECT ${f.of('s')} FROM c_span s JOIN c_last l ON ${on('s', 'l')} WHERE s.first_day < l.last_t`);
  // In-order keys with one new day (most): the new row links to the last stored rows; no window.
  await w.run(`INSERT INTO ${f.target} SELECT s.project_key, s.first_day, ${f.k.slice(1).map((c) => `s.${c}`).join(', ')}, s.mask${f.vcols.replaceAll(', ', ', s.')}, l.last_h, l.last_a, l.last_t
    FROM c_span s LEFT JOIN c_last l ON ${on('s', 'l')} WHERE s.first_day = s.last_day AND NOT coalesce(s.first_day < l.last_t, false)`);
  const counts = (await rowsOf(w, 'SELECT (SELECT count(*) FROM c_span WHERE first_day < last_day) AS multi, (SELECT count(*) FROM c_late) AS late'))[0];
  if (num(counts.multi) + num(counts.late) === 0) return;
  // The rows per day of the keys with several new days or late ones (the source read again, for those keys only).
  await w.run(`CREATE OR REPLACE TEMP TABLE c_new AS SELECT ${kc}, day, bit_or(mask)::UTINYINT AS mask${vsum} FROM (${source}) r
    SEMI JOIN (SELECT ${kc} FROM c_span WHERE first_day < last_day UNION ALL SELECT ${kc} FROM c_late) x ON ${on('r', 'x')} GROUP BY ${kc}, day`);
  // In-order keys with several new days: the first links to the stored rows, the others to the previous new ones.
  await w.run(`INSERT INTO ${f.target} SELECT ${f.newRow}, coalesce(${f.prev('n', HUMAN_BIT)}, l.last_h), coalesce(${f.prev('n', AI_BIT)}, l.last_a), coalesce(max(n.day) OVER w, l.last_t)
    FROM c_new n LEFT JOIN c_last l ON ${on('n', 'l')} ANTI JOIN c_late x ON ${on('n', 'x')}
    WINDOW w AS (PARTITION BY ${f.of('n')} ORDER BY n.day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`);
  if (num(counts.late) > 0) await rebuildLate(w, f, vsum);
}

/** The SQL pieces of one table's fold. */
function foldSql(table: FirstSeenTable, key: string[], views: boolean) {
  const k = ['project_key', ...key];
  return {
    table,
    k,
    kc: k.join(', '),
    vcols: views ? ', views_h, views_a' : '',
    of: (a: string) => k.map((c) => `${a}.${c}`).join(', '),
    on: (a: string, b: string) => k.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND '),
    has: (a: string, bit: number) => `${a}.mask & ${bit} = ${bit}`,
    /** The latest earlier day of the window w having the bit. */
    prev: (a: string, bit: number) => `max(CASE WHEN ${a}.mask & ${bit} = ${bit} THEN ${a}.day END) OVER w`,
    /** A c_new row (n) as the target's columns before the links. */
    newRow: `n.project_key, n.day, ${key.map((c) => `n.${c}`).join(', ')}, n.mask${views ? ', n.views_h, n.views_a' : ''}`,
    target: `${table} (project_key, day, ${key.join(', ')}, mask${views ? ', views_h, views_a' : ''}, prev_h, prev_a, prev_t)`,
  };
}

/** Late keys: their whole sequence (stored and new rows, same days merged) is deleted and written again. */
async function rebuildLate(w: DuckDBConnection, f: ReturnType<typeof foldSql>, vsum: string): Promise<void> {
  const { table, kc, on, vcols } = f;
  await w.run(`CREATE OR REPLACE TEMP TABLE c_old AS SELECT d.* FROM c_stored d SEMI JOIN c_late x ON ${on('d', 'x')}`);
  await w.run(`DELETE FROM ${table} WHERE rowid IN (SELECT row FROM c_old)`);
  await w.run(`INSERT INTO ${f.target} SELECT project_key, day, ${f.k.slice(1).join(', ')}, mask${vcols},
      ${f.prev('r', HUMAN_BIT)}, ${f.prev('r', AI_BIT)}, max(r.day) OVER w
    FROM (SELECT ${kc}, day, bit_or(mask)::UTINYINT AS mask${vsum}
          FROM (SELECT * EXCLUDE (row) FROM c_old UNION ALL SELECT n.* FROM c_new n SEMI JOIN c_late x ON ${on('n', 'x')}) GROUP BY ${kc}, day) r
    WINDOW w AS (PARTITION BY ${kc} ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`);
  await w.run('DROP TABLE IF EXISTS temp.c_old');
}

/** Deletes every day before `day` (days since the epoch). */
export async function deleteBefore(w: DuckDBConnection, pending: PendingRows, day: number): Promise<void> {
  const d = int(day);
  await w.run('BEGIN TRANSACTION');
  try {
    for (const t of ['events_raw', ...Object.keys(FIRST_SEEN), 'daily_agents', 'import_keys', 'not_found_stored']) await w.run(`DELETE FROM ${t} WHERE day < ${d}`);
    // Links to deleted days become "first seen" so ranges starting before the cut-off stay exact.
    for (const t of Object.keys(FIRST_SEEN)) {
      for (const c of ['prev_h', 'prev_a', 'prev_t']) await w.run(`UPDATE ${t} SET ${c} = NULL WHERE ${c} < ${d}`);
    }
    await w.run('COMMIT');
    await pending.count(w);
  } catch (err) {
    await w.run('ROLLBACK').catch(() => {});
    throw err;
  }
}
