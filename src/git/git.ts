// Git plumbing with the system `git` binary: a bare mirror per repository (fetched before each run), a
// worktree per job on its own branch, commit and push. Credentials travel only in the environment of
// the git process (GIT_CONFIG_COUNT / http.extraHeader): never in argv, files, remote URLs or logs.
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';

export class GitError extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.name = 'GitError';
    this.code = code;
  }
}

export interface GitCredentials {
  /** Token for HTTPS remotes; null for none. */
  token: string | null;
  /** User name paired with the token in Basic auth: `x-access-token` (GitHub), `oauth2` (GitLab). */
  username: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Values to blank out of error messages. */
  secrets?: string[];
  input?: string;
}

function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}

/** Environment for a git process: no prompts, no inherited git settings that could redirect it. */
function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k.startsWith('GIT_')) continue;
    env[k] = v;
  }
  return { ...env, GIT_TERMINAL_PROMPT: '0', GIT_ASKPASS: '', SSH_ASKPASS: '', GCM_INTERACTIVE: 'never', LC_ALL: 'C', ...extra };
}

/** Environment entries that give git an Authorization header for this process only. */
export function credentialEnv(creds: GitCredentials | null): Record<string, string> {
  if (!creds?.token) return {};
  const basic = Buffer.from(`${creds.username}:${creds.token}`).toString('base64');
  return {
    GIT_CONFIG_COUNT: '1',
    GIT_CONFIG_KEY_0: 'http.extraHeader',
    GIT_CONFIG_VALUE_0: `Authorization: Basic ${basic}`,
  };
}

export function git(args: string[], opts: RunOptions = {}): Promise<string> {
  const secrets = opts.secrets ?? [];
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: opts.cwd,
      env: baseEnv(opts.env),
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      signal: opts.signal,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    child.on('error', (e) => {
      if ((e as Error).name === 'AbortError') reject(e);
      else reject(new GitError('git_error', `git could not be started: ${redact((e as Error).message, secrets)}`));
    });
    child.on('close', (code) => {
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      const msg = redact(Buffer.concat(err).toString('utf8').trim() || `exit code ${code}`, secrets);
      reject(new GitError('git_error', `git ${args[0]} failed: ${msg.slice(0, 2000)}`));
    });
  });
}

function gitBuffer(args: string[], cwd: string, input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: baseEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.resume();
    child.on('error', (e) => reject(new GitError('git_error', `git could not be started: ${e.message}`)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new GitError('git_error', `git ${args[0]} failed (exit ${code})`))));
    child.stdin.end(input);
  });
}

/** Rejects repository URLs that carry credentials (they would end up in process listings and logs). */
export function checkRepositoryUrl(url: string): void {
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(url)) {
    const u = new URL(url);
    if (u.username || u.password) {
      throw new GitError(
        'repository_url',
        'The repository URL contains credentials; remove them and set a repository token on the project instead.',
      );
    }
  }
}

// One fetch at a time per mirror within this process; git's own ref locks cover other processes.
const locks = new Map<string, Promise<unknown>>();
async function withLock<T>(key: string, fn: () => Promise<T>): Promise<T> {
  const prev = locks.get(key) ?? Promise.resolve();
  const run = prev.catch(() => undefined).then(fn);
  const tail = run.catch(() => undefined);
  locks.set(key, tail);
  try {
    return await run;
  } finally {
    if (locks.get(key) === tail) locks.delete(key);
  }
}

export interface GitWorkspaceOptions {
  dataDir: string;
  repositoryUrl: string;
  credentials: GitCredentials | null;
  author: { name: string; email: string };
}

export interface PreparedWorktree {
  dir: string;
  branch: string;
  /** The commit the worktree started from. */
  startSha: string;
  /** True when the job branch already existed on the remote (resumed run or follow-up). */
  resumed: boolean;
}

export function mirrorPath(dataDir: string, repositoryUrl: string): string {
  const id = createHash('sha256').update(repositoryUrl).digest('hex').slice(0, 24);
  return path.join(dataDir, 'mirrors', `${id}.git`);
}

export class Repo {
  readonly mirror: string;
  readonly #opts: GitWorkspaceOptions;
  readonly #secrets: string[];

  constructor(opts: GitWorkspaceOptions) {
    checkRepositoryUrl(opts.repositoryUrl);
    this.#opts = opts;
    this.mirror = mirrorPath(opts.dataDir, opts.repositoryUrl);
    this.#secrets = opts.credentials?.token
      ? [opts.credentials.token, Buffer.from(`${opts.credentials.username}:${opts.credentials.token}`).toString('base64')]
      : [];
  }

  #remote(args: string[], signal?: AbortSignal, cwd?: string): Promise<string> {
    return git(args, { cwd: cwd ?? this.mirror, env: credentialEnv(this.#opts.credentials), secrets: this.#secrets, signal });
  }

  /** Creates the bare mirror if needed and fetches every branch into refs/remotes/origin/*. */
  async fetch(signal?: AbortSignal): Promise<void> {
    await withLock(this.mirror, async () => {
      try {
        await fs.access(path.join(this.mirror, 'HEAD'));
      } catch {
        await fs.mkdir(this.mirror, { recursive: true });
        await git(['init', '--bare', '--quiet'], { cwd: this.mirror });
        // Objects only arrive through fetch below; nothing about the remote is stored.
        await git(['config', 'gc.auto', '0'], { cwd: this.mirror });
      }
      try {
        await this.#remote(
          ['fetch', '--quiet', '--prune', '--no-tags', this.#opts.repositoryUrl, '+refs/heads/*:refs/remotes/origin/*'],
          signal,
        );
      } catch (err) {
        if (err instanceof GitError) throw new GitError('repository_unavailable', err.message.replace(/^git fetch failed/, 'Fetching the repository failed'));
        throw err;
      }
    });
  }

  async revParse(ref: string, cwd = this.mirror): Promise<string | null> {
    try {
      return (await git(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`], { cwd })).trim() || null;
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
    const out = await git(
      ['for-each-ref', '--format=%(refname) %(objectname)', `refs/remotes/origin/${branch}`, `refs/remotes/origin/${baseBranch}`],
      { cwd: this.mirror },
    ).catch(() => '');
    const refs = new Map(out.split('\n').filter(Boolean).map((l) => l.split(' ') as [string, string]));
    return refs.get(`refs/remotes/origin/${branch}`) ?? refs.get(`refs/remotes/origin/${baseBranch}`) ?? null;
  }

  /** Reads a commit's tree without checking it out: every path, and the contents of chosen files. */
  async treeSource(sha: string): Promise<{ files: string[]; readMany(paths: string[]): Promise<Map<string, string>> }> {
    const list = await git(['ls-tree', '-r', '--name-only', '-z', sha], { cwd: this.mirror });
    const files = list.split('\0').filter(Boolean);
    const mirror = this.mirror;
    return {
      files,
      async readMany(paths) {
        const out = new Map<string, string>();
        if (paths.length === 0) return out;
        const raw = await gitBuffer(['cat-file', '--batch'], mirror, paths.map((p) => `${sha}:${p}`).join('\n') + '\n');
        let pos = 0;
        for (const p of paths) {
          const nl = raw.indexOf(10, pos);
          if (nl === -1) break;
          const header = raw.subarray(pos, nl).toString('utf8');
          pos = nl + 1;
          const m = /^[0-9a-f]+ (\w+) (\d+)$/.exec(header);
          if (!m) continue; // "<name> missing"
          const size = Number(m[2]);
          if (m[1] === 'blob') out.set(p, raw.subarray(pos, pos + size).toString('utf8'));
          pos += size + 1;
        }
        return out;
      },
    };
  }

  /**
   * A fresh worktree at `dir` on `branch`, from the pushed job branch if it exists, else from the base
   * branch. With `keepDir`, `dir` is an empty folder the caller created (and already cleaned).
   */
  async prepareWorktree(dir: string, branch: string, baseBranch: string, signal?: AbortSignal, opts: { keepDir?: boolean } = {}): Promise<PreparedWorktree> {
    await this.fetch(signal);
    if (!opts.keepDir) await this.removeWorktree(dir);
    const pushed = await this.revParse(`refs/remotes/origin/${branch}`);
    const base = await this.revParse(`refs/remotes/origin/${baseBranch}`);
    const start = pushed ?? base;
    if (!start) {
      throw new GitError('base_branch_missing', `The base branch "${baseBranch}" does not exist in the repository.`);
    }
    await fs.mkdir(path.dirname(dir), { recursive: true });
    await withLock(this.mirror, () =>
      git(['worktree', 'add', '--quiet', '--force', '-B', branch, dir, start], { cwd: this.mirror, signal }),
    );
    return { dir, branch, startSha: start, resumed: pushed !== null };
  }

  /** Removes a job's worktree (and its branch in the mirror); safe when it does not exist. */
  async removeWorktree(dir: string, branch?: string): Promise<void> {
    if (!branch) {
      try {
        await fs.access(dir);
      } catch {
        return; // nothing to remove, and no branch to delete
      }
    }
    await withLock(this.mirror, async () => {
      try {
        await git(['worktree', 'remove', '--force', '--force', dir], { cwd: this.mirror });
      } catch {
        // not registered (or already gone): fall through to deleting the folder
      }
      await fs.rm(dir, { recursive: true, force: true });
      await git(['worktree', 'prune'], { cwd: this.mirror }).catch(() => undefined);
      if (branch) await git(['branch', '-D', '--quiet', branch], { cwd: this.mirror }).catch(() => undefined);
    });
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

  /** Pushes HEAD of the worktree to the job branch on the remote (fast-forward only). */
  async push(dir: string, branch: string, signal?: AbortSignal): Promise<string> {
    const sha = (await git(['rev-parse', 'HEAD'], { cwd: dir })).trim();
    try {
      await this.#remote(['push', '--quiet', '--porcelain', this.#opts.repositoryUrl, `HEAD:refs/heads/${branch}`], signal, dir);
    } catch (err) {
      if (err instanceof GitError) throw new GitError('push_failed', err.message.replace(/^git push failed/, 'Pushing the branch failed'));
      throw err;
    }
    await git(['update-ref', `refs/remotes/origin/${branch}`, sha], { cwd: this.mirror }).catch(() => undefined);
    return sha;
  }

  /** Commits of the worktree's HEAD not on the remote job branch (or base), e.g. left by a run that died before pushing. */
  async unpushed(dir: string, branch: string, baseBranch: string): Promise<number> {
    const upstream = (await this.revParse(`refs/remotes/origin/${branch}`)) ?? (await this.revParse(`refs/remotes/origin/${baseBranch}`));
    if (!upstream) return 0;
    const out = await git(['rev-list', '--count', `${upstream}..HEAD`], { cwd: dir });
    return Number(out.trim());
  }
}
