// The analytics benchmark on ClickHouse, over the same generated traffic as bench/analytics/query.ts
// (DuckDB): ingest throughput through the engine's write() (the group-commit writer's call, batches
// of FOLIO_ANALYTICS_FLUSH_MAX = 50,000 events), then the visitors query (30 days, limit 50) beside
// ClickHouse's own (a) plain count(DISTINCT) (= uniqExact) over a raw events table of the same data and
// (b) the floor, a GROUP BY path row count on that raw table. Checks that every answer agrees exactly,
// and (unless --no-duckdb) that the DuckDB engine gives the identical answer on the same events. One
// human session in 3 is referred (generate.ts; later views carry the site's own host, no referrer):
// the referrers and AI-companies reports are timed round-robin with the visitors query beside their
// naive uniqExact over the raw events (the raw-event path), answers checked identical; the job-impact
// report of query.ts's job beside them (its answer checked against DuckDB's unless --no-duckdb).
// Usage: node bench/analytics-clickhouse.ts --events 1000000 [--runs 5] [--url http://127.0.0.1:8123] [--no-duckdb] [--database name --keep]
import { randomBytes } from 'node:crypto';
import { ClassificationRules } from '../src/analytics/classify.ts';
import { SOURCE, type StoredEvent } from '../src/analytics/engine.ts';
import { CLASS_CODE } from '../src/analytics/traffic-class.ts';
import { ClickHouseEngine } from '../src/analytics/engines/clickhouse/index.ts';
import { DuckDbEngine } from '../src/analytics/engines/duckdb/index.ts';
import { generateTraffic, OWN_HOST, REFERRER_HOSTS, USER_AGENTS } from './analytics/generate.ts';
import { ownHostsOf } from '../src/analytics/own-hosts.ts';
import { aiCompanies, clickhouseFromEvents as aiCompaniesFromEvents } from '../src/analytics/reports/ai-companies.ts';
import { referrers, clickhouseFromEvents as referrersFromEvents } from '../src/analytics/reports/referrers.ts';
import { compareVisitors, median, roundRobin, timed } from './analytics/compare.ts';
import { agents } from '../src/analytics/reports/agents.ts';
import { jobImpact } from '../src/analytics/reports/job-impact.ts';
import { jobImpactAsked } from './analytics/job-impact.ts';
import { timeseries } from '../src/analytics/reports/timeseries.ts';
import { views } from '../src/analytics/reports/views.ts';
import { visitors } from '../src/analytics/reports/visitors.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1];
};
const N = Number(arg('events', '1000000'));
const RUNS = Number(arg('runs', '5'));
const BATCH = Number(arg('batch', '50000'));
const SERVER = arg('url', process.env.FOLIO_BENCH_CLICKHOUSE_URL ?? 'http://127.0.0.1:8123');
const WITH_DUCKDB = !process.argv.includes('--no-duckdb');
const KEEP = process.argv.includes('--keep'); // keep the database afterwards (to explore the data with clickhouse-client)
const PROJECT = 'prj_bench';
const RULES = ClassificationRules.load();
const DAY = 86_400_000;

const mib = (b: number) => `${(b / 1048576).toFixed(1)} MiB`;

const database = arg('database', `folio_bench_${randomBytes(4).toString('hex')}`);
const url = new URL(SERVER);
url.pathname = `/${database}`;
// Folds take every row written (no margin for inserts in flight: this process is the only writer).
const engine = await ClickHouseEngine.open({ url: url.toString(), foldMarginMs: 0 });
try {
  const version = (await engine.sql('SELECT version() AS v'))[0].v;
  let t0 = performance.now();
  const traffic = generateTraffic({ events: N, days: 30 });
  console.log(`ClickHouse ${version}; generated ${N.toLocaleString()} events (${traffic.visitors.toLocaleString()} identities) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const classes = USER_AGENTS.map((ua) => RULES.classifyUserAgent(ua));
  // Visitor ids: a 63-bit mix of the identity (what the keyed hash gives), as in bench/analytics/query.ts.
  const vid = (v: number) => (BigInt(Math.imul(v, 0x9e3779b1) >>> 0) << 31n) ^ BigInt(v);
  const batches: StoredEvent[][] = [];
  for (let s = 0; s < N; s += BATCH) {
    const batch: StoredEvent[] = [];
    for (let k = s; k < Math.min(N, s + BATCH); k++) {
      const c = classes[traffic.ua[k]];
      batch.push({ projectId: PROJECT, ts: traffic.ts[k], path: traffic.paths[traffic.path[k]], visitor: vid(traffic.visitor[k]), cls: CLASS_CODE[c.class], agent: c.agent, referrer: traffic.referrer[k] < 0 ? null : REFERRER_HOSTS[traffic.referrer[k]], source: SOURCE.api, importKey: null, group: 0 });
    }
    batches.push(batch);
  }

  t0 = performance.now();
  for (const b of batches) await engine.write(b);
  const loadS = (performance.now() - t0) / 1000;
  console.log(`ingest: ${N.toLocaleString()} events in ${loadS.toFixed(1)} s = ${Math.round(N / loadS).toLocaleString()} events/s (write() batches of ${BATCH.toLocaleString()}, one INSERT each)`);
  t0 = performance.now();
  await engine.compact();
  console.log(`fold into the first-seen layout: ${((performance.now() - t0) / 1000).toFixed(1)} s (in production a server folds every 10 s what is older than a minute)`);

  // The raw events table of the same data: one row per view, path as text, ordered by time.
  await engine.exec(`CREATE TABLE ${database}.raw (ts UInt64, path String, visitor UInt64, kind UInt8) ENGINE = MergeTree ORDER BY ts`);
  await engine.exec(`INSERT INTO ${database}.raw SELECT ts, path, visitor, cls FROM ${database}.events`);

  const sizes = await engine.sql(`SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes, count() AS parts FROM system.parts
    WHERE database = '${database}' AND active GROUP BY table ORDER BY table`);
  for (const s of sizes) console.log(`  table ${String(s.table).padEnd(10)} ${Number(s.rows).toLocaleString().padStart(11)} rows  ${mib(Number(s.bytes)).padStart(10)} on disk  ${s.parts} parts`);

  const from = traffic.start;
  const to = traffic.start + 30 * DAY;
  const where = `ts >= ${from} AND ts < ${to} AND kind <= 2`;
  const sqlA = [
    `SELECT path, uniqExactIf(visitor, kind = 1) AS h, uniqExactIf(visitor, kind = 2) AS a, count(DISTINCT visitor) AS t
     FROM ${database}.raw WHERE ${where} GROUP BY path ORDER BY t DESC, path LIMIT 50`,
    `SELECT uniqExactIf(visitor, kind = 1) AS h, uniqExactIf(visitor, kind = 2) AS a, count(DISTINCT visitor) AS t FROM ${database}.raw WHERE ${where}`,
  ];
  const sqlB = `SELECT path, count() AS c FROM ${database}.raw WHERE ${where} GROUP BY path ORDER BY c DESC, path LIMIT 50`;
  const ours = () => engine.run(visitors, { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0 });
  const plain = async () => [await engine.sql(sqlA[0]), await engine.sql(sqlA[1])] as [Record<string, unknown>[], Record<string, unknown>[]];

  // Exactness: Folio's answer equals the plain count(DISTINCT) answer (and DuckDB's, below).
  const { same, totals, m } = await compareVisitors(ours, plain, () => engine.sql(sqlB), RUNS);
  console.log(`exact: ${same ? 'yes, identical to count(DISTINCT)' : 'NO — MISMATCH'}; totals ${JSON.stringify(totals)}`);
  if (!same) process.exitCode = 1;
  console.log(`\nvisitors query, 30 days, limit 50 — median of ${RUNS} (ms):`);
  console.log(`  Folio on ClickHouse (first-seen rows):  ${m.ours.toFixed(0)}`);
  console.log(`  (a) count(DISTINCT) on raw events:      ${m.a.toFixed(0)}   → Folio is ${(m.a / m.ours).toFixed(1)}× faster (target ≥ 3×)`);
  console.log(`  (b) GROUP BY path count on raw:         ${m.b.toFixed(0)}   → Folio is ${(m.ours / m.b).toFixed(1)}× the floor`);

  const week = { from: traffic.start + 10 * DAY, to: traffic.start + 17 * DAY };
  const partial = { from: traffic.start + 10 * DAY + 3_600_000, to: traffic.start + 17 * DAY - 3_600_000 };
  const wk: number[] = [];
  const pt: number[] = [];
  const vw: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    wk.push((await timed(() => engine.run(visitors, { projectId: PROJECT, range: week, limit: 50, offset: 0 })))[0]);
    pt.push((await timed(() => engine.run(visitors, { projectId: PROJECT, range: partial, limit: 50, offset: 0 })))[0]);
    vw.push((await timed(() => engine.run(views, { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0 })))[0]);
  }
  console.log(`  Folio, 7 whole days:                    ${median(wk).toFixed(0)}`);
  console.log(`  Folio, 7 days with hour bounds:         ${median(pt).toFixed(0)}   (whole days + raw events at the edges)`);
  console.log(`  Folio views query, 30 days:             ${median(vw).toFixed(0)}`);

  // The referrers and AI-companies reports vs their naive uniqExact over the same events, round-robin,
  // each report right after a run of the visitors query: its ratio is the median of those pairs' ratios.
  const own = ownHostsOf([`https://${OWN_HOST}`]);
  const params = { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0, ownHosts: own, rules: RULES };
  console.log(`\nreferred visitors by class: ${JSON.stringify((await engine.run(referrers, params)).classes)}`);
  const job = jobImpactAsked(traffic.paths, traffic.start);
  const timings: Record<string, () => Promise<unknown>> = {
    visitors: () => engine.run(visitors, params),
    referrers: () => engine.run(referrers, params),
    referrersNaive: () => engine.run({ ...referrers, clickhouse: (db) => referrersFromEvents(db, PROJECT, params.range, own, RULES.sources, params) }, params),
    aiCompanies: () => engine.run(aiCompanies, params),
    aiCompaniesNaive: () => engine.run({ ...aiCompanies, clickhouse: (db) => aiCompaniesFromEvents(db, params) }, params),
    // One company per path (?company=OpenAI).
    aiPerPath: () => engine.run(aiCompanies, { ...params, company: 'OpenAI' }),
    aiPerPathNaive: () => engine.run({ ...aiCompanies, clickhouse: (db) => aiCompaniesFromEvents(db, { ...params, company: 'OpenAI' }) }, { ...params, company: 'OpenAI' }),
    // The job of query.ts (5 pages, 14 days either side); checked against DuckDB's answer below (no naive here).
    jobImpact: () => engine.run(jobImpact, { ...params, ...job }),
  };
  const { t, ratio, identical } = await roundRobin(timings, RUNS);
  if (!identical) process.exitCode = 1;
  const med = (k: string) => median(t[k]);
  console.log(`  ${JSON.stringify(t, (_k, v) => (typeof v === 'number' ? Math.round(v) : v))}`);
  console.log(`  each report over the visitors query run just before it: ${JSON.stringify(ratio, (_k, v) => (typeof v === 'number' ? Number(v.toFixed(2)) : v))}`);
  console.log(`exact: ${identical ? 'yes, the three reports identical to their raw-event SQL' : 'NO — MISMATCH'}; round-robin, median of ${RUNS} (ms): visitors ${med('visitors').toFixed(0)}`);
  for (const [name, label] of [
    ['referrers', 'referrers report (hosts, classes, AI share per day)'],
    ['aiCompanies', 'AI-companies report (crawls, assistants, humans sent, per company)'],
    ['aiPerPath', 'AI-companies report per path of one company (?company=OpenAI; naive: the events narrowed to its views)'],
  ]) {
    console.log(`  ${label}: ${med(name).toFixed(0)}   → ${median(ratio[name]).toFixed(2)}× the visitors query, median of the pairs (target ≤ 1.5×; ${(med(name) / med('visitors')).toFixed(2)}× of the medians); naive uniqExact ${med(name + 'Naive').toFixed(0)} → ${(med(name + 'Naive') / med(name)).toFixed(1)}× faster (target ≥ 3×)`);
  }
  console.log(`  job-impact report (5 pages, per page and total, 14 days either side; day tables): ${med('jobImpact').toFixed(0)}   → ${median(ratio.jobImpact).toFixed(2)}× the visitors query, median of the pairs (target ≤ 1.5×; ${(med('jobImpact') / med('visitors')).toFixed(2)}× of the medians)`);

  if (WITH_DUCKDB) {
    const duck = await DuckDbEngine.open({ file: ':memory:' });
    t0 = performance.now();
    for (const bt of batches) await duck.write(bt);
    await duck.compact();
    const duckLoad = (performance.now() - t0) / 1000;
    const ranges = [{ from, to }, week, partial, { from: null, to: null }];
    let agree = true;
    for (const r of ranges) {
      for (const page of [{ limit: 50, offset: 0 }, { limit: 100, offset: 1000 }]) {
        const [x, y] = [await engine.run(visitors, { projectId: PROJECT, range: r, ...page }), await duck.run(visitors, { projectId: PROJECT, range: r, ...page })];
        if (JSON.stringify(x) !== JSON.stringify(y)) agree = false;
        const [vx, vy] = [await engine.run(views, { projectId: PROJECT, range: r, ...page }), await duck.run(views, { projectId: PROJECT, range: r, ...page })];
        if (JSON.stringify(vx) !== JSON.stringify(vy)) agree = false;
      }
      if (JSON.stringify(await engine.run(agents, { projectId: PROJECT, range: r })) !== JSON.stringify(await duck.run(agents, { projectId: PROJECT, range: r }))) agree = false;
      if (JSON.stringify(await engine.run(timeseries, { projectId: PROJECT, range: r, interval: 'day' })) !== JSON.stringify(await duck.run(timeseries, { projectId: PROJECT, range: r, interval: 'day' }))) agree = false;
    }
    if (JSON.stringify(await engine.run(jobImpact, { ...params, ...job })) !== JSON.stringify(await duck.run(jobImpact, { ...params, ...job }))) agree = false;
    console.log(`\nDuckDB engine on the same events (in memory, stored + compacted in ${duckLoad.toFixed(1)} s): answers ${agree ? 'identical' : 'DIFFERENT — MISMATCH'} (visitors, views, agents, timeseries on 4 ranges; the job impact)`);
    if (!agree) process.exitCode = 1;
    await duck.close();
  }
  console.log(`\npeak RSS of the Node process ${mib(process.resourceUsage().maxRSS * 1024)}`);
} finally {
  if (KEEP) console.log(`kept database ${database}`);
  else await engine.dropDatabase().catch(() => {});
  await engine.close();
}
