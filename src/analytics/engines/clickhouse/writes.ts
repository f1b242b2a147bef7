// Writes to the ClickHouse store: events (with import dedupe), folds into the first-seen layout, and
// retention. Each Folio process serialises its own writes; folds across processes are serialised by
// the caller's lock (the state store's, see analytics/index.ts).
import { DAY_MS } from '../../dates.ts';
import type { StoredEvent, WriteOutcome } from '../../engine.ts';
import type { ClickHouseConnection, Row } from './connection.ts';
import { dayKeysStatement, FOLDS, foldSource, foldStatement, FOLD_SETTINGS } from './fold.ts';
import { insertNotFound } from './not-found.ts';
import { ident, inList, MAX_DATE_DAY, raw, sql, SqlDate, type Sql } from './sql.ts';

/**
 * Rows written less than this long ago are not folded yet: an insert in flight (its rows carry the
 * time it started) must be visible before the watermark passes it. Queries add the unfolded rows.
 */
export const FOLD_MARGIN_MS = 60_000;

/** Rows per fold statement at most (plus the rest of the last insert taken). */
const FOLD_CHUNK = 2_000_000;

const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));
const isoDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);

/** The fold watermark: events with ins ≤ it are in the first-seen tables (FOLDS). */
export async function watermark(c: ClickHouseConnection, db: Sql): Promise<number> {
  const r = await c.rows(sql`SELECT max(watermark) AS w FROM ${db}.fold_state`);
  return num(r[0]?.w);
}

/** Unfolded visitor rows (an estimate for scheduling folds). */
export async function unfoldedRows(c: ClickHouseConnection, db: Sql): Promise<number> {
  const w = await watermark(c, db);
  const r = await c.rows(sql`SELECT count() AS n FROM ${db}.pending WHERE ins > ${w}`);
  return num(r[0]?.n);
}

/**
 * Stores events (one INSERT, its materialized-view rows with it), and not-found views in their own
 * table; keyed repeats are dropped and counted by group.
 */
export async function writeEvents(c: ClickHouseConnection, db: Sql, all: StoredEvent[]): Promise<WriteOutcome> {
  const duplicates = new Map<number, number>();
  const missing = all.filter((e) => e.notFound);
  const events = missing.length === 0 ? all : all.filter((e) => !e.notFound);
  // Every day checked before anything is written.
  const days = daysOf(events);
  const missingDays = daysOf(missing);
  const keepMissing = missing.length === 0 ? [] : await dropImported(c, db, missing, missingDays, duplicates, 'not_found');
  const keep = events.length === 0 ? [] : await dropImported(c, db, events, days, duplicates, 'events');
  // The two INSERTs run side by side: a write with not-found views takes no longer than one without.
  await Promise.all([keepMissing.length > 0 ? insertNotFound(c, db, missing, keepMissing) : null, keep.length > 0 ? insertEvents(c, db, events, days, keep) : null]);
  return { duplicates };
}

/** The kept page views in one INSERT (one block per million rows, atomic with its materialized-view rows). */
async function insertEvents(c: ClickHouseConnection, db: Sql, events: StoredEvent[], days: number[], keep: number[]): Promise<void> {
  const ins = Date.now();
  const values = keep.map((i) => {
    const e = events[i];
    // toWellFormed: JSON.stringify writes a lone surrogate half as \uD800, which ClickHouse refuses
    // (the whole batch would fail); U+FFFD is what any UTF-8 encoder, DuckDB's included, stores.
    return {
      project: e.projectId.toWellFormed(),
      date: isoDay(days[i]),
      ts: e.ts,
      path: e.path.toWellFormed(),
      visitor: e.visitor.toString(),
      cls: e.cls,
      agent: e.agent === null ? null : e.agent.toWellFormed(),
      referrer: e.referrer === null ? null : e.referrer.toWellFormed(),
      source: e.source,
      import_key: e.importKey === null ? null : e.importKey.toString(),
      ins,
    };
  });
  await c.insert(`${db.text}.events`, values, { max_insert_block_size: String(Math.max(1_048_576, values.length)) });
}

/** Each event's UTC day; every one fits a ClickHouse Date (1970 to 2105; ingest refuses others), or nothing is written. */
function daysOf(events: StoredEvent[]): number[] {
  const days = events.map((e) => Math.floor(e.ts / DAY_MS));
  for (const d of days) new SqlDate(d);
  return days;
}

/**
 * Import dedupe: an event with an import key is dropped when the same (project, day, key) is stored
 * already or came earlier in this batch. Returns the indices of the events to store.
 */
async function dropImported(c: ClickHouseConnection, db: Sql, events: StoredEvent[], days: number[], duplicates: Map<number, number>, table: 'events' | 'not_found'): Promise<number[]> {
  const keep: number[] = [];
  const keyed: number[] = [];
  for (let i = 0; i < events.length; i++) (events[i].importKey === null ? keep : keyed).push(i);
  if (keyed.length === 0) return keep;
  const id = (i: number) => `${events[i].projectId}\u0000${days[i]}\u0000${events[i].importKey}`;
  const seen = new Set<string>();
  // Stored keys, per project, in chunks (a query text stays well under a few MiB).
  const byProject = new Map<string, number[]>();
  for (const i of keyed) {
    let l = byProject.get(events[i].projectId);
    if (!l) byProject.set(events[i].projectId, (l = []));
    l.push(i);
  }
  const CHUNK = 20_000;
  for (const [project, idx] of byProject) {
    for (let s = 0; s < idx.length; s += CHUNK) {
      const part = idx.slice(s, s + CHUNK);
      const dayList = [...new Set(part.map((i) => days[i]))].map((d) => new SqlDate(d));
      const keyList = [...new Set(part.map((i) => events[i].importKey as bigint))];
      const q = sql`SELECT DISTINCT toUInt32(date) AS d, toString(import_key) AS k FROM ${db}.${ident(table)}
        WHERE project = ${project} AND date IN ${inList(dayList)} AND import_key IN ${inList(keyList)}`;
      for (const r of await c.rows(q, { max_query_size: String(q.text.length + 1024) })) {
        seen.add(`${project}\u0000${num(r.d)}\u0000${String(r.k)}`);
      }
    }
  }
  for (const i of keyed) {
    const k = id(i);
    if (seen.has(k)) {
      const g = events[i].group;
      duplicates.set(g, (duplicates.get(g) ?? 0) + 1);
    } else {
      seen.add(k);
      keep.push(i);
    }
  }
  keep.sort((a, b) => a - b);
  return keep;
}

/**
 * Folds the events written up to `marginMs` ago and not folded yet into every first-seen table, then moves
 * the watermark. Returns the rows folded. Only one fold may run at a time (any process).
 */
export async function fold(c: ClickHouseConnection, db: Sql, marginMs = FOLD_MARGIN_MS): Promise<number> {
  let lo = await watermark(c, db);
  const hi = Date.now() - marginMs;
  if (hi <= lo) return 0;
  let folded = 0;
  // A long backlog (a bulk load, a server down for a while) is folded FOLD_CHUNK rows at a time
  // (whole inserts: rows of one insert share their `ins`), so a fold's memory stays bounded.
  for (;;) {
    const cut = await c.rows(sql`SELECT ins FROM ${db}.pending WHERE ins > ${lo} AND ins <= ${hi} ORDER BY ins LIMIT 1 OFFSET ${FOLD_CHUNK}`);
    const upTo = cut.length > 0 ? num(cut[0].ins) : hi;
    const window = sql`ins > ${lo} AND ins <= ${upTo}`;
    const n = num((await c.rows(sql`SELECT count() AS n FROM ${db}.pending WHERE ${window}`))[0]?.n);
    if (n > 0) {
      // pending_keys holds key rows of the same inserts (same `ins`): one window covers both.
      for (const f of FOLDS) await c.command(foldStatement(db, f.table, f.key, foldSource(db, f, window)), FOLD_SETTINGS);
      await c.command(dayKeysStatement(db, sql`${db}.pending_keys`, window));
      // An empty window leaves the watermark (no row, no part, for the idle checks).
      await c.insert(`${db.text}.fold_state`, [{ watermark: upTo, at: Date.now() }]);
    }
    folded += n;
    lo = upTo;
    if (upTo >= hi) break;
  }
  // Rows of insertion days well behind the watermark are folded: drop them (whole partitions).
  for (const t of PENDING_TABLES) {
    const parts = await c.rows(sql`SELECT DISTINCT partition FROM system.parts WHERE database = ${dbName(db)} AND table = ${t} AND active`);
    for (const p of parts) {
      const day = Number(p.partition);
      if (Number.isInteger(day) && (day + 2) * DAY_MS <= hi) await c.command(sql`ALTER TABLE ${db}.${ident(t)} DROP PARTITION ${day}`);
    }
  }
  return folded;
}

/** The database name of a quoted identifier (as `ident` wrote it). */
function dbName(db: Sql): string {
  return db.text.slice(1, -1).replace(/\\(.)/g, '$1');
}

/** The tables of unfolded rows, partitioned by insertion day. */
const PENDING_TABLES = [...new Set(FOLDS.map((f) => f.from))];

/** Every table holding per-day rows, partitioned by month (retention applies to each). */
const DAY_TABLES = ['events', 'daily', 'daily_site', 'daily_agents', 'agent_path_views', 'not_found', 'day_keys', ...FOLDS.map((f) => f.table)] as const;

/** Deletes everything before the UTC day `day`: whole months by partition, the rest of the cut-off month by a mutation. */
export async function deleteBefore(c: ClickHouseConnection, db: Sql, day: number): Promise<void> {
  if (day <= 0) return;
  const cutoff = new SqlDate(Math.min(day, MAX_DATE_DAY));
  const cutoffMonth = Number(cutoff.iso().slice(0, 7).replace('-', ''));
  const database = dbName(db);
  for (const t of DAY_TABLES) {
    const parts = await c.rows(sql`SELECT DISTINCT partition FROM system.parts WHERE database = ${database} AND table = ${t} AND active`);
    for (const p of parts) {
      const month = Number(p.partition);
      if (Number.isInteger(month) && month < cutoffMonth) await c.command(sql`ALTER TABLE ${db}.${ident(t)} DROP PARTITION ${month}`);
    }
    const left = await c.rows(sql`SELECT count() AS n FROM ${db}.${ident(t)} WHERE date < ${cutoff}`);
    if (num(left[0]?.n) > 0) {
      await c.command(sql`ALTER TABLE ${db}.${ident(t)} DELETE WHERE date < ${cutoff}`);
      await waitForMutations(c, database, t);
    }
  }
  // Unfolded rows of deleted days (partitioned by insertion day, not by month).
  for (const t of PENDING_TABLES) {
    const left = await c.rows(sql`SELECT count() AS n FROM ${db}.${ident(t)} WHERE date < ${cutoff}`);
    if (num(left[0]?.n) > 0) {
      await c.command(sql`ALTER TABLE ${db}.${ident(t)} DELETE WHERE date < ${cutoff}`);
      await waitForMutations(c, database, t);
    }
  }
  // Links to deleted days become "first seen", so ranges starting before the cut-off stay exact (a
  // row and its cancellation get the same values, so they still cancel).
  const d = Number(cutoff.day);
  for (const { table: t } of FOLDS) {
    const stale = raw(`(ph >= 0 AND ph < ${d}) OR (pa >= 0 AND pa < ${d}) OR (pt >= 0 AND pt < ${d})`);
    const n = await c.rows(sql`SELECT count() AS n FROM ${db}.${ident(t)} WHERE ${stale}`);
    if (num(n[0]?.n) === 0) continue;
    await c.command(sql`ALTER TABLE ${db}.${ident(t)} UPDATE ph = if(ph < ${d}, -1, ph), pa = if(pa < ${d}, -1, pa), pt = if(pt < ${d}, -1, pt) WHERE ${stale}`);
    await waitForMutations(c, database, t);
  }
}

/** ALTER … DELETE/UPDATE runs in the background on every release; wait until this table has none left. */
async function waitForMutations(c: ClickHouseConnection, database: string, table: string): Promise<void> {
  for (let i = 0; ; i++) {
    const r: Row[] = await c.rows(sql`SELECT count() AS n FROM system.mutations WHERE database = ${database} AND table = ${table} AND is_done = 0`);
    if (num(r[0]?.n) === 0) return;
    if (i > 6000) throw new Error(`ClickHouse mutation on ${database}.${table} did not finish within 10 minutes.`);
    await new Promise((res) => setTimeout(res, 100));
  }
}
