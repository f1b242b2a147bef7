// The visitors query (30-day range, limit 50) on Folio's layout, measured in the same run beside
// (a) a plain DuckDB COUNT(DISTINCT …) over a raw events table of the same data and (b) the floor,
// a GROUP BY path row count on that raw table. Checks that all answers agree exactly. One view in 50
// is a not-found view (404) and 1 in 3 human sessions is referred (generate.ts; later views of a
// session carry the site's own host, which is no referrer): the not-found report, and the referrers
// and AI-companies reports beside their naive COUNT(DISTINCT) over the same events (the raw-event
// path, answers checked identical), are timed in the same run as the visitors query. So is the
// job-impact report for a job of 5 pages merged mid-range (jobImpactAsked below), checked against the
// same counts by one plain COUNT(DISTINCT) query per page (job-impact-naive.ts).
// Last, the store is opened again with other lists' AI assistants: the refold of its per-path host rows.
// Usage: node bench/analytics/query.ts --events 10000000 [--runs 5]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { generateTraffic, OWN_HOST } from './generate.ts';
import { ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { duckdbFromEvents as aiCompaniesFromEvents } from '../../src/analytics/reports/ai-companies.ts';
import { duckdbFromEvents as referrersFromEvents } from '../../src/analytics/reports/referrers.ts';
import { compareVisitors, median, roundRobin, timed } from './compare.ts';
import { aiCompanies } from '../../src/analytics/reports/ai-companies.ts';
import { jobImpact } from '../../src/analytics/reports/job-impact.ts';
import { jobImpactAsked, naiveJobImpact } from './job-impact.ts';
import { loadEngine } from './loaded.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { ALL_PATH_HOSTS, type PathHosts } from '../../src/analytics/engines/duckdb/state.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import { KEY_KIND } from '../../src/analytics/traffic-class.ts';
import { notFound } from '../../src/analytics/reports/not-found.ts';
import { referrers } from '../../src/analytics/reports/referrers.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1];
};
const N = Number(arg('events', '1000000'));
const RUNS = Number(arg('runs', '5'));
const PROJECT = 'prj_bench';
const RULES = ClassificationRules.load();
const DAY = 86_400_000;

const mib = (b: number) => `${Math.round(b / 1048576)} MiB`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-q-'));
try {
  const t0 = performance.now();
  const traffic = generateTraffic({ events: N, days: 30 });
  console.log(`generated ${N.toLocaleString()} events (${traffic.visitors.toLocaleString()} identities) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);

  const { engine, loadS, compactS } = await loadEngine(path.join(dir, 'analytics.duckdb'), traffic, PROJECT);
  const counts = (await engine.sql(`SELECT (SELECT count(*) FROM events) AS events, (SELECT count(*) FROM daily) AS daily, (SELECT count(*) FROM daily_site) AS site`))[0];
  console.log(`stored in ${loadS.toFixed(1)} s, compacted in ${compactS.toFixed(1)} s: ${counts.events} events → ${counts.daily} daily rows, ${counts.site} site rows`);

  // The raw events table of the same data: one row per view, path as text, ordered by time.
  await engine.sql(`CREATE TABLE raw AS SELECT e.ts, p.path, e.visitor, e.cls AS kind FROM events e JOIN paths p ON p.path_id = e.path_id ORDER BY e.ts`);

  const from = traffic.start;
  const to = traffic.start + 30 * DAY;
  const where = `ts >= ${from} AND ts < ${to} AND kind <= 2`;
  const sqlA = [
    `SELECT path, count(DISTINCT visitor) FILTER (WHERE kind = 1) AS h, count(DISTINCT visitor) FILTER (WHERE kind = 2) AS a, count(DISTINCT visitor) AS t
     FROM raw WHERE ${where} GROUP BY path ORDER BY t DESC, path LIMIT 50`,
    `SELECT count(DISTINCT visitor) FILTER (WHERE kind = 1) AS h, count(DISTINCT visitor) FILTER (WHERE kind = 2) AS a, count(DISTINCT visitor) AS t FROM raw WHERE ${where}`,
  ];
  const sqlB = `SELECT path, count(*) AS c FROM raw WHERE ${where} GROUP BY path ORDER BY c DESC, path LIMIT 50`;

  const ours = () => engine.run(visitors, { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0 });
  const plain = async () => [await engine.sql(sqlA[0]), await engine.sql(sqlA[1])] as [Record<string, unknown>[], Record<string, unknown>[]];
  const { same, totals, times, m } = await compareVisitors(ours, plain, () => engine.sql(sqlB), RUNS);
  console.log(`exact: ${same ? 'yes, identical to COUNT(DISTINCT)' : 'NO — MISMATCH'}; totals ${JSON.stringify(totals)}`);
  if (!same) process.exitCode = 1;
  console.log(JSON.stringify(times, (_k, v) => (typeof v === 'number' ? Math.round(v) : v)));
  console.log(`\nvisitors query, 30 days, limit 50 — median of ${RUNS} (ms):`);
  console.log(`  Folio (first-seen day layout):       ${m.ours.toFixed(0)}`);
  console.log(`  (a) COUNT(DISTINCT) on raw events:   ${m.a.toFixed(0)}   → Folio is ${(m.a / m.ours).toFixed(1)}× faster (target ≥ 3×)`);
  console.log(`  (b) GROUP BY path count on raw:      ${m.b.toFixed(0)}   → Folio is ${(m.ours / m.b).toFixed(1)}× the floor (target ≤ 5×)`);

  // For reference: other ranges on the same data.
  const week = { from: traffic.start + 10 * DAY, to: traffic.start + 17 * DAY };
  const partial = { from: traffic.start + 10 * DAY + 3_600_000, to: traffic.start + 17 * DAY - 3_600_000 };
  const wk: number[] = [];
  const pt: number[] = [];
  for (let r = 0; r < RUNS; r++) {
    wk.push((await timed(() => engine.run(visitors, { projectId: PROJECT, range: week, limit: 50, offset: 0 })))[0]);
    pt.push((await timed(() => engine.run(visitors, { projectId: PROJECT, range: partial, limit: 50, offset: 0 })))[0]);
  }
  console.log(`  Folio, 7 whole days:                 ${median(wk).toFixed(0)}`);
  console.log(`  Folio, 7 days with hour bounds:      ${median(pt).toFixed(0)}   (general path: whole days + raw edges, hash distinct)`);
  const nf: number[] = [];
  let nfPaths = 0;
  for (let r = 0; r < RUNS; r++) {
    const [ms, report] = await timed(() => engine.run(notFound, { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0 }));
    nf.push(ms);
    nfPaths = report.rows.length;
  }
  const stored = (await engine.sql('SELECT count(*) AS n FROM not_found'))[0].n;
  console.log(`  not-found report (${stored} not-found views, ${nfPaths} paths on the page): ${median(nf).toFixed(0)}   → ${(median(nf) / m.ours).toFixed(2)}× the visitors query`);
  // The referrers and AI-companies reports vs their naive COUNT(DISTINCT) over the same events, alternating.
  const own = ownHostsOf([`https://${OWN_HOST}`]);
  const params = { projectId: PROJECT, range: { from, to }, limit: 50, offset: 0, ownHosts: own, rules: RULES };
  const pk = Number((await engine.sql(`SELECT project_key FROM projects WHERE project_id = '${PROJECT}'`))[0].project_key);
  const job = jobImpactAsked(traffic.paths, traffic.start);
  console.log(`  job impact (5 pages, merged ${new Date(job.at).toISOString()}, 14 days): total ${JSON.stringify((await engine.run(jobImpact, { ...params, ...job })).total)}`);
  console.log(`  referred visitors by class: ${JSON.stringify((await engine.run(referrers, params)).classes)}`);
  // Timed round-robin, each report right after a run of the visitors query: its ratio is the median
  // of those pairs' ratios, times taken under the same load.
  const timings: Record<string, () => Promise<unknown>> = {
    visitors: () => engine.run(visitors, params),
    referrers: () => engine.run(referrers, params),
    referrersNaive: () => engine.run({ ...referrers, duckdb: (db) => referrersFromEvents(db, pk, params.range, own, RULES.sources, params) }, params),
    aiCompanies: () => engine.run(aiCompanies, params),
    aiCompaniesNaive: () => engine.run({ ...aiCompanies, duckdb: (db) => aiCompaniesFromEvents(db, pk, params) }, params),
    // One company per path (?company=OpenAI).
    aiPerPath: () => engine.run(aiCompanies, { ...params, company: 'OpenAI' }),
    aiPerPathNaive: () => engine.run({ ...aiCompanies, duckdb: (db) => aiCompaniesFromEvents(db, pk, { ...params, company: 'OpenAI' }) }, { ...params, company: 'OpenAI' }),
    jobImpact: () => engine.run(jobImpact, { ...params, ...job }),
    jobImpactNaive: () => engine.run({ ...jobImpact, duckdb: (db) => naiveJobImpact(db, { pk, ...job, ownHosts: own, rules: RULES }) }, { ...params, ...job }),
  };
  const { t, ratio, identical } = await roundRobin(timings, RUNS);
  if (!identical) process.exitCode = 1;
  const med = (k: string) => median(t[k]);
  console.log(`  ${JSON.stringify(t, (_k, v) => (typeof v === 'number' ? Math.round(v) : v))}`);
  console.log(`  each report over the visitors query run just before it: ${JSON.stringify(ratio, (_k, v) => (typeof v === 'number' ? Number(v.toFixed(2)) : v))}`);
  console.log(`  exact: ${identical ? 'yes, every report identical to its naive COUNT(DISTINCT)' : 'NO — MISMATCH'}`);
  console.log(`  round-robin, median of ${RUNS} (ms): visitors ${med('visitors').toFixed(0)}`);
  const labels = [
    ['referrers', 'referrers report (hosts, classes, AI share per day)'],
    ['aiCompanies', 'AI-companies report (crawls, assistants, humans sent, per company)'],
    ['aiPerPath', 'AI-companies report per path of one company (?company=OpenAI)'],
    // Itself COUNT(DISTINCT) over path-filtered raw events: its naive is one such query per page, no 3× target.
    ['jobImpact', 'job-impact report (5 pages, per page and total, 14 days either side)', 'one COUNT(DISTINCT) per page'],
  ];
  for (const [name, label, naive] of labels) {
    const vs = naive ? `${naive} ${med(name + 'Naive').toFixed(0)} (the report is itself COUNT(DISTINCT): no target)` : `naive COUNT(DISTINCT) ${med(name + 'Naive').toFixed(0)} → ${(med(name + 'Naive') / med(name)).toFixed(1)}× faster (target ≥ 3×)`;
    console.log(`  ${label}: ${med(name).toFixed(0)}   → ${median(ratio[name]).toFixed(2)}× the visitors query, median of the pairs (target ≤ 1.5×; ${(med(name) / med('visitors')).toFixed(2)}× of the medians); ${vs}`);
  }
  console.log(`\npeak RSS ${mib(process.resourceUsage().maxRSS * 1024)}`);
  await engine.close();
  await reopenings(path.join(dir, 'analytics.duckdb'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}

/**
 * What an operator who edits the lists' AI assistants meets: the next open folds the per-path host
 * rows again (path-hosts.ts). Timed beside an open with the same lists, which folds nothing.
 */
async function reopenings(file: string): Promise<void> {
  const choices: [string, PathHosts][] = [
    ['the same lists', duckdbPathHosts(RULES.sources)],
    ['every host (refold)', ALL_PATH_HOSTS],
    ['the AI assistants again (refold)', duckdbPathHosts(RULES.sources)],
  ];
  console.log('\nopening the store, by the referring hosts kept per path:');
  for (const [label, pathHosts] of choices) {
    const t0 = performance.now();
    const engine = await DuckDbEngine.open({ file, pathHosts });
    const s = (performance.now() - t0) / 1000;
    const rows = (await engine.sql(`SELECT count(*) AS n FROM daily_path_keys WHERE kind = ${KEY_KIND.host}`))[0].n;
    await engine.close();
    console.log(`  ${label}: ${s.toFixed(1)} s, ${Number(rows).toLocaleString('en-US')} host rows per path`);
  }
}
