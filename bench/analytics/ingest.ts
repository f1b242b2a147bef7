// Ingest throughput of a real server process (`folio serve`): the events API in batches of 1,000
// (targets ≥ 100,000 events/s) and `folio analytics import` of a combined access log over the bulk
// endpoint (target ≥ 200,000 lines/s), with peak memory of the server and of the importer.
// Usage: node bench/analytics/ingest.ts --events 1000000 --lines 2000000 [--concurrency 8]
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generateTraffic, ipOf, USER_AGENTS, writeCombinedLog } from './generate.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');
const NODE = process.execPath;
const arg = (name: string, def: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? def : process.argv[i + 1];
};
const EVENTS = Number(arg('events', '1000000'));
const LINES = Number(arg('lines', '2000000'));
const CONCURRENCY = Number(arg('concurrency', '8'));
const mib = (kb: number) => `${Math.round(kb / 1024)} MiB`;

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-ingest-'));
const env = { ...process.env, FOLIO_DATA_DIR: path.join(dir, 'data'), FOLIO_SECRET: 'bench-secret-0123456789abcdef', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', FOLIO_WORKERS: '0', FOLIO_REPOSITORY_CHECK: 'false' };

function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string; peakKb: number }> {
  return new Promise((resolve) => {
    const proc = spawn(NODE, [path.join(ROOT, 'bin/folio.mjs'), ...args], { env, cwd: ROOT });
    let stdout = '';
    let stderr = '';
    let peakKb = 0;
    const poll = setInterval(() => (peakKb = Math.max(peakKb, vmHwm(proc.pid!))), 100);
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    proc.on('exit', (code) => {
      clearInterval(poll);
      resolve({ code, stdout, stderr, peakKb });
    });
  });
}

function vmHwm(pid: number): number {
  try {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

async function startServer(): Promise<{ url: string; pid: number; stop: () => Promise<void> }> {
  const proc = spawn(NODE, [path.join(ROOT, 'bin/folio.mjs'), 'serve', '--no-workers'], { env, cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise<string>((resolve, reject) => {
    proc.stdout.on('data', (d) => {
      out += d;
      const m = /"url":"(http[^"]+)"/.exec(out);
      if (m) resolve(m[1]);
    });
    proc.stderr.on('data', (d) => (out += d));
    proc.on('exit', () => reject(new Error(`server exited: ${out}`)));
  });
  return {
    url,
    pid: proc.pid!,
    stop: () =>
      new Promise<void>((r) => {
        proc.on('exit', () => r());
        proc.kill('SIGTERM');
      }),
  };
}

async function project(name: string): Promise<{ id: string; key: string }> {
  const p = await run(['project', 'create', '--name', name, '--repository', 'https://github.com/acme/docs', '--json']);
  if (p.code !== 0) throw new Error(p.stderr);
  const id = JSON.parse(p.stdout).id as string;
  const k = await run(['key', 'create', '--project', id, '--json']);
  return { id, key: JSON.parse(k.stdout).key as string };
}

try {
  const results: string[] = [];
  const api = await project('Bench API');
  const imp = await project('Bench import');

  // Request bodies: server-side events as a docs site's backend would send them (IP + user agent).
  const traffic = generateTraffic({ events: EVENTS, days: 30, seed: 1 });
  const bodies: string[] = [];
  for (let s = 0; s < EVENTS; s += 1000) {
    const events = [];
    for (let k = s; k < Math.min(EVENTS, s + 1000); k++) {
      events.push({ timestamp: new Date(traffic.ts[k]).toISOString(), path: traffic.paths[traffic.path[k]], userAgent: USER_AGENTS[traffic.ua[k]], ip: ipOf(traffic.visitor[k]) });
    }
    bodies.push(JSON.stringify({ events }));
  }

  // The access log for the import run.
  const logFile = path.join(dir, 'access.log');
  await writeCombinedLog(generateTraffic({ events: LINES, days: 30, seed: 2 }), logFile);

  const server = await startServer();
  let serverPeak = 0;
  const poll = setInterval(() => (serverPeak = Math.max(serverPeak, vmHwm(server.pid))), 100);
  try {
    // 1. Events API.
    let next = 0;
    let accepted = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next < bodies.length) {
          const body = bodies[next++];
          const res = await fetch(`${server.url}/v1/analytics/${api.id}/events`, {
            method: 'POST',
            headers: { authorization: `Bearer ${api.key}`, 'content-type': 'application/json' },
            body,
          });
          const json = (await res.json()) as { accepted: number };
          if (res.status !== 202) throw new Error(`events API answered ${res.status}: ${JSON.stringify(json)}`);
          accepted += json.accepted;
        }
      }),
    );
    const apiSecs = (performance.now() - started) / 1000;
    results.push(
      `events API: ${accepted.toLocaleString()} events in ${apiSecs.toFixed(1)} s = ${Math.round(accepted / apiSecs).toLocaleString()} events/s ` +
        `(batches of 1,000, ${CONCURRENCY} concurrent clients; every 202 after the group commit)`,
    );
    const apiPeak = serverPeak;

    // 2. Log import over HTTP, then the same file again (all duplicates).
    for (const label of ['first import', 'same file again']) {
      const s = performance.now();
      const r = await run(['analytics', 'import', '--project', imp.id, '--url', server.url, '--key', imp.key, '--no-progress', '--json', logFile]);
      const secs = (performance.now() - s) / 1000;
      if (r.code !== 0) throw new Error(r.stderr);
      const sum = JSON.parse(r.stdout);
      results.push(
        `log import (${label}): ${sum.linesRead.toLocaleString()} lines in ${secs.toFixed(1)} s = ${Math.round(sum.linesRead / secs).toLocaleString()} lines/s; ` +
          `${sum.viewsRecorded.toLocaleString()} views recorded, ${sum.skipped.duplicate.toLocaleString()} duplicates; importer peak RSS ${mib(r.peakKb)}`,
      );
    }
    results.push(`server peak RSS: ${mib(apiPeak)} after the events API run, ${mib(serverPeak)} at the end`);
  } finally {
    clearInterval(poll);
    await server.stop();
  }
  // 3. Log import straight into the DuckDB file (no server running), into a third project.
  const direct = await project('Bench direct import');
  {
    const s = performance.now();
    const r = await run(['analytics', 'import', '--project', direct.id, '--no-progress', '--json', logFile]);
    const secs = (performance.now() - s) / 1000;
    if (r.code !== 0) throw new Error(r.stderr);
    const sum = JSON.parse(r.stdout);
    results.push(
      `log import (direct into the DuckDB file, no server): ${sum.linesRead.toLocaleString()} lines in ${secs.toFixed(1)} s = ` +
        `${Math.round(sum.linesRead / secs).toLocaleString()} lines/s; peak RSS ${mib(r.peakKb)}`,
    );
  }
  console.log(results.join('\n'));
} finally {
  rmSync(dir, { recursive: true, force: true });
}
