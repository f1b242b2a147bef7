// Git plumbing with the system `git` binary: a bare mirror per repository (fetched before each run), a
// worktree per job on its own branch, commit and push. Credentials travel only in the environment of
// the git process (GIT_CONFIG_COUNT / http.extraHeader): never in argv, files, remote URLs or logs.
// Every value that comes from a user or the model is checked first (repository-url.ts) and follows
// `--` or `--end-of-options` in argv, so git never reads it as an option; git may use only the
// transports the operator allows (GIT_ALLOW_PROTOCOL), and a remote's host must pass the outbound
// address policy. git's own output never leaves this module in an error message: GitError carries a
// stable code and a sentence for clients, and `detail` (stderr, secrets blanked) for the server log.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Coalescer } from './coalesce.ts';
import { childProcessEnv } from '../config.ts';
import { checkBranchName, checkRepositoryUrl, gitAllowProtocol, RepositoryInputError, type CheckedRepository, type RepositoryPolicy } from './repository-url.ts';
import { OutboundRefusedError, resolveAllowed, UnresolvedHostError, type OutboundPolicy, type Resolve } from '../net/address-policy.ts';

export class GitError extends Error {
  readonly code: string;
  /** What git printed (secrets blanked): for the server log only, never for clients or job events. */
  readonly detail: string | undefined;
  constructor(code: string, message: string, detail?: string) {
    super(message);
    this.name = 'GitError';
    this.code = code;
    this.detail = detail;
  }
}

/** A branch name from a user (a project's base branch) or a setting, checked before it reaches git. */
function checkBranch(name: string, what = 'Branch'): void {
  try {
    checkBranchName(name, what);
  } catch (err) {
    if (err instanceof RepositoryInputError) throw new GitError(err.code, err.message);
    throw err;
  }
}

/** Why a fetch or push failed, told from git's output but without repeating it. */
function remoteFailure(what: 'fetch' | 'push', err: GitError): GitError {
  const out = err.detail ?? '';
  const [code, message] =
    /transport '[^']*' not allowed|unsupported protocol/i.test(out)
      ? ['repository_protocol_refused', 'git refused the repository\'s transport on this server.']
      : /authentication failed|could not read (username|password)|permission denied|http (401|403)|\b40[13]\b|access denied|invalid credentials/i.test(out)
        ? ['repository_auth_failed', 'The code host refused the credentials; check the project\'s repository token and its access to the repository.']
        : /repository .*not found|not found|does not appear to be a git repository|\b404\b|does not exist/i.test(out)
          ? ['repository_not_found', 'The repository was not found; check the repository URL and that the token can see it.']
          : /could not resolve host|connection (refused|timed out|reset)|timed out|network is unreachable|unable to access|failed to connect/i.test(out)
            ? ['repository_unreachable', 'The repository\'s host could not be reached.']
            : what === 'push' && /\[rejected\]|non-fast-forward|fetch first|protected branch|pre-receive hook declined/i.test(out)
              ? ['push_rejected', 'The code host rejected the push of the job branch (a protected branch, a hook, or commits made there by someone else).']
              : what === 'push'
                ? ['push_failed', 'Pushing the job branch failed.']
                : ['repository_unavailable', 'Fetching the repository failed.'];
  return new GitError(code, message, out);
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

/** The inherited part of git's environment: PATH, HOME, proxies… never Folio's secrets or GIT_* settings. */
const inherited = childProcessEnv();

/**
 * Environment for a git process: no prompts, no system or user git configuration (which could rewrite
 * URLs, add credential helpers or hooks), and local transports only (file) unless a Repo widens it
 * for its remote's transport.
 */
function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...inherited,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GCM_INTERACTIVE: 'never',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ALLOW_PROTOCOL: 'file',
    LC_ALL: 'C',
    ...extra,
  };
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
    let aborted: Error | null = null;
    child.on('error', (e) => {
      // An aborted git is killed: settle once it has exited, so nobody touches files it may still write.
      if ((e as Error).name === 'AbortError') {
        aborted = e;
        if (child.pid === undefined) reject(e);
      } else reject(new GitError('git_error', 'git could not be started on the server.', redact((e as Error).message, secrets)));
    });
    child.on('close', (code) => {
      if (aborted) return reject(aborted);
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      const detail = redact(Buffer.concat(err).toString('utf8').trim() || `exit code ${code}`, secrets).slice(0, 4000);
      reject(new GitError('git_error', `A git ${args[0]} command failed on the server.`, detail));
    });
  });
}

function gitBuffer(args: string[], cwd: string, input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: baseEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.resume();
    child.on('error', (e) => reject(new GitError('git_error', 'git could not be started on the server.', e.message)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new GitError('git_error', `A git ${args[0]} command failed on the server.`, `exit code ${code}`))));
    child.stdin.end(input);
  });
}

// Fetches of one mirror run one at a time within this process (git's own ref locks cover other
// processes); concurrent jobs of one repository with the same credentials share a fetch (coalesce.ts).
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

/** Shared fetch rounds of every mirror in this process. */
export const fetchRounds = new Coalescer();

export interface GitWorkspaceOptions {
  dataDir: string;
  repositoryUrl: string;
  /** Which repository URLs and transports are allowed (config.repositories). */
  policy: RepositoryPolicy;
  /** Which networks the remote's host may be in besides public ones (config.outbound). */
  outbound: OutboundPolicy;
  /** Name resolution for the outbound check (tests). */
  resolve?: Resolve;
  credentials: GitCredentials | null;
  author: { name: string; email: string };
  /**
   * Idle worktrees this process keeps for later jobs, all repositories together (the least recently
   * released is removed first). 0 (the default) removes every worktree when its lease ends.
   */
  worktreePool?: number;
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

/** Where idle worktrees of a mirror wait: `<dataDir>/worktrees/.pool/<mirror id>/<pid>-<instance>-<n>`. */
export function poolPath(dataDir: string, mirror: string): string {
  return path.join(dataDir, 'worktrees', '.pool', path.basename(mirror, '.git'));
}

// ---- The worktree pool (per process) ----------------------------------------------------------------
// A job's turn ends by handing its worktree to the pool instead of deleting it; the next job of that
// repository moves it to its own folder and resets it with `git checkout --force -B <branch> <start>`
// and `git clean -ffdx`, which rewrite only the files that differ. An idle worktree is taken out of the
// pool synchronously, so two jobs never hold the same one. Folders of a pool carry this process's pid
// and a random instance id; those of dead processes are removed the first time a mirror is used.

const INSTANCE = `${process.pid}-${randomBytes(4).toString('hex')}`;
let slotCounter = 0;

interface Spare {
  mirror: string;
  dir: string;
  /** Its record in the mirror (`worktrees/<id>`), whose path its `.git` file holds. */
  admin: string;
}
/** Idle worktrees, least recently released first. */
const spares: Spare[] = [];
const sweptMirrors = new Set<string>();
const background = new Set<Promise<void>>();

function inBackground(work: Promise<void>): void {
  const p: Promise<void> = work.catch(() => undefined).finally(() => background.delete(p));
  background.add(p);
}

/** Idle worktrees held by this process (all mirrors, or one). */
export function pooledWorktrees(mirror?: string): string[] {
  return spares.filter((s) => !mirror || s.mirror === mirror).map((s) => s.dir);
}

/** Waits until background removals (evicted idle worktrees, folders of dead processes) are done. */
export async function worktreePoolSettled(): Promise<void> {
  while (background.size > 0) await Promise.all([...background]);
}

/** Removes every idle worktree of this process and waits for background removals (shutdown, tests). */
export async function drainWorktreePool(): Promise<void> {
  for (const s of spares.splice(0)) inBackground(removeDir(s.mirror, s.dir));
  await worktreePoolSettled();
}

function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Removes pool folders of this mirror left by processes that are gone (or by an earlier run of this pid). */
async function sweepOrphans(dataDir: string, mirror: string): Promise<void> {
  const root = poolPath(dataDir, mirror);
  let names: string[];
  try {
    names = await fs.readdir(root);
  } catch {
    return;
  }
  for (const name of names) {
    const m = /^(\d+)-([0-9a-f]+)-\d+$/.exec(name);
    if (!m) continue;
    const pid = Number(m[1]);
    if (`${m[1]}-${m[2]}` === INSTANCE || (pid !== process.pid && processAlive(pid))) continue;
    await removeDir(mirror, path.join(root, name));
  }
}

/**
 * Removes a linked worktree's folder (outside the lock: the slow part), then its record in the mirror
 * and the branch, if given. Commands that read every worktree's record (`worktree add/prune`,
 * `branch -D`, `fetch`) run under the mirror's lock: git 2.39 dies reading a record another
 * `worktree add` is still writing ("failed to read worktrees/<id>/commondir").
 */
async function removeDir(mirror: string, dir: string, branch?: string): Promise<void> {
  await fs.rm(dir, { recursive: true, force: true });
  await withLock(mirror, async () => {
    await git(['worktree', 'prune'], { cwd: mirror }).catch(() => undefined);
    if (branch) await git(['branch', '-D', '--quiet', '--', branch], { cwd: mirror }).catch(() => undefined);
  });
}

/** Replaces a small file atomically (readers never see it empty). */
async function writeAtomic(file: string, text: string): Promise<void> {
  const tmp = `${file}.folio-${randomBytes(4).toString('hex')}`;
  await fs.writeFile(tmp, text);
  await fs.rename(tmp, file);
}

/**
 * Moves a linked worktree: renames its folder and points git's administrative files at the new place
 * (`$GIT_COMMON_DIR/worktrees/<id>/gitdir` and the worktree's `.git` file, as gitrepository-layout
 * describes them). The worktree is locked meanwhile, so a concurrent `git worktree prune` cannot take
 * it for a deleted one. File stat data is unchanged by a rename, so the index stays valid.
 */
async function moveWorktree(from: string, to: string, knownAdmin?: string): Promise<string> {
  let admin = knownAdmin;
  let relative = false;
  if (!admin) {
    const text = await fs.readFile(path.join(from, '.git'), 'utf8');
    const m = /^gitdir: (.+)$/m.exec(text);
    if (!m) throw new GitError('git_error', `${from} is not a linked worktree.`);
    relative = !path.isAbsolute(m[1].trim());
    admin = path.resolve(from, m[1].trim());
  }
  const lock = path.join(admin, 'locked');
  await Promise.all([fs.writeFile(lock, 'folio: moving the worktree\n'), fs.mkdir(path.dirname(to), { recursive: true })]);
  try {
    await fs.rename(from, to);
    await Promise.all([
      writeAtomic(path.join(admin, 'gitdir'), `${path.join(to, '.git')}\n`),
      // git writes an absolute path to its record unless worktree.useRelativePaths is set.
      relative ? writeAtomic(path.join(to, '.git'), `gitdir: ${admin}\n`) : undefined,
    ]);
  } finally {
    await fs.rm(lock, { force: true });
  }
  return admin;
}

export class Repo {
  readonly mirror: string;
  readonly #opts: GitWorkspaceOptions;
  readonly #secrets: string[];
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
    this.#secrets = opts.credentials?.token
      ? [opts.credentials.token, Buffer.from(`${opts.credentials.username}:${opts.credentials.token}`).toString('base64')]
      : [];
    // Jobs share a fetch only with the same credentials: a wrong token must still fail on its own.
    const who = opts.credentials?.token ? createHash('sha256').update(`${opts.credentials.username}:${opts.credentials.token}`).digest('hex') : '';
    this.#fetchKey = `${this.mirror}\0${who}`;
  }

  /**
   * Runs a git command that talks to the remote (`args` end with `--`, the URL and refspecs): only
   * after the remote's host passed the outbound policy, with git's transports limited to the policy's.
   */
  async #remote(what: 'fetch' | 'push', options: string[], refspecs: string[], signal?: AbortSignal, cwd?: string): Promise<string> {
    const { host, transport } = this.#remoteRepo;
    if (host !== null && transport !== 'file') {
      try {
        await resolveAllowed(host, this.#opts.outbound, this.#opts.resolve);
      } catch (err) {
        if (err instanceof OutboundRefusedError) throw new GitError('repository_address_refused', `The repository's host: ${err.message}`);
        if (err instanceof UnresolvedHostError) throw new GitError('repository_unreachable', "The repository's host could not be reached.", err.message);
        throw err;
      }
    }
    const env = { ...credentialEnv(this.#opts.credentials), GIT_ALLOW_PROTOCOL: gitAllowProtocol(this.#opts.policy) };
    try {
      return await git([what, ...options, '--', this.#opts.repositoryUrl, ...refspecs], { cwd: cwd ?? this.mirror, env, secrets: this.#secrets, signal });
    } catch (err) {
      if (err instanceof GitError) throw remoteFailure(what, err);
      throw err;
    }
  }

  /**
   * Creates the bare mirror if needed and fetches every branch into refs/remotes/origin/*. Concurrent
   * callers with the same credentials share one fetch that started after they asked.
   */
  fetch(signal?: AbortSignal): Promise<void> {
    return fetchRounds.run(this.#fetchKey, (shared) => withLock(this.mirror, () => this.#fetchNow(shared)), signal);
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

  /** Reads a commit's tree without checking it out: every path, and the contents of chosen files. */
  async treeSource(sha: string): Promise<{ files: string[]; readMany(paths: string[]): Promise<Map<string, string>> }> {
    const list = await git(['ls-tree', '-r', '--name-only', '-z', '--end-of-options', sha], { cwd: this.mirror });
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
   * Takes a worktree for a job at `dir`: an idle one of this repository from the pool when there is
   * one (moved to `dir`), else a new empty folder. Anything left at `dir` by a run that died is
   * removed first. The folder exists when this returns, so the caller may open it before `prepare`.
   */
  async acquireWorktree(dir: string): Promise<WorktreeLease> {
    const target = path.resolve(dir);
    if (!sweptMirrors.has(this.mirror)) {
      sweptMirrors.add(this.mirror);
      inBackground(sweepOrphans(this.#opts.dataDir, this.mirror));
    }
    await this.removeWorktree(target);
    let recycled = false;
    if ((this.#opts.worktreePool ?? 0) > 0) {
      for (;;) {
        // Found and taken out in one synchronous step: no other job can take the same worktree.
        const i = spares.findLastIndex((s) => s.mirror === this.mirror);
        if (i === -1) break;
        const [spare] = spares.splice(i, 1);
        try {
          await moveWorktree(spare.dir, target, spare.admin);
          recycled = true;
          break;
        } catch {
          inBackground(removeDir(this.mirror, spare.dir));
          await this.removeWorktree(target);
        }
      }
    }
    if (!recycled) await fs.mkdir(target, { recursive: true });
    return this.#lease(target, recycled);
  }

  #lease(dir: string, recycledAtStart: boolean): WorktreeLease {
    let recycled = recycledAtStart;
    let branchName: string | undefined;
    let prep: Promise<PreparedWorktree> | undefined;
    let released: Promise<void> | undefined;
    const mirror = this.mirror;
    const poolSize = this.#opts.worktreePool ?? 0;

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
          await removeDir(mirror, dir);
          await fs.mkdir(dir, { recursive: true });
        }
      }
      // Registered under the lock without files (milliseconds), then checked out outside it, so
      // concurrent jobs write their files in parallel.
      await withLock(mirror, () => git(['worktree', 'add', '--quiet', '--force', '--no-checkout', '-B', branch, '--', dir, start], { cwd: mirror, signal }));
      await git(['reset', '--hard', '--quiet'], { cwd: dir, signal });
      return done();
    };

    const doRelease = async (): Promise<void> => {
      // Never touch a worktree while git may still be writing it; recycle only one that became ready.
      const ready = prep ? await prep.then(() => true, () => false) : false;
      if (ready && poolSize > 0) {
        const slot = path.join(poolPath(this.#opts.dataDir, mirror), `${INSTANCE}-${++slotCounter}`);
        try {
          // Detach HEAD without touching the index or files, so the job branch can be deleted and
          // checked out elsewhere (a follow-up), then park the worktree in the pool.
          await git(['update-ref', '--no-deref', 'HEAD', 'HEAD'], { cwd: dir });
          if (branchName) {
            const name = branchName;
            await withLock(mirror, () => git(['branch', '-D', '--quiet', '--', name], { cwd: mirror }).catch(() => undefined));
          }
          const admin = await moveWorktree(dir, slot);
          spares.push({ mirror, dir: slot, admin });
          while (spares.length > poolSize) {
            const old = spares.shift()!;
            inBackground(removeDir(old.mirror, old.dir));
          }
          return;
        } catch {
          // Remove it instead, wherever the failed move left it.
          await fs.rm(slot, { recursive: true, force: true }).catch(() => undefined);
        }
      }
      await removeDir(mirror, dir, branchName);
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
      if (branch) await withLock(this.mirror, () => git(['branch', '-D', '--quiet', '--', branch], { cwd: this.mirror }).catch(() => undefined));
      return;
    }
    await removeDir(this.mirror, dir, branch);
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

export interface DiffFile {
  path: string;
  /** added, modified, deleted, renamed (GitHub's words); copies count as added. */
  status: 'added' | 'modified' | 'deleted' | 'renamed';
  /** The old path of a renamed file. */
  previousPath?: string;
  additions: number;
  deletions: number;
  /** Binary files have no line counts (0 and 0). */
  binary?: boolean;
}

/** A commit id as git printed it; anything else is refused before it reaches a git command line. */
function checkSha(sha: string): string {
  if (!/^[0-9a-f]{40}([0-9a-f]{24})?$/.test(sha)) throw new GitError('git_error', 'Not a commit id.');
  return sha;
}

/** Parses `git diff --name-status -z -M` and `git diff --numstat -z -M` of the same range. */
export function parseDiffFiles(status: string, numstat: string): DiffFile[] {
  const files: DiffFile[] = [];
  const byPath = new Map<string, DiffFile>();
  const s = status.split('\0');
  for (let i = 0; i + 1 < s.length; ) {
    const code = s[i];
    if (!code) break;
    const kind = code[0];
    if (kind === 'R' || kind === 'C') {
      const from = s[i + 1];
      const to = s[i + 2];
      i += 3;
      const f: DiffFile = kind === 'R' ? { path: to, status: 'renamed', previousPath: from, additions: 0, deletions: 0 } : { path: to, status: 'added', additions: 0, deletions: 0 };
      files.push(f);
      byPath.set(to, f);
    } else {
      const p = s[i + 1];
      i += 2;
      const f: DiffFile = { path: p, status: kind === 'A' ? 'added' : kind === 'D' ? 'deleted' : 'modified', additions: 0, deletions: 0 };
      files.push(f);
      byPath.set(p, f);
    }
  }
  const n = numstat.split('\0');
  for (let i = 0; i < n.length; ) {
    const head = n[i];
    if (!head) break;
    const m = /^(-|\d+)\t(-|\d+)\t(.*)$/s.exec(head);
    if (!m) break;
    let p = m[3];
    i += 1;
    if (p === '') {
      // A rename: the old and new paths follow.
      p = n[i + 1];
      i += 2;
    }
    const f = byPath.get(p);
    if (!f) continue;
    if (m[1] === '-') f.binary = true;
    else {
      f.additions = Number(m[1]);
      f.deletions = Number(m[2]);
    }
  }
  return files;
}

/** Runs git and keeps at most `limit` bytes of its output, stopping it once it has written that much. */
function gitHead(args: string[], cwd: string, limit: number): Promise<{ out: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (cut) return;
      chunks.push(d);
      size += d.length;
      if (size >= limit) {
        cut = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.resume();
    child.on('error', () => reject(new GitError('git_error', `git ${args[0]} could not be started.`)));
    child.on('close', (code) => {
      if (code === 0 || cut) resolve({ out: Buffer.concat(chunks).subarray(0, limit), cut });
      else reject(new GitError('git_error', `git ${args[0]} failed (exit ${code}).`));
    });
  });
}
