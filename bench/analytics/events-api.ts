// Events API throughput against a bare Fastify route that parses the same JSON bodies and answers 202,
// both loaded the same way (C keep-alive clients posting pre-built bodies of 1,000 events), in two
// arrival orders: time-ordered, and sessions in random order across the 30 days (late batches,
// merged logs, backfills). Rounds alternate bare / Folio so a noisy moment does not land on one side;
// each Folio round runs on a fresh server and data directory. After each Folio round the stored
// visitors are checked against plain Sets of the events sent. The server's CPU time (all threads, from
// /proc/<pid>/stat, start-up left out, the last compaction waited for, and its shutdown counted: the
// analytics store's closing checkpoint) is reported per event. DuckDB checkpoints its write-ahead log
// whenever it passes 16 MiB; without the shutdown, a round left with most of 16 MiB of log not
// checkpointed looked ~0.4 µs per event cheaper than one that had just crossed the threshold (issue 34).
// Usage: node bench/analytics/events-api.ts [--events 500000] [--clients 4] [--rounds 3] [--tree DIR] [--mix [--mix-parts P] [--referred-views V]]
//   --tree DIR   run Folio from another checkout (e.g. the code before a change, with node_modules linked)
//   --mix        random sessions as they are and with the mix of a real site: 2% of the views not found
//                (status 404) and 1 in 3 sessions referred (an outside site, or the site's own pages)
//   --mix-parts  all (default), not-found or referred: that part of the mix only; none: the same bodies
//                on both sides, a control that shows how far this machine's noise moves the ratio
//   --referred-views  first (default): a referred session's landing view carries the referrer, as
//                browsers and Folio's script send it; every: all its views do (a worst case)
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { ProjectsService } from '../../src/admin/projects.ts';
import { ApiKeyStore } from '../../src/store/api-keys.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { tempDir } from '../../test/helpers/server.ts';
import { generateTraffic, timeOrder, USER_AGENTS, type Traffic } from './generate.ts';
import { bodies, mixParts, referredViews, notFoundView, pairedRatios, randomSessions, SITE } from './mix.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '500000' },
    clients: { type: 'string', default: '4' },
    rounds: { type: 'string', default: '3' },
    tree: { type: 'string' },
    mix: { type: 'boolean', default: false },
    'mix-parts': { type: 'string' },
    'referred-views': { type: 'string' },
  },
});
const EVENTS = Number(values.events);
const CLIENTS = Number(values.clients);
const ROUNDS = Number(values.rounds);
const ROOT = path.resolve(import.meta.dirname, '../..');
const TREE = values.tree ? path.resolve(values.tree) : ROOT;
const RULES = ClassificationRules.load();
const PARTS = mixParts(values['mix-parts']);
const VIEWS = referredViews(values['referred-views']);
/** Longer than the server's compaction timer (analytics/maintenance.ts) plus a compaction. */
const COMPACTION_WAIT_MS = 15_000;

interface Server {
  url: string;
  proc: ChildProcess;
  stop(): Promise<void>;
}

function start(script: string, args: string[], env: Record<string, string>, cwd: string): Promise<Server> {
  const proc = spawn(process.execPath, [script, ...args], { env: { ...process.env, ...env }, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((resolve, reject) => {
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = /\{"url":"([^"]+)"\}/.exec(out) ?? /"url":"(http[^"]+)"/.exec(out);
      if (m) {
        proc.stdout!.off('data', onData);
        resolve({
          url: m[1],
          proc,
          stop: () =>
            new Promise<void>((r) => {
              proc.on('exit', () => r());
              proc.kill('SIGTERM');
            }),
        });
      }
    };
    proc.stdout!.on('data', onData);
    proc.stderr!.on('data', (d: Buffer) => (out += d.toString()));
    proc.on('exit', (code) => reject(new Error(`${script} exited with ${code}: ${out}`)));
  });
}

/** A process's state letter and CPU seconds so far, all its threads (live and exited), from /proc/<pid>/stat. */
function procStat(pid: number): { state: string; cpu: number } {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  // Field 3 of the file is the state; fields 14 and 15 (utime, stime) are in clock ticks (USER_HZ, 100 on Linux).
  return { state: fields[0], cpu: (Number(fields[11]) + Number(fields[12])) / 100 };
}

const cpuSeconds = (pid: number) => procStat(pid).cpu;

/**
 * Stops the server and returns the CPU seconds its shutdown took. The exited process stays a zombie,
 * its /proc entry readable with its final times, until this process reaps it, which Node does only
 * when its event loop runs: so the wait is a synchronous poll.
 */
function stopCounted(server: Server): number {
  const pid = server.proc.pid!;
  const before = cpuSeconds(pid);
  server.proc.kill('SIGTERM');
  const deadline = Date.now() + 120_000;
  for (;;) {
    const s = procStat(pid);
    if (s.state === 'Z') return s.cpu - before;
    if (Date.now() > deadline) throw new Error(`the server (pid ${pid}) did not exit within 120 s of SIGTERM`);
  }
}

/** Posts every body with CLIENTS concurrent keep-alive clients; events per second. */
async function load(url: string, headers: Record<string, string>, list: string[]): Promise<number> {
  let next = 0;
  let accepted = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < list.length) {
        const body = list[next++];
        const res = await fetch(url, { method: 'POST', headers, body });
        const json = (await res.json()) as { accepted: number };
        if (res.status !== 202) throw new Error(`${url} answered ${res.status}: ${JSON.stringify(json)}`);
        accepted += json.accepted;
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  if (accepted !== EVENTS) throw new Error(`${url} accepted ${accepted} of ${EVENTS}`);
  return accepted / secs;
}

/** Exact visitors of the traffic (plain Sets): human, AI, total over every stored page view (`mix`: not-found views are none). */
function expectedTotals(t: Traffic, mix = false): { human: number; ai: number; total: number } {
  const h = new Set<number>();
  const a = new Set<number>();
  for (let k = 0; k < t.n; k++) {
    if (mix && notFoundView(PARTS, k)) continue;
    const c = RULES.classify(USER_AGENTS[t.ua[k]], t.paths[t.path[k]]).class;
    // The visitor id is a keyed hash of IP + user agent: one identity per (visitor, user agent).
    const id = t.visitor[k] * 64 + t.ua[k];
    if (c === 'human') h.add(id);
    else if (c === 'ai') a.add(id);
  }
  return { human: h.size, ai: a.size, total: new Set([...h, ...a]).size };
}

async function folioRound(list: string[]): Promise<{ rate: number; totals: unknown; cpuUs: number; withoutShutdownUs: number }> {
  const dataDir = tempDir('folio-bench-events-');
  const env = { FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'bench-secret-0123456789abcdef' };
  const config = loadConfig(env);
  const store = await openStore(config);
  const project = await new ProjectsService(store.db, config).create({ name: 'Bench', repositoryUrl: 'https://github.com/acme/docs', siteOrigins: [SITE] });
  const { key } = await new ApiKeyStore(store.db).create({ projectId: project.id });
  await store.close();
  const server = await start(path.join(TREE, 'bin/folio.mjs'), ['serve', '--no-workers'], { ...env, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', FOLIO_ACCESS_LOG: 'false', FOLIO_WORKERS: '0' }, TREE);
  try {
    const cpu0 = cpuSeconds(server.proc.pid!);
    const rate = await load(`${server.url}/v1/analytics/${project.id}/events`, { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, list);
    // The rows still waiting are compacted by the server's timer (every 10 s): wait for it, so the CPU
    // per event includes folding every event into the report tables, not only writing it.
    await new Promise((r) => setTimeout(r, COMPACTION_WAIT_MS));
    const running = cpuSeconds(server.proc.pid!) - cpu0;
    // The check's query is left out of the count; the shutdown (the store's last checkpoint) is in it.
    const res = await fetch(`${server.url}/v1/analytics/${project.id}/visitors?limit=1`, { headers: { authorization: `Bearer ${key}` } });
    const totals = ((await res.json()) as { totals: unknown }).totals;
    const shutdown = stopCounted(server);
    return { rate, totals, cpuUs: ((running + shutdown) / EVENTS) * 1e6, withoutShutdownUs: (running / EVENTS) * 1e6 };
  } finally {
    if (server.proc.exitCode === null && server.proc.signalCode === null) await server.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');

const traffic = generateTraffic({ events: EVENTS, days: 30, seed: 1 });
const random = randomSessions(traffic);
const MIXED = { all: 'random sessions, 2% not found, 1 in 3 sessions referred', 'not-found': 'random sessions, 2% not found', referred: 'random sessions, 1 in 3 sessions referred', none: 'random sessions again (control)' }[PARTS];
// With --mix: plain random sessions against the same sessions with the mix (the ratio is what counts).
const orders: Record<string, string[]> = values.mix
  ? { 'random sessions, 30 days': bodies(traffic, random), [MIXED]: bodies(traffic, random, PARTS, VIEWS) }
  : { 'time-ordered': bodies(traffic, timeOrder(traffic)), 'random sessions, 30 days': bodies(traffic, random) };
const want = (name: string) => JSON.stringify(expectedTotals(traffic, name === MIXED));
const bare = await start(path.join(ROOT, 'bench/fixtures/bare-events-server.ts'), [], {}, ROOT);
const results: Record<string, { bare: number[]; folio: number[]; cpu: number[]; running: number[] }> = {};
let exact = true;
try {
  for (let round = 1; round <= ROUNDS; round++) {
    for (const [name, list] of Object.entries(orders)) {
      const r = (results[name] ??= { bare: [], folio: [], cpu: [], running: [] });
      r.bare.push(await load(`${bare.url}/events`, { 'content-type': 'application/json' }, list));
      const f = await folioRound(list);
      r.folio.push(f.rate);
      r.cpu.push(f.cpuUs);
      r.running.push(f.withoutShutdownUs);
      if (JSON.stringify(f.totals) !== want(name)) {
        exact = false;
        console.log(`MISMATCH (${name}): stored ${JSON.stringify(f.totals)}, expected ${want(name)}`);
      }
      console.log(`round ${round}, ${name}: bare ${fmt(r.bare.at(-1)!)} events/s, Folio ${fmt(f.rate)} events/s (${((f.rate / r.bare.at(-1)!) * 100).toFixed(0)}%), server CPU ${f.cpuUs.toFixed(1)} µs/event (${f.withoutShutdownUs.toFixed(1)} before its shutdown)`);
    }
  }
} finally {
  await bare.stop();
}
console.log(`\n${fmt(EVENTS)} events per round in bodies of 1,000, ${CLIENTS} clients, median of ${ROUNDS} alternating rounds, Node ${process.version}${values.mix ? `, referrer on ${VIEWS === 'first' ? 'a referred session\'s landing view' : 'every view of a referred session'}` : ''}${TREE !== ROOT ? `, Folio from ${TREE}` : ''}`);
console.log('| arrival order | bare Fastify events/s | Folio events/s | Folio / bare | server CPU µs/event |');
console.log('|---|---:|---:|---:|---:|');
for (const [name, r] of Object.entries(results)) {
  console.log(`| ${name} | ${fmt(median(r.bare))} | ${fmt(median(r.folio))} | ${((median(r.folio) / median(r.bare)) * 100).toFixed(0)}% (target ≥ 50%) | ${median(r.cpu).toFixed(1)} |`);
}
if (values.mix) {
  const plain = median(results['random sessions, 30 days'].cpu);
  const mixed = median(results[MIXED].cpu);
  const pairs = pairedRatios(results['random sessions, 30 days'].cpu, results[MIXED].cpu);
  console.log(`mix / plain server CPU per event: ${(mixed / plain).toFixed(2)}× (medians); by the pairs of rounds ${pairs.median.toFixed(2)}× (${pairs.min.toFixed(2)}–${pairs.max.toFixed(2)})`);
  const running = pairedRatios(results['random sessions, 30 days'].running, results[MIXED].running);
  console.log(`  without the shutdown's checkpoint (as measured before 2026-11-28, afternoon): ${running.median.toFixed(2)}× by the pairs (${running.min.toFixed(2)}–${running.max.toFixed(2)})`);
  // The mix's bodies are larger (a referrer on a referred session's views, a status): CPU per
  // byte received tells a view that costs more than its bytes from one that only carries more.
  const bytes = (list: string[]) => list.reduce((a, b) => a + Buffer.byteLength(b), 0);
  const sizes = [bytes(orders['random sessions, 30 days']), bytes(orders[MIXED])];
  console.log(`mix / plain body bytes per event: ${(sizes[1] / sizes[0]).toFixed(2)}× (${(sizes[0] / traffic.n).toFixed(0)} and ${(sizes[1] / traffic.n).toFixed(0)} bytes); server CPU per KiB received: ${((plain * traffic.n * 1024) / sizes[0]).toFixed(1)} and ${((mixed * traffic.n * 1024) / sizes[1]).toFixed(1)} µs, ${((mixed / sizes[1]) / (plain / sizes[0])).toFixed(2)}×`);
}
console.log(`visitors exact after every Folio round (plain Sets): ${exact ? 'yes' : 'NO'}`);
if (!exact) process.exitCode = 1;
