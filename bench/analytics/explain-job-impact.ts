// Where the job-impact report's time goes: the bench's job (job-impact.ts) on query.ts's data, each
// of the report's queries run as it is and then under EXPLAIN ANALYZE (DuckDB's profile, printed).
// Usage: node bench/analytics/explain-job-impact.ts --events 10000000
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import type { DuckDbReads } from '../../src/analytics/engines/duckdb/reads.ts';
import { ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { jobImpact } from '../../src/analytics/reports/job-impact.ts';
import { timed } from './compare.ts';
import { generateTraffic, OWN_HOST } from './generate.ts';
import { jobImpactAsked } from './job-impact.ts';
import { loadEngine } from './loaded.ts';

const i = process.argv.indexOf('--events');
const N = Number(i === -1 ? '1000000' : process.argv[i + 1]);
const PROJECT = 'prj_bench';

/** The connection with each query timed, then profiled (the profile's text printed). */
const profiling = (c: DuckDBConnection) =>
  new Proxy(c, {
    get(target, prop, receiver) {
      if (prop !== 'runAndReadAll') return Reflect.get(target, prop, receiver);
      return async (sql: string) => {
        const [ms, out] = await timed(() => target.runAndReadAll(sql));
        const plan = (await target.runAndReadAll(`EXPLAIN ANALYZE ${sql}`)).getRowObjectsJS();
        console.log(`\n--- ${ms.toFixed(0)} ms: ${sql.replace(/\s+/g, ' ').slice(0, 300)}…\n${plan.map((r) => String(r.explain_value)).join('\n')}`);
        return out;
      };
    },
  });

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-x-'));
try {
  const traffic = generateTraffic({ events: N, days: 30 });
  const { engine } = await loadEngine(path.join(dir, 'analytics.duckdb'), traffic, PROJECT);
  const params = { projectId: PROJECT, range: { from: null, to: null }, ownHosts: ownHostsOf([`https://${OWN_HOST}`]), rules: ClassificationRules.load(), ...jobImpactAsked(traffic.paths, traffic.start) };
  await engine.run(jobImpact, params);
  const explained = (db: DuckDbReads) => ({ projectKey: (p: string) => db.projectKey(p), pending: db.pending, readers: { use: <T>(fn: (c: DuckDBConnection) => Promise<T>) => db.readers.use((c) => fn(profiling(c))) } }) as unknown as DuckDbReads;
  const [ms] = await timed(() => engine.run({ ...jobImpact, duckdb: (db, p) => jobImpact.duckdb(explained(db), p) }, params));
  console.log(`\nthe report with its queries profiled: ${ms.toFixed(0)} ms`);
  await engine.close();
} finally {
  rmSync(dir, { recursive: true, force: true });
}
