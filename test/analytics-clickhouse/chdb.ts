// The ClickHouse engine on a current release: chdb runs ClickHouse 26.x in this process, and this is
// the engine's connection over chdb's own API (queries and inserts as SQL text and JSON rows, as the
// engine sends them over HTTP to a server). One session per test process, one database per engine.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Session } from 'chdb';
import type { ClickHouseConnection, Row } from '../../src/analytics/engines/clickhouse/connection.ts';
import { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import type { Sql } from '../../src/analytics/engines/clickhouse/sql.ts';

let session: Session | null = null;
let dir = '';

function open(): Session {
  if (!session) {
    dir = mkdtempSync(path.join(os.tmpdir(), 'folio-chdb-'));
    session = new Session(dir);
  }
  return session;
}

/** Closes the process's chdb session and removes its files (afterAll). */
export function closeChdb(): void {
  session?.close();
  session = null;
  if (dir) rmSync(dir, { recursive: true, force: true });
}

const setPrefix = (settings?: Record<string, string>) =>
  Object.entries(settings ?? {})
    .map(([k, v]) => `SET ${k} = ${/^\d+$/.test(v) ? v : `'${v}'`}; `)
    .join('');
/** A SET lasts for the session (over HTTP a setting is the request's own): put each back after its query. */
const resetAfter = async (s: Session, settings?: Record<string, string>) => {
  const keys = Object.keys(settings ?? {});
  if (keys.length > 0) await s.queryAsync(keys.map((k) => `SET ${k} = DEFAULT`).join('; '));
};

/** The engine's connection over chdb. */
export function chdbConnection(): ClickHouseConnection {
  const s = open();
  return {
    where: 'chdb',
    async rows(q: Sql, settings?: Record<string, string>): Promise<Row[]> {
      const text = (await s.queryAsync(setPrefix(settings) + q.text, { format: 'JSONEachRow' }).finally(() => resetAfter(s, settings))).text();
      return text
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => JSON.parse(l) as Row);
    },
    async command(q: Sql, settings?: Record<string, string>): Promise<void> {
      await s.queryAsync(setPrefix(settings) + q.text).finally(() => resetAfter(s, settings));
    },
    async insert(table: string, values: Row[]): Promise<void> {
      if (values.length === 0) return;
      // chdb's insert() accepts plain identifiers only; the engine's table names are quoted, so the rows go inline.
      await s.queryAsync(`INSERT INTO ${table} FORMAT JSONEachRow\n${values.map((v) => JSON.stringify(v)).join('\n')}`);
    },
    // The session is shared by the engines of the process; closeChdb ends it.
    close: async () => {},
  };
}

export function chdbVersion(): string {
  return open().query('SELECT version()', 'TSV').trim();
}

/** A ClickHouse engine on database `name` in the process's chdb session (folds take every row written). */
export function openChdbEngine(name: string): Promise<ClickHouseEngine> {
  return ClickHouseEngine.over(chdbConnection(), name, { foldMarginMs: 0 });
}
