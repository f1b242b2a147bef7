// 20 concurrent jobs with a scripted model (each writes a page and finishes: commit, push, PR) through
// the HTTP API: jobs per minute and peak memory (RSS of this process, which runs server, fakes and client).
// Two bursts: the first right after one warm-up job, the second with the first burst's worktrees pooled.
// Run: node_modules/.bin/node bench/agent-concurrency.ts [jobs=20] [workers=20]
import { startBench, waitDone } from './agent-common.ts';

const JOBS = Number(process.argv[2] ?? 20);
const WORKERS = Number(process.argv[3] ?? 20);
const b = await startBench({ FOLIO_WORKERS: String(WORKERS) });
let peak = process.memoryUsage().rss;
const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
try {
  const url = b.host.createRepo('bench/concurrent', {
    'docs.json': '{"navigation": []}\n',
    ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`docs/p${i}.mdx`, `---\ntitle: P${i}\n---\n\n# P${i}\n`])),
  });
  const projectId = await b.server.createProject({ repositoryUrl: url, codeHost: 'github' });
  const key = await b.server.createKey(projectId);
  // Warm the mirror with one job, as a running server would have.
  const warm = await b.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add page 9999' } });
  await waitDone(b, projectId, warm.body.id, key);
  const rssBefore = process.memoryUsage().rss;
  peak = rssBefore;

  /** One burst of JOBS concurrent jobs; returns completed-with-PR count and seconds. */
  const burst = async (round: number) => {
    const t0 = performance.now();
    const ids = await Promise.all(
      Array.from({ length: JOBS }, async (_, i) => {
        const r = await b.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: `Add page ${round * 1000 + i}` } });
        if (r.status !== 201) throw new Error(`create failed: ${r.status} ${r.text}`);
        return r.body.id as string;
      }),
    );
    const jobs = await Promise.all(ids.map((id) => waitDone(b, projectId, id, key, 600_000)));
    const seconds = (performance.now() - t0) / 1000;
    return { ok: jobs.filter((j) => j.status === 'completed' && j.prLink).length, seconds };
  };
  // First burst: the pool holds the warm-up job's worktree only, so most jobs check out a new one.
  const first = await burst(1);
  const firstPeak = peak;
  // Second burst: the worktrees of the first burst wait in the pool (FOLIO_WORKTREE_POOL defaults to
  // the number of workers), as on a server that has been running.
  const second = await burst(2);
  console.log(`agent concurrency: ${JOBS} jobs, ${WORKERS} workers, scripted model (write_file + finish), commit + push + PR each`);
  const line = (r: { ok: number; seconds: number }) => `completed with PR: ${r.ok}/${JOBS}; wall time ${r.seconds.toFixed(1)} s; ${((r.ok / r.seconds) * 60).toFixed(0)} jobs/min`;
  console.log(`  first burst (new worktrees):          ${line(first)}`);
  console.log(`  second burst (recycled worktrees):    ${line(second)}`);
  console.log(`  RSS before ${(rssBefore / 2 ** 20).toFixed(0)} MiB, peak ${(firstPeak / 2 ** 20).toFixed(0)} MiB in the first burst, ${(peak / 2 ** 20).toFixed(0)} MiB overall (one process: server + fakes + client)`);
  console.log(`  pull requests opened: ${b.host.github.pulls.length - 1}; invalid GitHub requests: ${b.host.github.invalid().length}`);
} finally {
  clearInterval(sampler);
  await b.close();
}
