// How the ClickHouse engine talks to a server: three calls (rows of a SELECT, a statement, an insert of
// JSON rows). Servers use HTTP (@clickhouse/client); the tests also run the engine in-process on a
// current release through chdb's own API (test/analytics-clickhouse/chdb.ts). SQL text only: 18.16
// has no query parameters, so values go in through sql.ts.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import type { Sql } from './sql.ts';

export type Row = Record<string, unknown>;

export interface ClickHouseConnection {
  /** Where it is (for messages): `http://host:port` or `chdb`. */
  readonly where: string;
  /** Runs a SELECT and returns its rows (64-bit numbers may come back as strings). */
  rows(q: Sql, settings?: Record<string, string>): Promise<Row[]>;
  /** Runs a statement without result rows. */
  command(q: Sql, settings?: Record<string, string>): Promise<void>;
  /** Inserts rows given as objects into `table` (a quoted, database-qualified name). */
  insert(table: string, values: Row[], settings?: Record<string, string>): Promise<void>;
  close(): Promise<void>;
}

export interface Target {
  url: string;
  username?: string;
  password?: string;
  database: string;
}

/** Splits CLICKHOUSE_URL into the server address, credentials and database (the URL path). */
export function parseClickHouseUrl(url: string): Target {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('CLICKHOUSE_URL must start with http:// or https://.');
  const segments = u.pathname.split('/').filter((s) => s.length > 0);
  if (segments.length > 1) throw new Error(`CLICKHOUSE_URL must name at most one database in its path; got "${u.pathname}".`);
  const database = segments.length ? decodeURIComponent(segments[0]) : 'default';
  const t: Target = { url: `${u.protocol}//${u.host}`, database };
  if (u.username) t.username = decodeURIComponent(u.username);
  if (u.password) t.password = decodeURIComponent(u.password);
  return t;
}

/** A ClickHouse server over HTTP. */
export function httpConnection(t: Target, requestTimeoutMs = 600_000): ClickHouseConnection {
  const client: ClickHouseClient = createClient({
    url: t.url,
    username: t.username ?? 'default',
    password: t.password ?? '',
    // Long queries (months of a big site) keep the connection busy with progress headers, so
    // proxies and load balancers do not close it as idle (both settings exist on 18.16 too).
    request_timeout: requestTimeoutMs,
    max_open_connections: 16,
    compression: { request: false, response: false },
    clickhouse_settings: { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '10000' },
  });
  return {
    where: t.url,
    async rows(q, settings) {
      const rs = await client.query({ query: q.text, format: 'JSONEachRow', clickhouse_settings: settings });
      return (await rs.json()) as Row[];
    },
    async command(q, settings) {
      await client.command({ query: q.text, clickhouse_settings: settings });
    },
    async insert(table, values, settings) {
      await client.insert({ table, values, format: 'JSONEachRow', clickhouse_settings: settings });
    },
    close: () => client.close(),
  };
}
