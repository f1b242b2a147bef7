// Throughput and latency of GET job and POST job beside a bare Fastify route, in one run.
// Usage: npm run bench:api [-- --seconds 10 --connections 50 --rounds 3 --pin]
// --pin (Linux, taskset): the servers on CPU 0, the load generator on CPU 1, so the two do not take
// turns on one core and the ratio is steady from run to run.
// Each server runs in its own process; the load generator (autocannon) runs in this one. The bare
// route and GET job take turns for several rounds and each reports its median round, so a noisy
// moment on the machine does not land on one side only.
import autocannon from 'autocannon';
import { rmSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { loadConfig } from '../src/config.ts';
import { openStore } from '../src/store/database.ts';
import { ProjectsService } from '../src/admin/projects.ts';
import { ApiKeyStore } from '../src/store/api-keys.ts';
import { startProcess } from '../test/helpers/process.ts';
import { tempDir } from '../test/helpers/server.ts';

const { values } = parseArgs({
  options: {
    seconds: { type: 'string', default: '10' },
    connections: { type: 'string', default: '50' },
    rounds: { type: 'string', default: '3' },
    pin: { type: 'boolean', default: false },
  },
});
const duration = Number(values.seconds);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

const dataDir = tempDir('folio-bench-');
const config = loadConfig({ FOLIO_DATA_DIR: dataDir });
const store = await openStore(config);
const project = await new ProjectsService(store.db, config).create({ name: 'Bench', repositoryUrl: 'https://github.com/acme/docs' });
const { key } = await new ApiKeyStore(store.db).create({ projectId: project.id });
await store.close();

const bare = await startProcess('bench/fixtures/bare-server.ts', [], {});
const folio = await startProcess('bin/folio.mjs', ['serve'], {
  FOLIO_DATA_DIR: dataDir,
  PORT: '0',
  LOG_LEVEL: 'info',
  FOLIO_ACCESS_LOG: process.env.FOLIO_ACCESS_LOG ?? 'false',
  FOLIO_WORKERS: '0', // the API alone: created jobs wait in the queue
  FOLIO_RATE_LIMIT_CREATE: '0',
  // /metrics on, as on a monitored deployment: every request is counted, as measured before.
  FOLIO_METRICS_TOKEN: 'bench-metrics-token-0123456789',
  ANTHROPIC_API_KEY: 'bench',
});
/** Every thread of process `pid` on `cpu`. */
const pin = (pid: number | undefined, cpu: number) => execFileSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
if (values.pin) {
  pin(bare.proc.pid, 0);
  pin(folio.proc.pid, 0);
  pin(process.pid, 1);
}
const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
const seeded = await (await fetch(`${folio.url}/v2/agent/${project.id}/job`, { method: 'POST', headers, body: JSON.stringify({ prompt: 'seed' }) })).json() as { id: string };

interface Row { name: string; rps: number; p50: number; p99: number; errors: number }

async function run(name: string, opts: autocannon.Options): Promise<Row> {
  // A short warm-up so JIT and caches settle before measuring.
  await autocannon({ ...opts, duration: 2 });
  const r = await autocannon({ ...opts, duration });
  const errors = r.errors + r.timeouts + r.non2xx;
  return { name, rps: r.requests.average, p50: r.latency.p50, p99: r.latency.p99, errors };
}

/** The round with the median throughput. */
const median = (rows: Row[]): Row => [...rows].sort((a, b) => a.rps - b.rps)[Math.floor(rows.length / 2)];

const bareRounds: Row[] = [];
const getRounds: Row[] = [];
for (let i = 0; i < rounds; i++) {
  bareRounds.push(await run('bare Fastify GET (baseline)', { url: `${bare.url}/job/x`, connections }));
  getRounds.push(await run('GET /v2/agent/:projectId/job/:id', { url: `${folio.url}/v2/agent/${project.id}/job/${seeded.id}`, connections, headers }));
  console.log(`round ${i + 1}: bare ${Math.round(bareRounds[i].rps)} req/s, GET job ${Math.round(getRounds[i].rps)} req/s (${((getRounds[i].rps / bareRounds[i].rps) * 100).toFixed(0)}%)`);
}
const rows: Row[] = [median(bareRounds), median(getRounds)];
rows.push(
  await run('POST /v2/agent/:projectId/job', {
    url: `${folio.url}/v2/agent/${project.id}/job`,
    method: 'POST',
    connections,
    headers,
    body: JSON.stringify({ prompt: 'Document the --dry-run flag of the deploy command.' }),
  }),
);

bare.proc.kill('SIGTERM');
folio.proc.kill('SIGTERM');
await Promise.all([bare.exited, folio.exited]);
rmSync(dataDir, { recursive: true, force: true });

const base = rows[0].rps;
console.log(`\n${duration}s per run, ${connections} connections, median of ${rounds} alternating rounds for the GETs, Node ${process.version}${values.pin ? ', servers on CPU 0 and the load generator on CPU 1' : ''}\n`);
console.log('| run | req/s | p50 ms | p99 ms | errors | vs baseline |');
console.log('|---|---:|---:|---:|---:|---:|');
for (const r of rows) console.log(`| ${r.name} | ${Math.round(r.rps)} | ${r.p50} | ${r.p99} | ${r.errors} | ${(r.rps / base).toFixed(2)}× |`);
console.log(`\nGET job / baseline: ${(rows[1].rps / base * 100).toFixed(0)}% (target ≥ 50%); POST job: ${Math.round(rows[2].rps)} jobs/s (target ≥ 1,000).`);
