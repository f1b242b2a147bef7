// A repository Folio works on: a bare mirror per repository (fetched before each run), a worktree
// per job on its own branch, commit and push, and what a job changed. Every value that comes from a
// user or the model is checked first (repository-url.ts) and follows `--` or `--end-of-options` in
// argv (or sits under a fixed ref prefix, or is `checkout -B`'s own argument), so git never reads it
// as an option; git may use only the transports the operator allows, and a remote's host must pass
// the outbound address policy (remote.ts talks to the remote). Running git is run.ts; what a process shares between jobs (mirror
// locks, fetch rounds, idle worktrees) is worktree-pool.ts.
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { git, gitBuffer, gitHead, GitError } from './run.ts';
import { runRemote, type RemoteOptions } from './remote.ts';
import { parseDiffFiles, type DiffFile } from './diff.ts';
import type { WorktreePool } from './worktree-pool.ts';
import { checkBranchName, checkRepositoryUrl, RepositoryInputError, type CheckedRepository } from './repository-url.ts';

export { GitError, type GitCredentials } from './run.ts';
export type { DiffFile } from './diff.ts';

/** A branch name from a user (a project's base branch) or a setting, checked before it reaches git. */
function checkBranch(name: string, what = 'Branch'): void {
  try {
    checkBranchName(name, what);
  } catch (err) {
    if (err instanceof RepositoryInputError) throw new GitError(err.code, err.message);
    throw err;
  }
}

export interface GitWorkspaceOptions extends RemoteOptions {
  dataDir: string;
  author: { name: string; email: string };
  /** The process's mirror locks, shared fetches and idle worktrees. */
  pool: WorktreePool;
}

export interface PreparedWorktree {
  dir: string;
  branch: string;
  /** The commit the worktree started from. */
  startSha: string;
  /** True when the job branch already existed on the remote (resumed run or follow-up). */
  resumed: boolean;
  /** True when an idle worktree was reset for this job instead of checking out every file. */
  recycled: boolean;
}

/**
 * A job's exclusive hold on a worktree at `dir`: either a recycled one (moved there from the pool) or
 * a new, empty folder. `prepare` puts it on the job branch; `release` returns it to the pool or
 * removes it, and always deletes the job branch from the mirror.
 */
export interface WorktreeLease {
  readonly dir: string;
  /** Fetches (shared with concurrent jobs) and checks out `branch` from the pushed job branch, else the base. Once per lease. */
  prepare(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PreparedWorktree>;
  /** Waits for `prepare` to settle, then recycles the worktree (when it was prepared) or removes it. Idempotent. */
  release(): Promise<void>;
}

export function mirrorPath(dataDir: string, repositoryUrl: string): string {
  const id = createHash('sha256').update(repositoryUrl).digest('hex').slice(0, 24);
  return path.join(dataDir, 'mirrors', `${id}.git`);
}

export class Repo {
  readonly mirror: string;
  readonly #opts: GitWorkspaceOptions;
  readonly #fetchKey: string;
  readonly #remoteRepo: CheckedRepository;

  /** Throws GitError `invalid_repository_url` for a URL the policy refuses (e.g. saved before it existed). */
  constructor(opts: GitWorkspaceOptions) {
    try {
      this.#remoteRepo = checkRepositoryUrl(opts.repositoryUrl, opts.policy);
    } catch (err) {
      if (err instanceof RepositoryInputError) throw new GitError(err.code, err.message);
      throw err;
    }
    this.#opts = opts;
    this.mirror = mirrorPath(opts.dataDir, opts.repositoryUrl);
    // Jobs share a fetch only with the same credentials: a wrong token must still fail on its own.
    const who = opts.credentials?.token ? createHash('sha256').update(`${opts.credentials.username}:${opts.credentials.token}`).digest('hex') : '';
    this.#fetchKey = `${this.mirror}\0${who}`;
  }

  /** Runs a git command that talks to the remote (remote.ts): the URL and `refspecs` follow `--`. */
  #remote(what: 'fetch' | 'push', options: string[], refspecs: string[], signal?: AbortSignal, cwd?: string): Promise<string> {
    return runRemote(this.#opts, this.#remoteRepo, what, options, refspecs, { cwd: cwd ?? this.mirror, signal });
  }

  /**
   * Creates the bare mirror if needed and fetches every branch into refs/remotes/origin/*. Concurrent
   * callers with the same credentials share one fetch that started after they asked.
   */
  fetch(signal?: AbortSignal): Promise<void> {
    const { pool } = this.#opts;
    return pool.fetches.run(this.#fetchKey, (shared) => pool.locked(this.mirror, () => this.#fetchNow(shared)), signal);
  }

  async #fetchNow(signal: AbortSignal): Promise<void> {
    try {
      await fs.access(path.join(this.mirror, 'HEAD'));
    } catch {
      await fs.mkdir(this.mirror, { recursive: true });
      await git(['init', '--bare', '--quiet'], { cwd: this.mirror });
      // Objects only arrive through fetch below; nothing about the remote is stored.
      await git(['config', 'gc.auto', '0'], { cwd: this.mirror });
    }
    await this.#remote('fetch', ['--quiet', '--prune', '--no-tags'], ['+refs/heads/*:refs/remotes/origin/*'], signal);
  }

  async revParse(ref: string, cwd = this.mirror): Promise<string | null> {
    try {
      return (await git(['rev-parse', '--verify', '--quiet', '--end-of-options', `${ref}^{commit}`], { cwd })).trim() || null;
    } catch {
      return null;
    }
  }

  /** The commit a job would start from with the mirror as it is now (no fetch); null without a mirror. */
  async currentStart(branch: string, baseBranch: string): Promise<string | null> {
    try {
      await fs.access(path.join(this.mirror, 'HEAD'));
    } catch {
      return null;
    }
    const { pushed, base } = await this.#starts(branch, baseBranch).catch(() => ({ pushed: null, base: null }));
    return pushed ?? base;
  }

  /** The fetched job branch and base branch commits (one git call). */
  async #starts(branch: string, baseBranch: string): Promise<{ pushed: string | null; base: string | null }> {
    const out = await git(
      ['for-each-ref', '--format=%(refname) %(objectname)', `refs/remotes/origin/${branch}`, `refs/remotes/origin/${baseBranch}`],
      { cwd: this.mirror },
    );
    const refs = new Map(out.split('\n').filter(Boolean).map((l) => l.split(' ') as [string, string]));
    return { pushed: refs.get(`refs/remotes/origin/${branch}`) ?? null, base: refs.get(`refs/remotes/origin/${baseBranch}`) ?? null };
  }

  /**
   * Reads a commit's tree without checking it out: every path, and the contents of chosen files. A
   * file's size is asked of git first (`cat-file --batch-check`) and only files of at most `maxBytes`
   * are read: larger ones are left out of the answer and listed in `skipped` with their sizes, so a
   * huge blob never reaches this process's memory.
   */
  async treeSource(sha: string, maxBytes: number): Promise<TreeSource> {
    const commit = checkSha(sha);
    const list = await git(['ls-tree', '-r', '--name-only', '-z', '--end-of-options', commit], { cwd: this.mirror });
    const files = list.split('\0').filter(Boolean);
    const mirror = this.mirror;
    const skipped = new Map<string, number>();
    const blobs = new Map<string, { id: string; size: number } | null>();
    const sizes = async (paths: string[]) => {
      // git's batch protocol is line-based: a name holding a line break cannot be asked for.
      const unknown = [...new Set(paths)].filter((p) => !blobs.has(p) && !/[\n\r]/.test(p));
      if (unknown.length > 0) {
        const found = await blobSizes(mirror, commit, unknown);
        for (const p of unknown) blobs.set(p, found.get(p) ?? null);
      }
      const out = new Map<string, number>();
      for (const p of paths) {
        const blob = blobs.get(p);
        if (blob) out.set(p, blob.size);
      }
      return out;
    };
    return {
      files,
      skipped,
      sizes,
      async readMany(paths) {
        const out = new Map<string, string>();
        const wanted = new Map<string, string>();
        for (const [p, size] of await sizes(paths)) {
          if (size > maxBytes) skipped.set(p, size);
          else wanted.set(p, blobs.get(p)!.id);
        }
        if (wanted.size === 0) return out;
        const raw = await gitBuffer(['cat-file', '--batch'], mirror, [...wanted.values()].join('\n') + '\n');
        let pos = 0;
        for (const p of wanted.keys()) {
          const nl = raw.indexOf(10, pos);
          if (nl === -1) break;
          const m = /^[0-9a-f]+ blob (\d+)$/.exec(raw.subarray(pos, nl).toString('utf8'));
          if (!m) break;
          const size = Number(m[1]);
          out.set(p, raw.subarray(nl + 1, nl + 1 + size).toString('utf8'));
          pos = nl + 1 + size + 1;
        }
        return out;
      },
    };
  }

  /**
   * Takes a worktree for a job at `dir`: an idle one of this repository from the pool when there is
   * one (moved to `dir`), else a new empty folder. Anything left at `dir` by a run that died is
   * removed first. The folder exists when this returns, so the caller may open it before `prepare`.
   */
  async acquireWorktree(dir: string): Promise<WorktreeLease> {
    const target = path.resolve(dir);
    await this.removeWorktree(target);
    const recycled = await this.#opts.pool.take(this.mirror, target);
    if (!recycled) await fs.mkdir(target, { recursive: true });
    return this.#lease(target, recycled);
  }

  #lease(dir: string, recycledAtStart: boolean): WorktreeLease {
    let recycled = recycledAtStart;
    let branchName: string | undefined;
    let prep: Promise<PreparedWorktree> | undefined;
    let released: Promise<void> | undefined;
    const mirror = this.mirror;
    const { pool } = this.#opts;

    const doPrepare = async (branch: string, baseBranch: string, signal?: AbortSignal): Promise<PreparedWorktree> => {
      await this.fetch(signal);
      const { pushed, base } = await this.#starts(branch, baseBranch);
      const start = pushed ?? base;
      if (!start) throw new GitError('base_branch_missing', `The base branch "${baseBranch}" does not exist in the repository.`);
      const done = (): PreparedWorktree => ({ dir, branch, startSha: start, resumed: pushed !== null, recycled });
      if (recycled) {
        try {
          // Rewrites only the files that differ from `start`; the index is reset to its tree. Then every
          // untracked and ignored file and folder (nested repositories too) goes.
          await git(['checkout', '--quiet', '--force', '--ignore-other-worktrees', '-B', branch, start, '--'], { cwd: dir, signal });
          await git(['clean', '-ffdxq'], { cwd: dir, signal });
          return done();
        } catch (err) {
          if (signal?.aborted) throw err;
          // A worktree that cannot be reset (e.g. a stale index.lock) is replaced by a new checkout.
          recycled = false;
          await pool.remove(mirror, dir);
          await fs.mkdir(dir, { recursive: true });
        }
      }
      // Registered under the lock without files (milliseconds), then checked out outside it, so
      // concurrent jobs write their files in parallel. The branch is made first, after `--`: `worktree
      // add -B <branch>` would hand it to an inner `git branch` without one, where it reads as an option.
      await pool.locked(mirror, async () => {
        await git(['branch', '--force', '--quiet', '--', branch, start], { cwd: mirror, signal });
        await git(['worktree', 'add', '--quiet', '--force', '--no-checkout', '--', dir, branch], { cwd: mirror, signal });
      });
      await git(['reset', '--hard', '--quiet'], { cwd: dir, signal });
      return done();
    };

    const doRelease = async (): Promise<void> => {
      // Never touch a worktree while git may still be writing it; recycle only one that became ready.
      const ready = prep ? await prep.then(() => true, () => false) : false;
      if (ready && pool.size > 0) {
        try {
          // Detach HEAD without touching the index or files, so the job branch can be deleted and
          // checked out elsewhere (a follow-up), then park the worktree in the pool.
          await git(['update-ref', '--no-deref', 'HEAD', 'HEAD'], { cwd: dir });
          if (branchName) {
            const name = branchName;
            await pool.locked(mirror, () => git(['branch', '-D', '--quiet', '--', name], { cwd: mirror }).catch(() => undefined));
          }
          if (await pool.put(mirror, dir)) return;
        } catch {
          // Removed below instead.
        }
      }
      await pool.remove(mirror, dir, branchName);
    };

    return {
      dir,
      prepare(branch, baseBranch, signal) {
        if (prep) throw new GitError('git_error', 'A worktree lease is prepared once.');
        checkBranch(branch);
        checkBranch(baseBranch, 'Base branch');
        branchName = branch;
        prep = doPrepare(branch, baseBranch, signal);
        prep.catch(() => undefined); // the caller handles the outcome; release only waits for it
        return prep;
      },
      release() {
        released ??= doRelease();
        return released;
      },
    };
  }

  /** A fresh worktree at `dir` on `branch`, from the pushed job branch if it exists, else from the base branch (no pool). */
  async prepareWorktree(dir: string, branch: string, baseBranch: string, signal?: AbortSignal): Promise<PreparedWorktree> {
    const target = path.resolve(dir);
    await this.removeWorktree(target);
    await fs.mkdir(target, { recursive: true });
    const lease = this.#lease(target, false);
    try {
      return await lease.prepare(branch, baseBranch, signal);
    } catch (err) {
      await fs.rm(target, { recursive: true, force: true }).catch(() => undefined);
      throw err;
    }
  }

  /** Removes a job's worktree (and its branch in the mirror); safe when it does not exist. */
  async removeWorktree(dir: string, branch?: string): Promise<void> {
    try {
      await fs.access(dir);
    } catch {
      // nothing to remove; the branch may still exist
      if (branch) await this.#opts.pool.locked(this.mirror, () => git(['branch', '-D', '--quiet', '--', branch], { cwd: this.mirror }).catch(() => undefined));
      return;
    }
    await this.#opts.pool.remove(this.mirror, dir, branch);
  }

  /** Stages everything and commits; returns the new commit, or null when nothing changed. */
  async commitAll(dir: string, message: string): Promise<{ sha: string; files: string[] } | null> {
    await git(['add', '--all'], { cwd: dir });
    const status = await git(['diff', '--cached', '--name-only', '-z'], { cwd: dir });
    const files = status.split('\0').filter(Boolean);
    if (files.length === 0) return null;
    const { name, email } = this.#opts.author;
    await git(['commit', '--quiet', '--no-verify', '--no-gpg-sign', '-F', '-'], {
      cwd: dir,
      input: message,
      env: {
        GIT_AUTHOR_NAME: name,
        GIT_AUTHOR_EMAIL: email,
        GIT_COMMITTER_NAME: name,
        GIT_COMMITTER_EMAIL: email,
      },
    });
    const sha = (await git(['rev-parse', 'HEAD'], { cwd: dir })).trim();
    return { sha, files };
  }

  /** Pushes HEAD of the worktree (`sha` when the caller knows it) to the job branch on the remote (fast-forward only). */
  async push(dir: string, branch: string, signal?: AbortSignal, knownSha?: string): Promise<string> {
    checkBranch(branch);
    const sha = knownSha ?? (await git(['rev-parse', 'HEAD'], { cwd: dir })).trim();
    await this.#remote('push', ['--quiet', '--porcelain'], [`HEAD:refs/heads/${branch}`], signal, dir);
    await git(['update-ref', '--', `refs/remotes/origin/${branch}`, sha], { cwd: this.mirror }).catch(() => undefined);
    return sha;
  }

  /**
   * Where the job's branch forked from the base branch: the merge base of `headSha` and the fetched
   * base branch (the base tip itself before the job's first push). Null when the base branch is gone.
   */
  async forkPoint(headSha: string, baseBranch: string): Promise<string | null> {
    const base = await this.revParse(`refs/remotes/origin/${baseBranch}`);
    if (!base) return null;
    try {
      return (await git(['merge-base', '--', checkSha(base), checkSha(headSha)], { cwd: this.mirror })).trim() || null;
    } catch {
      return null;
    }
  }

  /** Paths that differ between two commits (renames as a deletion and an addition). */
  async changedPaths(fromSha: string, toSha: string): Promise<string[]> {
    if (fromSha === toSha) return [];
    const out = await git(['diff', '--name-only', '-z', '--no-renames', '--no-ext-diff', checkSha(fromSha), checkSha(toSha), '--'], { cwd: this.mirror });
    return out.split('\0').filter(Boolean);
  }

  /** What changed between two commits, file by file: status, lines added and deleted (renames detected). */
  async diffFiles(fromSha: string, toSha: string): Promise<DiffFile[]> {
    const range = [checkSha(fromSha), checkSha(toSha)];
    const [status, numstat] = await Promise.all([
      git(['diff', '--name-status', '-z', '-M', '--no-ext-diff', ...range, '--'], { cwd: this.mirror }),
      git(['diff', '--numstat', '-z', '-M', '--no-ext-diff', ...range, '--'], { cwd: this.mirror }),
    ]);
    return parseDiffFiles(status, numstat);
  }

  /**
   * The unified diff between two commits, cut at a file boundary to at most `maxBytes` (UTF-8).
   * `truncated` says files were left out.
   */
  async diffText(fromSha: string, toSha: string, maxBytes: number): Promise<{ text: string; truncated: boolean }> {
    const args = ['diff', '-M', '--no-color', '--no-ext-diff', '--no-textconv', checkSha(fromSha), checkSha(toSha), '--'];
    const { out, cut } = await gitHead(args, this.mirror, maxBytes + 1);
    if (!cut && out.length <= maxBytes) return { text: out.toString('utf8'), truncated: false };
    // Keep whole files only: up to the last file header that starts within the limit.
    const text = out.subarray(0, maxBytes).toString('utf8');
    const last = text.lastIndexOf('\ndiff --git ');
    return { text: last === -1 ? '' : text.slice(0, last + 1), truncated: true };
  }
}

/** A commit's files as treeSource reads them. */
export interface TreeSource {
  files: string[];
  /** Files a read left out because they are larger than its limit, with their sizes in bytes. */
  skipped: Map<string, number>;
  /** Sizes in bytes of the given paths that name blobs (asked of git once per path). */
  sizes(paths: string[]): Promise<Map<string, number>>;
  /** Contents of the given files that exist, are blobs and are within the limit. */
  readMany(paths: string[]): Promise<Map<string, string>>;
}

/** The blob id and size of each path that names a blob in `commit` (missing paths and trees are left out). */
async function blobSizes(mirror: string, commit: string, paths: string[]): Promise<Map<string, { id: string; size: number }>> {
  const out = await gitBuffer(['cat-file', '--batch-check'], mirror, paths.map((p) => `${commit}:${p}`).join('\n') + '\n');
  const lines = out.toString('utf8').split('\n');
  const sizes = new Map<string, { id: string; size: number }>();
  paths.forEach((p, i) => {
    const m = /^([0-9a-f]{40,64}) blob (\d+)$/.exec(lines[i] ?? '');
    if (m) sizes.set(p, { id: m[1], size: Number(m[2]) });
  });
  return sizes;
}

/** A commit id as git printed it; anything else is refused before it reaches a git command line. */
function checkSha(sha: string): string {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) throw new GitError('git_error', 'Not a commit id.');
  return sha;
}
