// Not-found views on DuckDB (they are never page views); the report reading them is
// src/analytics/reports/not-found.ts. A write appends its unkeyed not-found views into `events_raw`
// with its page views (migration 7): a second table in the write cost an appender flush and a commit
// of its own, ~1.5 ms per write (docs/benchmarks-analytics.md, issue 34). They stay there (migration
// 9): compaction used to move them into `not_found_stored`, and the scattered rows it deleted from
// `events_raw` made every checkpoint after it dearer, ~38 µs per not-found view, five page views'
// worth (same document). Keyed not-found views (imports) go to `not_found_stored`, where their
// repeats are dropped; the view `not_found` reads both.
//
// In `events_raw` a not-found row is told apart by its class (NOT_FOUND_CLS added), its path is in the
// paths dictionary and its server-derived identity is `agent` as decimal text (a not-found row has no
// agent). Columns of their own would cost every page view: two more (NULL) columns made each row's
// write ~0.25 µs dearer, a sixth of a write's CPU (docs/benchmarks-analytics.md).
import type { DuckDBConnection } from '@duckdb/node-api';
import { DAY_MS } from '../../dates.ts';
import { storedReferrerHost, type StoredEvent } from '../../engine.ts';
import { LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { NOT_FOUND_CLS, num, rows as rowsOf, UNCOMPACTED, type Dictionaries } from './state.ts';

/** The table as migration 3 created it (shipped: never edited; migration 7 renamed it `not_found_stored`). */
export const NOT_FOUND_TABLE = `CREATE TABLE not_found (project_key INTEGER NOT NULL, ts BIGINT NOT NULL, day INTEGER NOT NULL, path VARCHAR NOT NULL,
  visitor BIGINT NOT NULL, cls UTINYINT NOT NULL, referrer_host VARCHAR, import_key BIGINT, grp INTEGER)`;
/** Migration 4: the server-derived identity (keyed hash of address and user agent); rows stored before it read NULL and count in no derived total. */
export const NOT_FOUND_DERIVED_VISITOR = `ALTER TABLE not_found ADD COLUMN derived_visitor BIGINT`;

/** The columns of `not_found` (the view) and `not_found_stored`, in order. */
const NOT_FOUND_COLUMNS = 'project_key, ts, day, path, visitor, cls, referrer_host, import_key, grp, derived_visitor';

/**
 * Migration 7's views (shipped: never edited, rawNotFound and rawRows included). Then not-found rows in
 * `events_raw` were never compacted (compaction moved them in the transaction that advanced
 * compaction_state), so the seq bound was exact.
 */
export const RAW_VIEWS = [
  `CREATE VIEW events AS SELECT * FROM events_raw WHERE cls < ${NOT_FOUND_CLS}`,
  `CREATE VIEW not_found AS SELECT ${NOT_FOUND_COLUMNS} FROM not_found_stored UNION ALL ${rawNotFound(UNCOMPACTED)}`,
];

/**
 * Migration 9's view: the not-found rows stay in `events_raw` (none is moved any more), so the view
 * reads all of them. Rows moved before it are in `not_found_stored` and no longer in `events_raw`.
 */
export const NOT_FOUND_IN_PLACE = `CREATE OR REPLACE VIEW not_found AS SELECT ${NOT_FOUND_COLUMNS} FROM not_found_stored UNION ALL ${rawNotFound('TRUE')}`;

/** The not-found rows of `events_raw` matching `cond` (a condition on its columns). */
function rawRows(cond: string): string {
  return `cls >= ${NOT_FOUND_CLS} AND ${cond}`;
}

/** Those rows as `not_found` rows. */
function rawNotFound(cond: string): string {
  return `SELECT r.project_key, r.ts, r.day, p.path, r.visitor, r.cls - ${NOT_FOUND_CLS}, r.referrer, NULL::BIGINT, NULL::INTEGER, r.agent::BIGINT
    FROM (SELECT * FROM events_raw WHERE ${rawRows(cond)}) r JOIN paths p ON p.path_id = r.path_id AND p.project_key = r.project_key`;
}

/** The staging table of keyed rows (connection-local), made once when the engine opens. */
export const NOT_FOUND_STAGE = `CREATE OR REPLACE TEMP TABLE not_found_stage AS SELECT * FROM not_found_stored LIMIT 0`;
/** Staged rows, numbered within their (project, day, import key): a keyed row is new once, and only if not stored before (keyed rows are only ever stored). */
const NUMBERED = `SELECT s.*, row_number() OVER (PARTITION BY project_key, day, import_key ORDER BY ts, grp) AS position,
  import_key IS NOT NULL AND (position > 1 OR EXISTS (SELECT 1 FROM not_found_stored n WHERE n.project_key = s.project_key AND n.day = s.day AND n.import_key = s.import_key)) AS repeated
  FROM temp.not_found_stage s`;

/** Not-found views of humans and AI (bots' are dropped) with their project keys and path ids, ready to append. */
export interface NotFoundRows {
  kept: StoredEvent[];
  keys: number[];
  pathIds: number[];
  /** Some row has an import key (the stage and its dedupe are needed). */
  keyed: boolean;
}

/** The rows of `events` to store; new project keys and paths join the dictionary's next store(). */
export function notFoundRows(dict: Dictionaries, events: StoredEvent[]): NotFoundRows {
  const kept = events.filter((e) => e.cls <= LAST_VISITOR_CODE);
  const keys = kept.map((e) => dict.projectKey(e.projectId));
  const keyed = kept.some((e) => e.importKey !== null);
  // Keyed rows go to not_found_stored with their path as text: no dictionary entry for them.
  return { kept, keys, pathIds: keyed ? [] : kept.map((e, i) => dict.pathId(keys[i], e.path)), keyed };
}

/**
 * Appends keyed rows inside the caller's open transaction: staged, keyed repeats (a batch sent again
 * with its Idempotency-Key, a log line imported again) dropped and counted into `duplicates` by group,
 * the rest stored. (Unkeyed rows of a write without keys go into `events_raw` with its page views.)
 */
export async function appendNotFound(w: DuckDBConnection, rows: NotFoundRows, duplicates: Map<number, number>): Promise<void> {
  if (rows.kept.length === 0) return;
  try {
    await appendToStage(w, rows);
    for (const r of await rowsOf(w, `SELECT grp, count(*) AS n FROM (${NUMBERED}) WHERE repeated GROUP BY grp`)) {
      duplicates.set(num(r.grp), (duplicates.get(num(r.grp)) ?? 0) + num(r.n));
    }
    await w.run(`INSERT INTO not_found_stored SELECT ${NOT_FOUND_COLUMNS} FROM (${NUMBERED}) WHERE NOT repeated`);
  } finally {
    await w.run('DELETE FROM temp.not_found_stage');
  }
}

/** One appender for the rows, in the table's column order. */
async function appendToStage(w: DuckDBConnection, rows: NotFoundRows): Promise<void> {
  const ap = await w.createAppender('not_found_stage', 'main', 'temp');
  try {
    rows.kept.forEach((e, i) => {
      ap.appendInteger(rows.keys[i]);
      ap.appendBigInt(BigInt(e.ts));
      ap.appendInteger(Math.floor(e.ts / DAY_MS));
      ap.appendVarchar(e.path);
      ap.appendBigInt(e.visitor);
      ap.appendUTinyInt(e.cls);
      const host = storedReferrerHost(e.referrer);
      if (host === null) ap.appendNull();
      else ap.appendVarchar(host);
      if (e.importKey === null) ap.appendNull();
      else ap.appendBigInt(e.importKey);
      ap.appendInteger(e.group);
      if (e.derivedVisitor === undefined || e.derivedVisitor === null) ap.appendNull();
      else ap.appendBigInt(e.derivedVisitor);
      ap.endRow();
    });
    ap.flushSync();
  } finally {
    ap.closeSync();
  }
}
