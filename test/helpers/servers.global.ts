// Vitest global setup: says by name which server a leg needs when it is absent, once, before any
// suite runs. The default leg needs none (SQLite + DuckDB, and chdb in-process); the suites that
// need PostgreSQL or a ClickHouse server are skipped there with "(needs …)" in their names.
import pg from 'pg';
import { BACKEND, CLICKHOUSE_TEST_URL, PG_ADMIN_URL } from './backend.ts';

async function postgresProblem(): Promise<string | null> {
  const client = new pg.Client({ connectionString: PG_ADMIN_URL, connectionTimeoutMillis: 5_000 });
  try {
    await client.connect();
    await client.query('select 1');
    return null;
  } catch (err) {
    return (err as Error).message;
  } finally {
    await client.end().catch(() => {});
  }
}

async function clickHouseProblem(): Promise<string | null> {
  try {
    const u = new URL(CLICKHOUSE_TEST_URL);
    const res = await fetch(`${u.protocol}//${u.host}/ping`, { signal: AbortSignal.timeout(5_000) });
    return res.ok ? null : `HTTP ${res.status}`;
  } catch (err) {
    return (err as Error).message;
  }
}

export default async function setup(): Promise<void> {
  const problems: string[] = [];
  if (BACKEND === 'scale') {
    const pgProblem = await postgresProblem();
    if (pgProblem) {
      const where = new URL(PG_ADMIN_URL);
      problems.push(
        `FOLIO_TEST_BACKEND=scale needs PostgreSQL at ${where.host} (FOLIO_TEST_PG_URL): ${pgProblem}. ` +
          'Start it (.ci/run does), or unset FOLIO_TEST_BACKEND to run on SQLite + DuckDB.',
      );
    }
  }
  if (CLICKHOUSE_TEST_URL) {
    const chProblem = await clickHouseProblem();
    if (chProblem) {
      problems.push(
        `FOLIO_TEST_CLICKHOUSE_URL=${CLICKHOUSE_TEST_URL} needs a ClickHouse server: ${chProblem}. ` +
          'Start one with scripts/clickhouse-start.sh, or unset FOLIO_TEST_CLICKHOUSE_URL to skip the ClickHouse server suites.',
      );
    }
  }
  if (problems.length > 0) throw new Error(problems.join('\n'));
}
