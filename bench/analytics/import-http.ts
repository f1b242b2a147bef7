// Log import over HTTP to a running server (the normal case: the server owns the DuckDB file), this
// code against a baseline checkout, in one run: for each round and each tree, a fresh data directory,
// that tree's `folio serve`, and that tree's `folio analytics import --url` of the same combined log.
// Prints both rates and the ratio (median of the rounds, which alternate).
// Usage: node bench/analytics/import-http.ts --baseline DIR [--lines 1000000] [--rounds 3]
//   DIR: a checkout of the code to compare with, e.g. `git archive <commit> | tar -x -C DIR` with
//   node_modules linked from this tree.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateTraffic, writeCombinedLog } from './generate.ts';

const { values } = parseArgs({ options: { baseline: { type: 'string' }, lines: { type: 'string', default: '1000000' }, rounds: { type: 'string', default: '3' } } });
if (!values.baseline) throw new Error('--baseline DIR is required');
const LINES = Number(values.lines);
const ROUNDS = Number(values.rounds);
const TREES = { baseline: path.resolve(values.baseline), current: path.resolve(import.meta.dirname, '../..') };

function run(tree: string, args: string[], env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const proc = spawn(process.execPath, [path.join(tree, 'bin/folio.mjs'), ...args], { env: { ...process.env, ...env }, cwd: tree });
    let stdout = '';
    let stderr = '';
    proc.stdout.on('data', (d) => (stdout += d));
    proc.stderr.on('data', (d) => (stderr += d));
    proc.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

async function round(tree: string, log: string): Promise<number> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-import-'));
  const env = { FOLIO_DATA_DIR: dir, FOLIO_SECRET: 'bench-secret-0123456789abcdef', LOG_LEVEL: 'info', PORT: '0', HOST: '127.0.0.1', FOLIO_WORKERS: '0', FOLIO_ACCESS_LOG: 'false', FOLIO_REPOSITORY_CHECK: 'false' };
  try {
    const p = await run(tree, ['project', 'create', '--name', 'Bench', '--repository', 'https://github.com/acme/docs', '--json'], env);
    const id = JSON.parse(p.stdout).id as string;
    const key = JSON.parse((await run(tree, ['key', 'create', '--project', id, '--json'], env)).stdout).key as string;
    const server = spawn(process.execPath, [path.join(tree, 'bin/folio.mjs'), 'serve', '--no-workers'], { env: { ...process.env, ...env }, cwd: tree, stdio: ['ignore', 'pipe', 'pipe'] });
    const url = await new Promise<string>((resolve, reject) => {
      let out = '';
      server.stdout.on('data', (d) => {
        out += d;
        const m = /"url":"(http[^"]+)"/.exec(out);
        if (m) resolve(m[1]);
      });
      server.on('exit', () => reject(new Error(out)));
    });
    try {
      const t0 = performance.now();
      const r = await run(tree, ['analytics', 'import', '--project', id, '--url', url, '--key', key, '--no-progress', '--json', log], env);
      const secs = (performance.now() - t0) / 1000;
      if (r.code !== 0) throw new Error(r.stderr);
      const sum = JSON.parse(r.stdout) as { linesRead: number; viewsRecorded: number };
      if (sum.linesRead !== LINES) throw new Error(`read ${sum.linesRead} lines`);
      return sum.linesRead / secs;
    } finally {
      await new Promise<void>((r) => {
        server.on('exit', () => r());
        server.kill('SIGTERM');
      });
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const work = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-log-'));
try {
  const log = path.join(work, 'access.log');
  await writeCombinedLog(generateTraffic({ events: LINES, days: 30, seed: 2 }), log);
  const rates: Record<keyof typeof TREES, number[]> = { baseline: [], current: [] };
  for (let i = 1; i <= ROUNDS; i++) {
    for (const name of ['baseline', 'current'] as const) {
      rates[name].push(await round(TREES[name], log));
      console.log(`round ${i}, ${name}: ${fmt(rates[name].at(-1)!)} lines/s`);
    }
  }
  const b = median(rates.baseline);
  const c = median(rates.current);
  console.log(`\n${fmt(LINES)}-line combined log over HTTP to a running server, median of ${ROUNDS} alternating rounds (process start to exit)`);
  console.log(`baseline (${TREES.baseline}): ${fmt(b)} lines/s`);
  console.log(`current: ${fmt(c)} lines/s → ${(c / b).toFixed(2)}× (target ≥ 2×)`);
} finally {
  rmSync(work, { recursive: true, force: true });
}
