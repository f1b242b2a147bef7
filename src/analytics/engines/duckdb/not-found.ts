// Not-found views on DuckDB: stored raw in their own table (they are never page views); the report
// reading them is src/analytics/reports/not-found.ts.
import type { DuckDBConnection } from '@duckdb/node-api';
import { DAY_MS } from '../../dates.ts';
import { storedReferrerHost, type StoredEvent } from '../../engine.ts';
import { LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { num, rows as rowsOf, type Dictionaries } from './state.ts';

/** The table as migration 3 created it (shipped: never edited). */
export const NOT_FOUND_TABLE = `CREATE TABLE not_found (project_key INTEGER NOT NULL, ts BIGINT NOT NULL, day INTEGER NOT NULL, path VARCHAR NOT NULL,
  visitor BIGINT NOT NULL, cls UTINYINT NOT NULL, referrer_host VARCHAR, import_key BIGINT, grp INTEGER)`;
/** Migration 4: the server-derived identity (keyed hash of address and user agent); rows stored before it read NULL and count in no derived total. */
export const NOT_FOUND_DERIVED_VISITOR = `ALTER TABLE not_found ADD COLUMN derived_visitor BIGINT`;

/** The staging table of keyed rows (connection-local), made once when the engine opens. */
export const NOT_FOUND_STAGE = `CREATE OR REPLACE TEMP TABLE not_found_stage AS SELECT * FROM not_found LIMIT 0`;
/** Staged rows, numbered within their (project, day, import key): a keyed row is new once, and only if not stored before. */
const NUMBERED = `SELECT s.*, row_number() OVER (PARTITION BY project_key, day, import_key ORDER BY ts, grp) AS position,
  import_key IS NOT NULL AND (position > 1 OR EXISTS (SELECT 1 FROM not_found n WHERE n.project_key = s.project_key AND n.day = s.day AND n.import_key = s.import_key)) AS repeated
  FROM temp.not_found_stage s`;

/** Not-found views of humans and AI (bots' are dropped) with their project keys, ready to append. */
export interface NotFoundRows {
  kept: StoredEvent[];
  keys: number[];
  /** Some row has an import key (the stage and its dedupe are needed). */
  keyed: boolean;
}

/** The rows of `events` to store; new project keys join the dictionary's next store(). */
export function notFoundRows(dict: Dictionaries, events: StoredEvent[]): NotFoundRows {
  const kept = events.filter((e) => e.cls <= LAST_VISITOR_CODE);
  return { kept, keys: kept.map((e) => dict.projectKey(e.projectId)), keyed: kept.some((e) => e.importKey !== null) };
}

/**
 * Appends the rows inside the caller's open transaction (the page views' own, so a not-found view
 * costs no transaction, commit or DDL of its own). Unkeyed rows go straight into `not_found`; keyed
 * repeats (a batch sent again with its Idempotency-Key, a log line imported again) are staged, dropped
 * and counted into `duplicates` by group.
 */
export async function appendNotFound(w: DuckDBConnection, rows: NotFoundRows, duplicates: Map<number, number>): Promise<void> {
  if (rows.kept.length === 0) return;
  if (!rows.keyed) {
    await appendTo(w, 'not_found', rows);
    return;
  }
  try {
    await appendTo(w, 'not_found_stage', rows);
    for (const r of await rowsOf(w, `SELECT grp, count(*) AS n FROM (${NUMBERED}) WHERE repeated GROUP BY grp`)) {
      duplicates.set(num(r.grp), (duplicates.get(num(r.grp)) ?? 0) + num(r.n));
    }
    await w.run(`INSERT INTO not_found SELECT project_key, ts, day, path, visitor, cls, referrer_host, import_key, grp, derived_visitor FROM (${NUMBERED}) WHERE NOT repeated`);
  } finally {
    await w.run('DELETE FROM temp.not_found_stage');
  }
}

/** One appender for the rows, in the table's column order (not_found and its stage share it). */
async function appendTo(w: DuckDBConnection, table: 'not_found' | 'not_found_stage', rows: NotFoundRows): Promise<void> {
  const ap = table === 'not_found' ? await w.createAppender(table) : await w.createAppender(table, 'main', 'temp');
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
