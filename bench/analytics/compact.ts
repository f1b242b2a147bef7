// Compaction cost on the DuckDB engine: generated traffic written in N chunks, each compacted (as the
// server's timer does), into a fresh file per run. Prints the total compaction time, per event, and
// the process's CPU time during the compactions (all threads: less swayed by other processes than wall time).
// With several trees (--tree, repeatable) the runs alternate between them, so a noisy moment does not
// land on one side, and the first-seen tables each tree leaves are checked identical (a hash per table).
// Usage: node bench/analytics/compact.ts [--events 1000000] [--chunks 10] [--runs 5] [--order generated|time] [--tree DIR]...
//   --tree DIR   the engine of another checkout (e.g. /work/main, the code before a change); default this one
//   --order      generated: sessions in random order across the 30 days (late rows); time: time-ordered
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { median } from './compare.ts';
import { generateTraffic, timeOrder } from './generate.ts';
import { storedEvents } from './stored.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '1000000' },
    chunks: { type: 'string', default: '10' },
    runs: { type: 'string', default: '5' },
    order: { type: 'string', default: 'generated' },
    tree: { type: 'string', multiple: true },
  },
});
const N = Number(values.events);
const CHUNKS = Number(values.chunks);
const RUNS = Number(values.runs);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TREES = (values.tree ?? [ROOT]).map((t) => path.resolve(t));
const PROJECT = 'prj_bench';
const TABLES = ['daily', 'daily_site', 'daily_keys', 'daily_path_keys', 'daily_agents'];

interface Engine {
  write(events: unknown[]): Promise<unknown>;
  compact(): Promise<void>;
  sql(q: string): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}
type Open = (opts: { file: string }) => Promise<Engine>;

const traffic = generateTraffic({ events: N, days: 30 });
const order = values.order === 'time' ? timeOrder(traffic) : undefined;
const size = Math.ceil(N / CHUNKS);
const chunks = Array.from({ length: CHUNKS }, (_, c) => storedEvents(traffic, PROJECT, c * size, (c + 1) * size, order));

/** Writes every chunk and compacts after each into a fresh file; returns the compaction time (ms) and the tables' hashes. */
async function run(open: Open): Promise<{ ms: number; cpu: number; per: number[]; tables: Map<string, string> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-compact-'));
  try {
    const engine = await open({ file: path.join(dir, 'analytics.duckdb') });
    const per: number[] = [];
    let cpu = 0;
    for (const chunk of chunks) {
      await engine.write(chunk);
      const [t0, c0] = [performance.now(), process.cpuUsage()];
      await engine.compact();
      per.push(performance.now() - t0);
      const c = process.cpuUsage(c0);
      cpu += (c.user + c.system) / 1000;
    }
    // Rows and a hash of each table the tree's layout has (a tree from before a table was added lacks it).
    const tables = new Map<string, string>();
    const present = new Set((await engine.sql('SELECT table_name FROM duckdb_tables()')).map((r) => String(r.table_name)));
    for (const t of TABLES.filter((t) => present.has(t))) {
      const r = (await engine.sql(`SELECT count(*) AS n, sum(hash(d))::VARCHAR AS h FROM ${t} d`))[0];
      tables.set(t, `${r.n} rows, hash ${r.h}`);
    }
    await engine.close();
    return { ms: per.reduce((a, b) => a + b, 0), cpu, per, tables };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const opens: Open[] = [];
for (const tree of TREES) opens.push((await import(path.join(tree, 'src/analytics/engines/duckdb/index.ts'))).DuckDbEngine.open);
const times: number[][] = TREES.map(() => []);
const cpus: number[][] = TREES.map(() => []);
const tables: Map<string, string>[] = TREES.map(() => new Map());
console.log(`${N.toLocaleString()} events (${values.order} order) in ${CHUNKS} chunks, each compacted; ${RUNS} runs per tree, alternating`);
for (let r = 0; r < RUNS; r++) {
  for (let i = 0; i < TREES.length; i++) {
    const res = await run(opens[i]);
    times[i].push(res.ms);
    cpus[i].push(res.cpu);
    tables[i] = res.tables;
    console.log(`  run ${r + 1} ${TREES[i]}: ${res.ms.toFixed(0)} ms, CPU ${res.cpu.toFixed(0)} ms (per chunk: ${res.per.map((x) => x.toFixed(0)).join(' ')})`);
  }
}
for (let i = 0; i < TREES.length; i++) {
  const [m, c] = [median(times[i]), median(cpus[i])];
  const vs = (x: number, first: number[]) => (i > 0 ? ` (${(x / median(first)).toFixed(2)}× the first tree)` : '');
  console.log(`${TREES[i]}: compaction median ${m.toFixed(0)} ms${vs(m, times[0])}, ${((m * 1000) / N).toFixed(2)} µs per event; CPU (all threads) ${c.toFixed(0)} ms${vs(c, cpus[0])}`);
}
let differ = false;
for (const t of TABLES) {
  const seen = tables.map((m) => m.get(t)).filter((h) => h !== undefined);
  const same = seen.every((h) => h === seen[0]);
  if (!same) differ = true;
  console.log(`${t}: ${same ? seen[0] : `DIFFER — ${seen.join(' / ')}`}${seen.length < TREES.length ? ` (in ${seen.length} of ${TREES.length} trees)` : ''}`);
}
if (differ) {
  console.log('first-seen tables DIFFER between trees — MISMATCH');
  process.exitCode = 1;
} else if (TREES.length > 1) console.log('tables identical across the trees that have them');
