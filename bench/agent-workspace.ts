// Workspace preparation on a generated 5,000-file repository served over git smart HTTP: the first job
// (creates the mirror) versus later jobs that reuse it (fetch + worktree). Target: later jobs under 1 s.
// Run: node_modules/.bin/node bench/agent-workspace.ts [files=5000] [laterJobs=10]
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Repo } from '../src/git/git.ts';
import { startCodeHost } from '../test/fixtures/git-server.ts';
import { percentile, TOKEN } from './agent-common.ts';

const FILES = Number(process.argv[2] ?? 5000);
const LATER = Number(process.argv[3] ?? 10);

const host = await startCodeHost({ token: TOKEN });
const dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-ws-'));
try {
  const files: Record<string, string> = { 'docs.json': '{"navigation": []}\n' };
  for (let i = 0; i < FILES - 1; i++) {
    files[`docs/section-${i % 50}/page-${i}.mdx`] = `---\ntitle: Page ${i}\n---\n\n# Page ${i}\n\n${'Lorem ipsum dolor sit amet. '.repeat(20)}\n`;
  }
  let t = performance.now();
  const url = host.createRepo('bench/big', files);
  console.log(`generated ${FILES}-file repository in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  const repo = new Repo({ dataDir, repositoryUrl: url, credentials: { token: TOKEN, username: 'x-access-token' }, author: { name: 'Bench', email: 'b@example.com' } });

  const run = async (i: number) => {
    const dir = path.join(dataDir, 'worktrees', `job_${i}`);
    const start = performance.now();
    await repo.prepareWorktree(dir, `folio/job_${i}`, 'main');
    const prepared = performance.now() - start;
    await repo.removeWorktree(dir, `folio/job_${i}`);
    return prepared;
  };
  const first = await run(0);
  const later: number[] = [];
  for (let i = 1; i <= LATER; i++) later.push(await run(i));
  later.sort((a, b) => a - b);
  // What the first model request waits for on a warm mirror: the docs profile read from the mirror's tree.
  t = performance.now();
  const sha = await repo.currentStart('folio/none', 'main');
  const src = await repo.treeSource(sha!);
  await src.readMany(['docs.json', ...src.files.slice(0, 20)]);
  const profileMs = performance.now() - t;
  console.log(`workspace preparation, ${FILES} files (fetch + worktree checkout):`);
  console.log(`  first job (clone into mirror): ${first.toFixed(0)} ms`);
  console.log(`  later jobs (${LATER}, mirror reused): p50 ${percentile(later, 50).toFixed(0)} ms, max ${later.at(-1)!.toFixed(0)} ms`);
  console.log(`  docs profile from the mirror tree (what the first model call waits for): ${profileMs.toFixed(0)} ms`);
} finally {
  await host.close();
  rmSync(dataDir, { recursive: true, force: true });
}
