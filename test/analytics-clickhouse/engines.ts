// The three engines a report's exactness is checked on: DuckDB, a ClickHouse server (when
// FOLIO_TEST_CLICKHOUSE_URL is set) and ClickHouse in-process (chdb).
import { rmSync } from 'node:fs';
import path from 'node:path';
import type { AnalyticsEngine } from '../../src/analytics/engine.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import { tempDir } from '../helpers/server.ts';
import { closeChdb, openChdbEngine } from './chdb.ts';
import { CLICKHOUSE_URL, dropDatabase, NEEDS, openEngine, requireClickHouse } from './helpers.ts';

export interface Backend {
  name: string;
  skip: boolean;
  open(store: string): Promise<AnalyticsEngine>;
  drop(store: string): Promise<void>;
}

/** DuckDB keeps the rows per path of the hosts the analytics service keeps: the built-in lists' AI assistants. */
const SERVICE_PATH_HOSTS = duckdbPathHosts(ClassificationRules.load().sources);

/** The engines, DuckDB's files in a folder of their own; `cleanup` (in afterAll) closes chdb and removes it. */
export function threeEngines(prefix: string): { backends: Backend[]; cleanup(): void } {
  const duckDir = tempDir(prefix);
  return {
    backends: [
      { name: 'DuckDB', skip: false, open: (store) => DuckDbEngine.open({ file: path.join(duckDir, `${store}.duckdb`), readConnections: 1, pathHosts: SERVICE_PATH_HOSTS }), drop: async () => {} },
      { name: `ClickHouse server ${NEEDS}`, skip: !CLICKHOUSE_URL, open: async (store) => (await requireClickHouse(), openEngine(store)), drop: dropDatabase },
      { name: 'ClickHouse 26.x in-process (chdb)', skip: false, open: openChdbEngine, drop: async () => {} },
    ],
    cleanup() {
      closeChdb();
      rmSync(duckDir, { recursive: true, force: true });
    },
  };
}
