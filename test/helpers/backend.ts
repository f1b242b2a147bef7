// The backend matrix: FOLIO_TEST_BACKEND=sqlite (default) runs the suites on the embedded SQLite +
// DuckDB; FOLIO_TEST_BACKEND=scale runs the same suites on PostgreSQL (+ ClickHouse when
// FOLIO_TEST_CLICKHOUSE_URL is set), each test server on fresh databases.
import { randomBytes } from 'node:crypto';
import pg from 'pg';

export const BACKEND = (process.env.FOLIO_TEST_BACKEND ?? 'sqlite') as 'sqlite' | 'scale';
export const isScale = BACKEND === 'scale';
export const PG_ADMIN_URL = process.env.FOLIO_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
export const CLICKHOUSE_TEST_URL = process.env.FOLIO_TEST_CLICKHOUSE_URL ?? '';
/** In the names of suites that run only on the scale leg, so a skip says what it needs. */
export const NEEDS_POSTGRES = '(needs PostgreSQL: FOLIO_TEST_BACKEND=scale, server at FOLIO_TEST_PG_URL)';

export interface BackendDatabases {
  env: Record<string, string>;
  drop(): Promise<void>;
}

function withDatabase(url: string, db: string): string {
  const u = new URL(url);
  u.pathname = `/${db}`;
  return u.toString();
}

/** Fresh databases for one test server (nothing on SQLite: the data dir is fresh already). */
export async function backendDatabases(): Promise<BackendDatabases> {
  if (!isScale) return { env: {}, drop: async () => {} };
  const name = `folio_t_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: PG_ADMIN_URL });
  await admin.connect();
  await admin.query(`create database ${name}`);
  await admin.end();
  const env: Record<string, string> = { DATABASE_URL: withDatabase(PG_ADMIN_URL, name) };
  if (CLICKHOUSE_TEST_URL) env.CLICKHOUSE_URL = withDatabase(CLICKHOUSE_TEST_URL, name);
  return {
    env,
    async drop() {
      const c = new pg.Client({ connectionString: PG_ADMIN_URL });
      await c.connect();
      await c.query(`drop database if exists ${name} with (force)`).catch(() => {});
      await c.end();
      if (CLICKHOUSE_TEST_URL) {
        await fetch(CLICKHOUSE_TEST_URL, { method: 'POST', body: `DROP DATABASE IF EXISTS ${name}` }).catch(() => {});
      }
    },
  };
}
