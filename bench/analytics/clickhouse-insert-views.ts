// What the agents' views per path (agent_path_views_mv, migration 8) cost an insert on ClickHouse: two
// new stores, one as the migrations leave it and one without that materialized view, take the same
// generated events through the engine's write() (batches of 50,000, one INSERT each), alternately
// (ABBA, so load drifts cancel), and the time of each whole load is compared per round.
// Usage: node bench/analytics/clickhouse-insert-views.ts [--events 1000000] [--rounds 4] [--url http://127.0.0.1:8123]
import { randomBytes } from 'node:crypto';
import { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { median } from './compare.ts';
import { generateTraffic } from './generate.ts';
import { storedEvents } from './stored.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1];
};
const N = Number(arg('events', '1000000'));
const ROUNDS = Number(arg('rounds', '4'));
const SERVER = arg('url', process.env.FOLIO_BENCH_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123');
const BATCH = 50_000;

const traffic = generateTraffic({ events: N, days: 30 });
const batches = Array.from({ length: Math.ceil(N / BATCH) }, (_, i) => storedEvents(traffic, 'prj_bench', i * BATCH, (i + 1) * BATCH));
const stores = { with: `folio_bench_${randomBytes(4).toString('hex')}`, without: `folio_bench_${randomBytes(4).toString('hex')}` };
const open = (db: string) => ClickHouseEngine.open({ url: `${SERVER}/${db}`, foldMarginMs: 0 });
const times: Record<keyof typeof stores, number[]> = { with: [], without: [] };

/** One load of every batch into a store emptied first (its events and every table the views feed). */
async function load(which: keyof typeof stores): Promise<void> {
  const engine = await open(stores[which]);
  try {
    const tables = await engine.sql(`SELECT name FROM system.tables WHERE database = '${stores[which]}' AND engine LIKE '%MergeTree'`);
    for (const t of tables) await engine.exec(`TRUNCATE TABLE ${stores[which]}.${t.name}`);
    const t0 = performance.now();
    for (const b of batches) await engine.write(b);
    times[which].push(performance.now() - t0);
  } finally {
    await engine.close();
  }
}

try {
  for (const db of Object.values(stores)) await (await open(db)).close();
  const bare = await open(stores.without);
  await bare.exec(`DROP TABLE ${stores.without}.agent_path_views_mv`);
  await bare.close();
  for (let r = 0; r < ROUNDS; r++) {
    const order: (keyof typeof stores)[] = r % 2 === 0 ? ['with', 'without'] : ['without', 'with'];
    for (const w of order) await load(w);
  }
  const diffs = times.with.map((t, i) => t - times.without[i]);
  const ms = (a: number[]) => a.map((t) => Math.round(t)).join(' / ');
  console.log(`${N.toLocaleString()} events per load, ${ROUNDS} rounds ABBA (ms): with agent_path_views_mv ${ms(times.with)}; without ${ms(times.without)}`);
  console.log(`median: with ${Math.round(median(times.with))}, without ${Math.round(median(times.without))}; per round the difference ${ms(diffs)}, median ${Math.round(median(diffs))} ms (${((median(diffs) / median(times.without)) * 100).toFixed(1)}%)`);
} finally {
  const engine = await open(stores.with);
  for (const db of Object.values(stores)) await engine.exec(`DROP DATABASE IF EXISTS ${db}`);
  await engine.close();
}
