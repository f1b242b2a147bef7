// Shared helpers of the ClickHouse suites: each test file works on its own fresh database on the
// server named by FOLIO_TEST_CLICKHOUSE_URL and drops it afterwards.
import { randomBytes } from 'node:crypto';
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';

export const CLICKHOUSE_URL = process.env.FOLIO_TEST_CLICKHOUSE_URL ?? '';
export const NEEDS = '(needs FOLIO_TEST_CLICKHOUSE_URL, e.g. http://127.0.0.1:8123 after scripts/clickhouse-start.sh)';

/** The URL of a database on the test server. */
export function databaseUrl(database: string): string {
  const u = new URL(CLICKHOUSE_URL);
  u.pathname = `/${database}`;
  return u.toString();
}

export function freshName(prefix = 'folio_cht'): string {
  return `${prefix}_${randomBytes(6).toString('hex')}`;
}

/** Fails with a clear message when the server does not answer (instead of a wall of socket errors). */
export async function requireClickHouse(): Promise<void> {
  const u = new URL(CLICKHOUSE_URL);
  const c = createClient({ url: `${u.protocol}//${u.host}`, username: decodeURIComponent(u.username) || 'default', password: decodeURIComponent(u.password) });
  try {
    const r = await c.ping();
    if (!r.success) throw r.error;
  } catch (err) {
    throw new Error(
      `ClickHouse is not answering at ${u.protocol}//${u.host} (FOLIO_TEST_CLICKHOUSE_URL is set): start it with scripts/clickhouse-start.sh, ` +
        `or unset FOLIO_TEST_CLICKHOUSE_URL to skip these suites. Cause: ${(err as Error).message}`,
    );
  } finally {
    await c.close();
  }
}

/** A raw client on the server (no database selected), for checks beside the engine. */
export function serverClient(): ClickHouseClient {
  const u = new URL(CLICKHOUSE_URL);
  return createClient({ url: `${u.protocol}//${u.host}`, username: decodeURIComponent(u.username) || 'default', password: decodeURIComponent(u.password) });
}

/** Drops a database of the test server (after a test file). */
export async function dropDatabase(database: string): Promise<void> {
  const c = serverClient();
  try {
    await c.command({ query: `DROP DATABASE IF EXISTS \`${database}\`` });
  } finally {
    await c.close();
  }
}

export async function openEngine(database: string): Promise<ClickHouseEngine> {
  return ClickHouseEngine.open({ url: databaseUrl(database), foldMarginMs: 0 });
}
