// The worktree pool: a job's worktree is recycled for the next job of the same repository (reset to its
// start point, every untracked and ignored file removed), never shared by two jobs at once, bounded,
// removed when a run is aborted before it is ready, and swept when its owning process is gone. Fetches
// of concurrent jobs are shared. Real git over smart HTTP throughout.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { GitError, Repo } from '../../src/git/git.ts';
import { poolPath, WorktreePool } from '../../src/git/worktree-pool.ts';
import { gitSync, LOCAL_GIT, startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';

const TOKEN = 'ghp_pooltoken_0123456789abcdef';
const BASE_FILES = {
  '.gitignore': '*.log\nbuild/\n',
  'README.md': '# Docs\n',
  'docs/index.md': '# Home\n',
  'docs/guide.md': '# Guide\n',
};
let host: CodeHostServer;
let url: string;
const dataDirs: string[] = [];

beforeAll(async () => {
  host = await startCodeHost({ token: TOKEN });
  url = host.createRepo('acme/pool', BASE_FILES);
});
/** One pool per data directory, as one process has (its size is the first asked for). */
const pools = new Map<string, WorktreePool>();
function poolFor(dataDir: string, size = 0): WorktreePool {
  let pool = pools.get(dataDir);
  if (!pool) pools.set(dataDir, (pool = new WorktreePool({ dataDir, size })));
  return pool;
}
afterEach(async () => {
  for (const pool of pools.values()) await pool.drain();
  pools.clear();
});
afterAll(async () => {
  await host.close();
  for (const d of dataDirs) rmSync(d, { recursive: true, force: true });
});

function newDataDir(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'folio-pool-'));
  dataDirs.push(d);
  return d;
}

function repo(dataDir: string, worktreePool: number, token = TOKEN): Repo {
  return new Repo({
    dataDir,
    repositoryUrl: url, ...LOCAL_GIT,
    credentials: { token, username: 'x-access-token' },
    author: { name: 'Folio Agent', email: 'agent@folio.invalid' },
    pool: poolFor(dataDir, worktreePool),
  });
}

const g = (dir: string, ...args: string[]) => execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

/** Relative paths of every file and folder under dir except .git, sorted. */
function tree(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .map((e) => path.relative(dir, path.join(e.parentPath, e.name)))
    .filter((p) => p !== '.git' && !p.startsWith(`.git${path.sep}`))
    .sort();
}

/** Every file under dir as text, to look for leaked secrets. */
function allText(dir: string): string {
  let out = '';
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out += readFileSync(path.join(e.parentPath, e.name)).toString('latin1');
  }
  return out;
}

/** The linked worktree's id in the mirror (its administrative folder), from its `.git` file. */
function adminOf(dir: string): string {
  return readFileSync(path.join(dir, '.git'), 'utf8').trim().replace(/^gitdir: /, '');
}

function registeredWorktrees(mirror: string): string[] {
  return g(mirror, 'worktree', 'list', '--porcelain')
    .split('\n')
    .filter((l) => l.startsWith('worktree ') && !l.endsWith('.git'))
    .map((l) => l.slice('worktree '.length));
}

/** Runs one job turn's git part: lease, prepare, `edit`, commit + push when something changed, release. */
async function job(r: Repo, dataDir: string, id: string, edit: (dir: string) => void = () => undefined) {
  const lease = await r.acquireWorktree(path.join(dataDir, 'worktrees', id));
  const wt = await lease.prepare(`folio/${id}`, 'main');
  edit(lease.dir);
  const commit = await r.commitAll(lease.dir, `Edit by ${id}`);
  if (commit) await r.push(lease.dir, `folio/${id}`);
  await lease.release();
  return { wt, commit };
}

describe('worktree pool', () => {
  it('recycles a worktree with nothing of the previous job left: files, index, branch, ignored and untracked files', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 2);
    const dirA = path.join(dataDir, 'worktrees', 'job_a');
    const a = await r.acquireWorktree(dirA);
    const wa = await a.prepare('folio/job_a', 'main');
    expect(wa).toMatchObject({ recycled: false, resumed: false, branch: 'folio/job_a', dir: dirA });
    // A commit that is never pushed, then every kind of leftover.
    writeFileSync(path.join(dirA, 'docs/committed.md'), '# Unpushed\n');
    expect(await r.commitAll(dirA, 'Unpushed work')).not.toBeNull();
    writeFileSync(path.join(dirA, 'docs/index.md'), '# Changed\n');
    rmSync(path.join(dirA, 'docs/guide.md'));
    writeFileSync(path.join(dirA, 'docs/staged.md'), 'staged\n');
    g(dirA, 'add', 'docs/staged.md');
    writeFileSync(path.join(dirA, 'debug.log'), 'ignored\n');
    mkdirSync(path.join(dirA, 'build/deep'), { recursive: true });
    writeFileSync(path.join(dirA, 'build/deep/out.bin'), 'ignored dir\n');
    mkdirSync(path.join(dirA, 'new/empty/dirs'), { recursive: true });
    writeFileSync(path.join(dirA, 'new/untracked.md'), 'untracked\n');
    g(dirA, 'init', '--quiet', 'nested');
    writeFileSync(path.join(dirA, 'nested/file.md'), 'nested repository\n');
    await a.release();

    expect(existsSync(dirA)).toBe(false);
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(1);
    expect(await r.revParse('refs/heads/folio/job_a')).toBeNull();

    const dirB = path.join(dataDir, 'worktrees', 'job_b');
    const b = await r.acquireWorktree(dirB);
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(0);
    const wb = await b.prepare('folio/job_b', 'main');
    expect(wb).toMatchObject({ recycled: true, resumed: false, branch: 'folio/job_b', dir: dirB });
    const base = await r.revParse('refs/remotes/origin/main');
    expect(wb.startSha).toBe(base);
    expect(g(dirB, 'rev-parse', 'HEAD')).toBe(base);
    expect(g(dirB, 'symbolic-ref', '--short', 'HEAD')).toBe('folio/job_b');
    expect(g(dirB, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe('');
    expect(g(dirB, 'write-tree')).toBe(g(dirB, 'rev-parse', 'HEAD^{tree}'));
    expect(tree(dirB)).toEqual(['.gitignore', 'README.md', 'docs', 'docs/guide.md', 'docs/index.md']);
    expect(readFileSync(path.join(dirB, 'docs/index.md'), 'utf8')).toBe('# Home\n');
    // Still a healthy worktree of the mirror, registered at its new place.
    expect(registeredWorktrees(r.mirror)).toContain(dirB);
    await b.release();
    // No credentials on disk anywhere: mirror, pool, job folders.
    const b64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const disk = allText(r.mirror) + allText(path.join(dataDir, 'worktrees'));
    expect(disk).not.toContain(TOKEN);
    expect(disk).not.toContain(b64);
  });

  it('starts a follow-up on a recycled worktree from the latest pushed job branch, and other jobs from the base', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 2);
    const first = await job(r, dataDir, 'job_f', (dir) => writeFileSync(path.join(dir, 'docs/f.md'), '# F\n'));
    expect(first.wt.recycled).toBe(false);
    // Someone else adds a commit to the job branch on the remote after the push.
    const clone = mkdtempSync(path.join(os.tmpdir(), 'folio-pool-clone-'));
    try {
      gitSync(['clone', '--quiet', '--branch', 'folio/job_f', path.join(host.root, 'acme/pool.git'), clone], os.tmpdir());
      writeFileSync(path.join(clone, 'docs/f.md'), '# F, reviewed\n');
      gitSync(['commit', '--quiet', '-am', 'Review'], clone);
      gitSync(['push', '--quiet', 'origin', 'folio/job_f'], clone);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
    const remoteHead = g(path.join(host.root, 'acme/pool.git'), 'rev-parse', 'refs/heads/folio/job_f');

    const lease = await r.acquireWorktree(path.join(dataDir, 'worktrees', 'job_f'));
    const wt = await lease.prepare('folio/job_f', 'main');
    expect(wt).toMatchObject({ recycled: true, resumed: true, startSha: remoteHead });
    expect(g(lease.dir, 'rev-parse', 'HEAD')).toBe(remoteHead);
    expect(readFileSync(path.join(lease.dir, 'docs/f.md'), 'utf8')).toBe('# F, reviewed\n');
    expect(g(lease.dir, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe('');
    writeFileSync(path.join(lease.dir, 'docs/f2.md'), '# F2\n');
    await r.commitAll(lease.dir, 'Follow-up');
    await r.push(lease.dir, 'folio/job_f');
    expect(host.log('acme/pool', 'folio/job_f')).toEqual(['Follow-up', 'Review', 'Edit by job_f', 'Initial docs']);
    await lease.release();

    // A new job on the same (recycled) worktree starts from the base, without the job branch's files.
    const other = await r.acquireWorktree(path.join(dataDir, 'worktrees', 'job_g'));
    const wo = await other.prepare('folio/job_g', 'main');
    expect(wo).toMatchObject({ recycled: true, resumed: false, startSha: await r.revParse('refs/remotes/origin/main') });
    expect(existsSync(path.join(other.dir, 'docs/f.md'))).toBe(false);
    expect(existsSync(path.join(other.dir, 'docs/f2.md'))).toBe(false);
    await other.release();
  });

  it('never gives one worktree to two concurrent jobs, and keeps at most the configured number idle', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 3);
    // Fill the pool: 3 jobs at once leave 3 idle worktrees.
    await Promise.all(['p1', 'p2', 'p3'].map((id) => job(r, dataDir, `job_${id}`)));
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(3);

    const ids = ['c1', 'c2', 'c3', 'c4', 'c5', 'c6'];
    const leases = await Promise.all(ids.map((id) => r.acquireWorktree(path.join(dataDir, 'worktrees', `job_${id}`))));
    const prepared = await Promise.all(leases.map((l, i) => l.prepare(`folio/job_${ids[i]}`, 'main')));
    expect(prepared.filter((p) => p.recycled)).toHaveLength(3);
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(0);
    // Distinct folders and distinct git worktrees (administrative folders) for every running job.
    expect(new Set(leases.map((l) => l.dir)).size).toBe(6);
    expect(new Set(leases.map((l) => adminOf(l.dir))).size).toBe(6);
    // Each job sees only its own edit.
    await Promise.all(
      leases.map(async (l, i) => {
        writeFileSync(path.join(l.dir, `docs/${ids[i]}.md`), `${ids[i]}\n`);
        await r.commitAll(l.dir, `Add ${ids[i]}`);
        await r.push(l.dir, `folio/job_${ids[i]}`);
      }),
    );
    for (const [i, l] of leases.entries()) {
      const own = tree(l.dir).filter((p) => /^docs\/c\d\.md$/.test(p));
      expect(own).toEqual([`docs/${ids[i]}.md`]);
      expect(host.show('acme/pool', `folio/job_${ids[i]}`, `docs/${ids[i]}.md`)).toBe(`${ids[i]}\n`);
    }
    await Promise.all(leases.map((l) => l.release()));
    await poolFor(dataDir).settled();
    // Bounded: 3 idle worktrees kept, the others removed from disk and from the mirror's records.
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(3);
    expect(readdirSync(poolPath(dataDir, r.mirror))).toHaveLength(3);
    expect(registeredWorktrees(r.mirror).sort()).toEqual(poolFor(dataDir).pooled(r.mirror).sort());
    expect(readdirSync(path.join(dataDir, 'worktrees')).filter((n) => n !== '.pool')).toEqual([]);
    for (const id of ids) expect(await r.revParse(`refs/heads/folio/job_${id}`)).toBeNull();
  });

  it('removes a worktree whose preparation was aborted (a job archived mid-checkout), and recycles one aborted after it was ready', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 2);
    await job(r, dataDir, 'job_w'); // warm mirror, one idle worktree
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(1);

    // Aborted while resetting a recycled worktree: it is removed, not returned to the pool.
    const c1 = new AbortController();
    const l1 = await r.acquireWorktree(path.join(dataDir, 'worktrees', 'job_x'));
    const p1 = l1.prepare('folio/job_x', 'main', c1.signal);
    c1.abort('archived');
    await expect(p1).rejects.toMatchObject({ name: 'AbortError' });
    await l1.release();
    expect(existsSync(l1.dir)).toBe(false);
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(0);
    expect(registeredWorktrees(r.mirror)).toEqual([]);
    expect(await r.revParse('refs/heads/folio/job_x')).toBeNull();

    // Aborted during the model run (after the worktree was ready): recycled; the next job gets a clean tree.
    const c2 = new AbortController();
    const l2 = await r.acquireWorktree(path.join(dataDir, 'worktrees', 'job_y'));
    await l2.prepare('folio/job_y', 'main', c2.signal);
    writeFileSync(path.join(l2.dir, 'half-written.md'), 'partial\n');
    c2.abort('archived');
    await l2.release();
    expect(existsSync(l2.dir)).toBe(false);
    expect(poolFor(dataDir).pooled(r.mirror)).toHaveLength(1);
    const next = await job(r, dataDir, 'job_z', (dir) => {
      expect(existsSync(path.join(dir, 'half-written.md'))).toBe(false);
    });
    expect(next.wt.recycled).toBe(true);
  });

  it('replaces an idle worktree that cannot be reset with a fresh checkout', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 2);
    await job(r, dataDir, 'job_l');
    const [idle] = poolFor(dataDir).pooled(r.mirror);
    writeFileSync(path.join(adminOf(idle), 'index.lock'), ''); // left by a git process killed mid-write
    const { wt } = await job(r, dataDir, 'job_m', (dir) => {
      expect(g(dir, 'status', '--porcelain', '--ignored', '--untracked-files=all')).toBe('');
      writeFileSync(path.join(dir, 'docs/m.md'), '# M\n');
    });
    expect(wt.recycled).toBe(false);
    expect(host.show('acme/pool', 'folio/job_m', 'docs/m.md')).toBe('# M\n');
    expect(registeredWorktrees(r.mirror)).toEqual(poolFor(dataDir).pooled(r.mirror));
  });

  it('removes idle worktrees of processes that are gone, keeps those of live processes', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 2);
    await r.fetch();
    const root = poolPath(dataDir, r.mirror);
    const dead = path.join(root, '4194999-deadbeef-1'); // above Linux's largest pid
    const live = path.join(root, `${process.ppid}-0badcafe-1`);
    for (const d of [dead, live]) gitSync(['worktree', 'add', '--quiet', '--detach', d, 'refs/remotes/origin/main'], r.mirror);
    const lease = await r.acquireWorktree(path.join(dataDir, 'worktrees', 'job_s')); // first use of the mirror here: sweeps
    await poolFor(dataDir).settled();
    expect(existsSync(dead)).toBe(false);
    expect(existsSync(live)).toBe(true);
    expect(registeredWorktrees(r.mirror)).toEqual([live]);
    // Another process's idle worktree is never taken.
    const wt = await lease.prepare('folio/job_s', 'main');
    expect(wt.recycled).toBe(false);
    await lease.release();
    gitSync(['worktree', 'remove', '--force', live], r.mirror);
  });

  it('shares one fetch between concurrent jobs, but never across different credentials', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 0);
    await r.fetch();
    const total = () => [...poolFor(dataDir).fetches.rounds.values()].reduce((a, b) => a + b, 0);
    const before = total();
    await Promise.all(Array.from({ length: 8 }, () => r.fetch()));
    // One round already running when the others asked would be joined by none; here the first call
    // starts a round and the other seven share the next one.
    expect(total() - before).toBe(2);

    const wrong = repo(dataDir, 0, 'wrong-token-value');
    const [ok, bad] = await Promise.allSettled([r.fetch(), wrong.fetch()]);
    expect(ok.status).toBe('fulfilled');
    expect(bad.status).toBe('rejected');
    const err = (bad as PromiseRejectedResult).reason;
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).code).toBe('repository_auth_failed');
    expect((err as Error).message).not.toContain('wrong-token-value');
  });

  it('sees a push made just before the fetch was asked for, even while another fetch runs', async () => {
    const dataDir = newDataDir();
    const r = repo(dataDir, 0);
    await r.fetch();
    const running = r.fetch();
    const clone = mkdtempSync(path.join(os.tmpdir(), 'folio-pool-clone-'));
    try {
      gitSync(['clone', '--quiet', path.join(host.root, 'acme/pool.git'), clone], os.tmpdir());
      gitSync(['checkout', '--quiet', '-b', 'fresh'], clone);
      writeFileSync(path.join(clone, 'fresh.md'), 'fresh\n');
      gitSync(['add', 'fresh.md'], clone);
      gitSync(['commit', '--quiet', '-m', 'Fresh'], clone);
      gitSync(['push', '--quiet', 'origin', 'fresh'], clone);
    } finally {
      rmSync(clone, { recursive: true, force: true });
    }
    await r.fetch();
    await running;
    expect(await r.revParse('refs/remotes/origin/fresh')).toBe(g(path.join(host.root, 'acme/pool.git'), 'rev-parse', 'refs/heads/fresh'));
  });
});
