// The git layer's own wall against option injection, with the validator out of the way: hostile
// repository URLs and branch names handed straight to the public functions of src/git (as a value
// stored before the rules, or a bug in them, would reach them) are never read as options by git.
// Each value would create a marker file if git took it for an option; the marker stays absent and
// each call ends in a clear result or a GitError with a stable code and a sentence.
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitError, Repo, type GitWorkspaceOptions } from '../../src/git/git.ts';
import { git } from '../../src/git/run.ts';
import { WorktreePool } from '../../src/git/worktree-pool.ts';
import { createBareRepo, gitSync, LOCAL_GIT } from '../fixtures/git-server.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-argv-'));
const MARKER = path.join(dir, 'pwned');
const bare = path.join(dir, 'remote', 'docs.git');
const dataDir = path.join(dir, 'data');

/** Branch names and refs that would run a command or write MARKER if git read them as options. */
const HOSTILE_REFS = [
  `--upload-pack=touch ${MARKER}`,
  `--output=${MARKER}`,
  `-c core.sshCommand=touch ${MARKER}`,
  `--exec=touch ${MARKER}`,
  `-o${MARKER}`,
];
/** Repository URLs that would run a command if git read them as options of fetch or push. */
const HOSTILE_URLS = [`--upload-pack=touch ${MARKER}`, `--receive-pack=touch ${MARKER}`, `-c core.sshCommand=touch ${MARKER}`, `--config=core.sshCommand=touch ${MARKER}`];

let pool: WorktreePool;
let base: string;

/** A Repo of the local bare repository; its options stay reachable so a test can change them after the check. */
function repo(): { r: Repo; opts: GitWorkspaceOptions } {
  const opts: GitWorkspaceOptions = {
    dataDir,
    repositoryUrl: bare,
    ...LOCAL_GIT,
    pool,
    credentials: null,
    author: { name: 'Folio Agent', email: 'agent@folio.invalid' },
  };
  return { r: new Repo(opts), opts };
}

beforeAll(() => {
  createBareRepo(bare, { 'README.md': '# Docs\n' });
  base = gitSync(['rev-parse', 'main'], bare).trim();
  pool = new WorktreePool({ dataDir, size: 0 });
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('hostile values reaching the git layer unchecked', () => {
  it('a hostile repository URL after the check follows `--` in fetch and push: a clear failure, nothing runs', async () => {
    const { r, opts } = repo();
    const wt = path.join(dataDir, 'worktrees', 'job_url');
    await r.prepareWorktree(wt, 'folio/job_url', 'main');
    writeFileSync(path.join(wt, 'new.md'), '# New\n');
    await r.commitAll(wt, 'Add a page');
    for (const url of HOSTILE_URLS) {
      // The constructor checked the real URL; a value changed afterwards stands for one that got past the check.
      opts.repositoryUrl = url;
      // git reads it as the repository: a local path, which git itself refuses for its leading "-".
      const fetched = await r.fetch().then(() => null, (e: unknown) => e);
      expect(fetched, url).toBeInstanceOf(GitError);
      expect(fetched, url).toMatchObject({ code: 'repository_unavailable', message: 'Fetching the repository failed.' });
      expect((fetched as GitError).detail, url).toMatch(/strange pathname .* blocked/);
      const pushed = await r.push(wt, 'folio/job_url').then(() => null, (e: unknown) => e);
      expect(pushed, url).toBeInstanceOf(GitError);
      expect(pushed, url).toMatchObject({ code: 'push_failed', message: 'Pushing the job branch failed.' });
      expect((pushed as GitError).detail, url).toMatch(/strange pathname .* blocked/);
    }
    expect(existsSync(MARKER)).toBe(false);
    expect(gitSync(['branch', '--list', 'folio/*'], bare).trim()).toBe('');
    await r.removeWorktree(wt, 'folio/job_url');
  });

  it('a hostile branch or ref in the functions that do not check names: behind a fixed ref prefix, `--` or `--end-of-options`', async () => {
    const { r } = repo();
    await r.fetch();
    for (const ref of HOSTILE_REFS) {
      // for-each-ref refs/remotes/origin/<branch>: a pattern under a fixed prefix, which matches nothing.
      expect(await r.currentStart(ref, 'main'), ref).toBe(base);
      expect(await r.currentStart(ref, ref), ref).toBeNull();
      // rev-parse --end-of-options <ref>^{commit}
      expect(await r.revParse(ref), ref).toBeNull();
      expect(await r.forkPoint(base, ref), ref).toBeNull();
      // ls-tree --end-of-options <sha>
      await expect(r.treeSource(ref, 1024), ref).rejects.toMatchObject({ code: 'git_error' });
      // Commit ids for diffs are refused unless git printed them.
      await expect(r.changedPaths(ref, base), ref).rejects.toThrow('Not a commit id.');
      await expect(r.diffFiles(base, ref), ref).rejects.toThrow('Not a commit id.');
      await expect(r.diffText(ref, base, 1000), ref).rejects.toThrow('Not a commit id.');
      // branch -D --quiet -- <branch>, from the Repo and from the pool.
      await r.removeWorktree(path.join(dataDir, 'worktrees', 'never-made'), ref);
      await pool.remove(r.mirror, path.join(dataDir, 'worktrees', 'never-made'), ref);
    }
    expect(existsSync(MARKER)).toBe(false);
    expect(readdirSync(dir).sort()).toEqual(['data', 'remote']);
  });

  it('the branch of a new worktree follows `--`, and `checkout -B` takes it as its own argument: git refuses a hostile one as a branch name', async () => {
    // The argv of Repo's new worktree (`branch … -- <branch> <start>`) and of a recycled one
    // (`checkout -B <branch> <start> --`), which only checked names reach.
    const { r } = repo();
    await r.fetch();
    const wt = path.join(dataDir, 'worktrees', 'job_b');
    await r.prepareWorktree(wt, 'folio/job_b', 'main');
    for (const branch of HOSTILE_REFS) {
      const created = await git(['branch', '--force', '--quiet', '--', branch, base], { cwd: r.mirror }).then(() => null, (e: unknown) => e);
      expect(created, branch).toBeInstanceOf(GitError);
      expect((created as GitError).detail, branch).toMatch(/not a valid branch name/);
      const checkedOut = await git(['checkout', '--quiet', '--force', '--ignore-other-worktrees', '-B', branch, base, '--'], { cwd: wt }).then(() => null, (e: unknown) => e);
      expect(checkedOut, branch).toBeInstanceOf(GitError);
      expect((checkedOut as GitError).detail, branch).toMatch(/not a valid branch name/);
    }
    await r.removeWorktree(wt, 'folio/job_b');
    expect(existsSync(MARKER)).toBe(false);
    expect(gitSync(['branch', '--list'], r.mirror).trim()).toBe('');
  });
});
