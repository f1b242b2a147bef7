import { existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GitError, Repo, mirrorPath } from '../../src/git/git.ts';
import { parseDiffFiles } from '../../src/git/diff.ts';
import { WorktreePool } from '../../src/git/worktree-pool.ts';
import { LOCAL_GIT, startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';

const TOKEN = 'ghp_testtoken_0123456789abcdef';
let host: CodeHostServer;
let dataDir: string;
let url: string;

beforeAll(async () => {
  host = await startCodeHost({ token: TOKEN });
  url = host.createRepo('acme/docs', { 'README.md': '# Docs\n', 'docs/index.md': '# Home\n' });
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-git-'));
});
afterAll(async () => {
  await host.close();
  rmSync(dataDir, { recursive: true, force: true });
});

function repo(token: string | null = TOKEN) {
  return new Repo({
    dataDir,
    repositoryUrl: url, ...LOCAL_GIT, pool: new WorktreePool({ dataDir: os.tmpdir(), size: 0 }),
    credentials: token ? { token, username: 'x-access-token' } : null,
    author: { name: 'Folio Agent', email: 'agent@folio.invalid' },
  });
}

/** Every file under dir (recursive) as text, to look for leaked secrets. */
function allText(dir: string): string {
  let out = '';
  for (const e of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (e.isFile()) out += readFileSync(path.join(e.parentPath, e.name)).toString('latin1');
  }
  return out;
}

describe('mirror, worktree, commit, push over smart HTTP', () => {
  it('creates a worktree on the job branch from the base, commits and pushes with the token from the environment only', async () => {
    const r = repo();
    const dir = path.join(dataDir, 'worktrees', 'job_1');
    const wt = await r.prepareWorktree(dir, 'folio/job_1', 'main');
    expect(wt.resumed).toBe(false);
    expect(readFileSync(path.join(dir, 'docs/index.md'), 'utf8')).toBe('# Home\n');
    expect(await r.commitAll(dir, 'nothing')).toBeNull();
    writeFileSync(path.join(dir, 'docs/new.md'), '# New\n');
    const c = await r.commitAll(dir, 'Add a page\n\nBody');
    expect(c?.files).toEqual(['docs/new.md']);
    await r.push(dir, 'folio/job_1');
    expect(host.show('acme/docs', 'folio/job_1', 'docs/new.md')).toBe('# New\n');
    expect(host.log('acme/docs', 'folio/job_1')).toEqual(['Add a page', 'Initial docs']);
    expect(host.gitAuthHeaders.length).toBeGreaterThan(0);
    // The token never lands on disk: not in the mirror, not in the worktree.
    const b64 = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
    const disk = allText(mirrorPath(dataDir, url)) + allText(dir);
    expect(disk).not.toContain(TOKEN);
    expect(disk).not.toContain(b64);
    expect(readFileSync(path.join(mirrorPath(dataDir, url), 'config'), 'utf8')).not.toContain('127.0.0.1');
    await r.removeWorktree(dir, 'folio/job_1');
    expect(existsSync(dir)).toBe(false);
  });

  it('resumes from the pushed job branch', async () => {
    const r = repo();
    const dir = path.join(dataDir, 'worktrees', 'job_1');
    const wt = await r.prepareWorktree(dir, 'folio/job_1', 'main');
    expect(wt.resumed).toBe(true);
    expect(readFileSync(path.join(dir, 'docs/new.md'), 'utf8')).toBe('# New\n');
    writeFileSync(path.join(dir, 'docs/new.md'), '# New\n\nMore.\n');
    await r.commitAll(dir, 'Follow-up');
    await r.push(dir, 'folio/job_1');
    expect(host.log('acme/docs', 'folio/job_1')).toEqual(['Follow-up', 'Add a page', 'Initial docs']);
    await r.removeWorktree(dir, 'folio/job_1');
  });

  it('recreates a worktree left behind by a dead run', async () => {
    const r = repo();
    const dir = path.join(dataDir, 'worktrees', 'job_2');
    await r.prepareWorktree(dir, 'folio/job_2', 'main');
    writeFileSync(path.join(dir, 'junk.md'), 'left over');
    const again = await r.prepareWorktree(dir, 'folio/job_2', 'main');
    expect(again.resumed).toBe(false);
    expect(existsSync(path.join(dir, 'junk.md'))).toBe(false);
    await r.removeWorktree(dir, 'folio/job_2');
  });

  it('fails clearly without credentials, without leaking the token in messages', async () => {
    const r = new Repo({ dataDir: mkdtempSync(path.join(os.tmpdir(), 'folio-git2-')), repositoryUrl: url, ...LOCAL_GIT, pool: new WorktreePool({ dataDir: os.tmpdir(), size: 0 }), credentials: null, author: { name: 'a', email: 'a@b' } });
    const err = await r.fetch().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GitError);
    expect((err as GitError).code).toBe('repository_auth_failed');
    expect((err as GitError).message).toBe("The code host refused the credentials; check the project's repository token and its access to the repository.");
    // What git printed is kept for the server log only.
    expect((err as GitError).detail).toMatch(/401|Authentication|could not read/i);
    const wrong = repo('wrong-token-value');
    const err2 = await wrong.prepareWorktree(path.join(dataDir, 'worktrees', 'x'), 'folio/x', 'main').catch((e: unknown) => e);
    expect((err2 as GitError).code).toBe('repository_auth_failed');
    expect((err2 as Error).message).not.toContain('wrong-token-value');
    expect((err2 as GitError).detail ?? '').not.toContain('wrong-token-value');
  });

  it('refuses a missing base branch and URLs with credentials', async () => {
    const err = await repo().prepareWorktree(path.join(dataDir, 'worktrees', 'job_3'), 'folio/job_3', 'nope').catch((e: unknown) => e);
    expect((err as GitError).code).toBe('base_branch_missing');
    expect(() => new Repo({ dataDir, repositoryUrl: 'https://user:pw@example.com/a/b.git', ...LOCAL_GIT, pool: new WorktreePool({ dataDir: os.tmpdir(), size: 0 }), credentials: null, author: { name: 'a', email: 'a@b' } })).toThrow(
      /contains credentials/,
    );
  });

  it('works with a local bare repository path (push-only)', async () => {
    const bare = path.join(host.root, 'acme/docs.git');
    const r = new Repo({ dataDir, repositoryUrl: bare, ...LOCAL_GIT, pool: new WorktreePool({ dataDir: os.tmpdir(), size: 0 }), credentials: null, author: { name: 'Folio Agent', email: 'agent@folio.invalid' } });
    const dir = path.join(dataDir, 'worktrees', 'job_4');
    await r.prepareWorktree(dir, 'folio/job_4', 'main');
    writeFileSync(path.join(dir, 'x.md'), 'x\n');
    await r.commitAll(dir, 'Local');
    await r.push(dir, 'folio/job_4');
    expect(host.log('acme/docs', 'folio/job_4')?.[0]).toBe('Local');
    await r.removeWorktree(dir, 'folio/job_4');
  });

  it('serialises concurrent jobs on one mirror', async () => {
    const r = repo();
    await Promise.all(
      [5, 6, 7].map(async (i) => {
        const dir = path.join(dataDir, 'worktrees', `job_c${i}`);
        await r.prepareWorktree(dir, `folio/job_c${i}`, 'main');
        writeFileSync(path.join(dir, `c${i}.md`), `${i}\n`);
        await r.commitAll(dir, `C${i}`);
        await r.push(dir, `folio/job_c${i}`);
        await r.removeWorktree(dir, `folio/job_c${i}`);
      }),
    );
    for (const i of [5, 6, 7]) expect(host.log('acme/docs', `folio/job_c${i}`)?.[0]).toBe(`C${i}`);
  });
});

describe('what a job branch changed', () => {
  it('files with status and line counts (renames, binaries), changed paths, a diff cut at a file boundary', async () => {
    const r = repo();
    const dir = path.join(dataDir, 'worktrees', 'job_diff');
    const wt = await r.prepareWorktree(dir, 'folio/job_diff', 'main');
    const { renameSync, mkdirSync } = await import('node:fs');
    writeFileSync(path.join(dir, 'docs/new.md'), '# New\n\nA\nB\n');
    writeFileSync(path.join(dir, 'README.md'), '# Docs\n\nMore.\n');
    mkdirSync(path.join(dir, 'guides'));
    renameSync(path.join(dir, 'docs/index.md'), path.join(dir, 'guides/index.md'));
    writeFileSync(path.join(dir, 'logo.png'), Buffer.from([0x89, 0x50, 0, 1, 2, 3]));
    writeFileSync(path.join(dir, 'big.md'), 'line\n'.repeat(50_000));
    const c = (await r.commitAll(dir, 'Changes'))!;
    await r.push(dir, 'folio/job_diff');
    const fork = (await r.forkPoint(c.sha, 'main'))!;
    expect(fork).toBe(wt.startSha);
    const files = await r.diffFiles(fork, c.sha);
    expect(files.sort((a, b) => (a.path < b.path ? -1 : 1))).toEqual([
      { path: 'README.md', status: 'modified', additions: 2, deletions: 0 },
      { path: 'big.md', status: 'added', additions: 50_000, deletions: 0 },
      { path: 'docs/new.md', status: 'added', additions: 4, deletions: 0 },
      { path: 'guides/index.md', status: 'renamed', previousPath: 'docs/index.md', additions: 0, deletions: 0 },
      { path: 'logo.png', status: 'added', additions: 0, deletions: 0, binary: true },
    ]);
    expect((await r.changedPaths(fork, c.sha)).sort()).toEqual(['README.md', 'big.md', 'docs/index.md', 'docs/new.md', 'guides/index.md', 'logo.png']);
    const whole = await r.diffText(fork, c.sha, 10_000_000);
    expect(whole.truncated).toBe(false);
    expect(whole.text).toContain('diff --git a/docs/new.md b/docs/new.md');
    expect(whole.text).toContain('rename from docs/index.md');
    const cut = await r.diffText(fork, c.sha, 5_000);
    expect(cut.truncated).toBe(true);
    expect(Buffer.byteLength(cut.text)).toBeLessThanOrEqual(5_000);
    // Whole files only: README.md comes before big.md (which alone is over the limit).
    expect(cut.text).toMatch(/^diff --git a\/README.md b\/README.md\n[\s\S]*\n$/);
    expect(cut.text).not.toContain('big.md');
    // Only commit ids reach git's command line.
    await expect(r.diffFiles('--output=/tmp/x', c.sha)).rejects.toThrow(GitError);
    await expect(r.diffText('HEAD', c.sha, 10)).rejects.toThrow('Not a commit id.');
    await r.removeWorktree(dir, 'folio/job_diff');
  });

  it('parses rename and binary lines of numstat -z', () => {
    expect(parseDiffFiles('R087\0a b.md\0c.md\0A\0d.bin\0', '3\t1\t\0a b.md\0c.md\0-\t-\td.bin\0')).toEqual([
      { path: 'c.md', status: 'renamed', previousPath: 'a b.md', additions: 3, deletions: 1 },
      { path: 'd.bin', status: 'added', additions: 0, deletions: 0, binary: true },
    ]);
    expect(parseDiffFiles('', '')).toEqual([]);
  });
});
