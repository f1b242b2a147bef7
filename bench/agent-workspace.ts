// Workspace preparation on a generated 5,000-file repository served over git smart HTTP: the first job
// (creates the mirror) versus later jobs that reuse it. Later jobs take a recycled worktree from the
// pool (fetch + `checkout --force -B` + `clean -ffdx`: only changed files are rewritten); for
// comparison the same jobs also run with the pool off (fetch + full `git worktree add`). Each job
// writes a page, edits one, leaves an untracked file, commits and pushes, like an agent turn.
// Target: later jobs under 1 s.
// Run: node_modules/.bin/node bench/agent-workspace.ts [files=5000] [laterJobs=10]
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Repo } from '../src/git/git.ts';
import { MAX_PAGE_BYTES } from '../src/agent/checks/tree.ts';
import { WorktreePool } from '../src/git/worktree-pool.ts';
import { LOCAL_GIT, startCodeHost } from '../test/fixtures/git-server.ts';
import { percentile, TOKEN } from './agent-common.ts';

const FILES = Number(process.argv[2] ?? 5000);
const LATER = Number(process.argv[3] ?? 10);

const host = await startCodeHost({ token: TOKEN });
const pools: WorktreePool[] = [];
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-ws-'));
try {
  const files: Record<string, string> = { 'docs.json': '{"navigation": []}\n' };
  for (let i = 0; i < FILES - 1; i++) {
    files[`docs/section-${i % 50}/page-${i}.mdx`] = `---\ntitle: Page ${i}\n---\n\n# Page ${i}\n\n${'Lorem ipsum dolor sit amet. '.repeat(20)}\n`;
  }
  let t = performance.now();
  const url = host.createRepo('bench/big', files);
  console.log(`generated ${FILES}-file repository in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const repoWith = (size: number) => {
    const pool = new WorktreePool({ dataDir, size });
    pools.push(pool);
    return new Repo({ dataDir, repositoryUrl: url, ...LOCAL_GIT, credentials: { token: TOKEN, username: 'x-access-token' }, author: { name: 'Bench', email: 'b@example.com' }, pool });
  };

  /** One job: prepare (measured), edit + commit + push, release (measured). */
  const job = async (repo: Repo, id: string) => {
    const dir = path.join(dataDir, 'worktrees', id);
    const start = performance.now();
    const lease = await repo.acquireWorktree(dir);
    const wt = await lease.prepare(`folio/${id}`, 'main');
    const prepared = performance.now() - start;
    writeFileSync(path.join(dir, `docs/${id}.mdx`), `# ${id}\n`);
    writeFileSync(path.join(dir, 'docs/section-1/page-1.mdx'), `# Edited by ${id}\n`);
    await repo.commitAll(dir, `Edit by ${id}`);
    await repo.push(dir, `folio/${id}`);
    writeFileSync(path.join(dir, 'scratch.tmp'), 'left behind\n');
    const r0 = performance.now();
    await lease.release();
    return { prepared, released: performance.now() - r0, recycled: wt.recycled, resumed: wt.resumed };
  };
  const summary = (xs: number[]) => {
    const s = [...xs].sort((a, b) => a - b);
    return `p50 ${percentile(s, 50).toFixed(0)} ms, max ${s.at(-1)!.toFixed(0)} ms`;
  };

  const pooled = repoWith(4);
  const first = await job(pooled, 'job_0');
  const later: Awaited<ReturnType<typeof job>>[] = [];
  for (let i = 1; i <= LATER; i++) later.push(await job(pooled, `job_${i}`));
  // A follow-up: starts from its own pushed branch, also on a recycled worktree.
  const followUps: Awaited<ReturnType<typeof job>>[] = [];
  for (let i = 1; i <= Math.min(3, LATER); i++) followUps.push(await job(pooled, `job_${i}`));
  for (const pool of pools) await pool.drain();

  const fresh: Awaited<ReturnType<typeof job>>[] = [];
  const unpooled = repoWith(0);
  for (let i = 1; i <= LATER; i++) fresh.push(await job(unpooled, `job_f${i}`));

  // What the first model request waits for on a warm mirror: the docs profile read from the mirror's tree.
  t = performance.now();
  const sha = await pooled.currentStart('folio/none', 'main');
  const src = await pooled.treeSource(sha!, MAX_PAGE_BYTES);
  await src.readMany(['docs.json', ...src.files.slice(0, 20)]);
  const profileMs = performance.now() - t;
  console.log(`workspace preparation, ${FILES} files (each job: prepare, write + edit + commit + push, release):`);
  console.log(`  first job (clone into mirror + full checkout): ${first.prepared.toFixed(0)} ms`);
  console.log(
    `  later jobs (${LATER}, recycled worktree: fetch + reset): ${summary(later.map((j) => j.prepared))}; recycled ${later.filter((j) => j.recycled).length}/${LATER}; release ${summary(later.map((j) => j.released))}`,
  );
  console.log(
    `  follow-ups (${followUps.length}, from the pushed job branch, recycled): ${summary(followUps.map((j) => j.prepared))}; resumed ${followUps.filter((j) => j.resumed).length}/${followUps.length}`,
  );
  console.log(`  later jobs (${LATER}, pool off: fetch + full checkout): ${summary(fresh.map((j) => j.prepared))}; release ${summary(fresh.map((j) => j.released))}`);
  console.log(`  docs profile from the mirror tree (read while the worktree is prepared): ${profileMs.toFixed(0)} ms`);
} finally {
  for (const pool of pools) await pool.drain();
  await host.close();
  rmSync(dataDir, { recursive: true, force: true });
}
