// Running a repository's commands (a site's build and its setup) where they cannot reach Folio: the
// one place that does. Under bubblewrap (bwrap.ts) the command sees a copy of the files, a read-only
// system, no Folio environment (its environment is built here from nothing), no data directory, no
// network unless allowed, and its own PID namespace; limits hold its wall time (the whole namespace
// is killed), its memory and file size per process and its number of processes (rlimits set inside
// its user namespace, where they bind even when Folio runs as root), and its output (kept up to a
// cap; past it the command is stopped). `none` runs it as Folio's own user, in its own process group,
// with the same environment and rlimits: only when the operator says so (FOLIO_BUILD_SANDBOX=none).
import { spawn } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import path from 'node:path';
import { childProcessEnv } from '../child-env.ts';
import { bwrapArgs, SANDBOX_TOOLS, SANDBOX_WORKDIR } from './bwrap.ts';
import { BoundedOutput } from './output.ts';
import { createWorkdir, sweepWorkdirs, type Workdir } from './workdirs.ts';

export type { Workdir };

export type SandboxMode = 'bwrap' | 'none';

/**
 * The user bwrap runs as when Folio runs as root. The kernel never applies RLIMIT_NPROC to root's
 * processes, user namespace or not, so a sandbox started by root runs as this user instead.
 */
export interface SandboxUser {
  uid: number;
  gid: number;
}

export interface SandboxLimits {
  /** Wall time, ms: then every process of the command is killed. */
  wallMs: number;
  /** Writable memory of each process (RLIMIT_DATA), bytes. */
  memoryBytes: number;
  /** Processes (and threads) at once (RLIMIT_NPROC, counted inside the sandbox's user namespace). */
  processes: number;
  /** Output (stdout and stderr together) kept, bytes; more stops the command. */
  outputBytes: number;
  /** Largest file the command may write (RLIMIT_FSIZE), bytes. */
  fileBytes: number;
}

/** A folder of installed tools, mounted read-only; its `bin` (relative) goes first on PATH. */
export interface SandboxTool {
  name: string;
  dir: string;
  bin: string;
}

export interface SandboxRun {
  mode: SandboxMode;
  /** The folder the command works in and may change: a copy, never Folio's own files. */
  dir: string;
  /** A shell command line (run by /bin/sh -c). */
  command: string;
  tools?: SandboxTool[];
  /** Added to the sandbox's own environment. */
  env?: Record<string, string>;
  /** Reach the host's network (a setup step allowed to install packages). Off by default. */
  network?: boolean;
  limits: SandboxLimits;
  signal?: AbortSignal;
}

/** How it ended: it exited by itself, or was stopped for running too long, printing too much, or an abort. */
export type SandboxOutcome = 'exited' | 'time' | 'output' | 'aborted';

export interface SandboxResult {
  outcome: SandboxOutcome;
  /** The exit code when it exited by itself (null when killed by a signal). */
  exitCode: number | null;
  /** The output kept (at most limits.outputBytes), stdout and stderr in the order they came. */
  output: string;
  /** Bytes printed in all, kept or not. */
  outputBytes: number;
  ms: number;
}

/** The folder a command works in, as the command sees it (for paths it prints). */
export function sandboxWorkdir(mode: SandboxMode, dir: string): string {
  return mode === 'bwrap' ? SANDBOX_WORKDIR : dir;
}

/** A tool folder as the command sees it. */
export function toolDirInside(mode: SandboxMode, tool: SandboxTool): string {
  return mode === 'bwrap' ? `${SANDBOX_TOOLS}/${tool.name}` : tool.dir;
}

const SYSTEM_PATH = '/usr/local/bin:/usr/bin:/bin';

/** The command's whole environment: nothing inherited from Folio. */
function sandboxEnv(run: SandboxRun, home: string): Record<string, string> {
  const bins = (run.tools ?? []).map((t) => path.join(toolDirInside(run.mode, t), t.bin));
  return {
    PATH: [...bins, SYSTEM_PATH].join(':'),
    HOME: home,
    TMPDIR: home,
    LANG: 'C.UTF-8',
    LC_ALL: 'C.UTF-8',
    TERM: 'dumb',
    CI: 'true',
    NO_COLOR: '1',
    FORCE_COLOR: '0',
    ...run.env,
  };
}

/** prlimit's arguments: the limits, then the shell that runs the command. */
function limitedShell(mode: SandboxMode, limits: SandboxLimits, command: string): string[] {
  const both = (n: number) => `${n}:${n}`;
  return [
    // Outside a user namespace RLIMIT_NPROC counts every process of Folio's user (and binds not
    // at all for root): `none` runs without it.
    ...(mode === 'bwrap' ? [`--nproc=${both(limits.processes)}`] : []),
    `--data=${both(limits.memoryBytes)}`,
    `--fsize=${both(limits.fileBytes)}`,
    '--core=0:0',
    '--',
    '/bin/sh',
    '-c',
    command,
  ];
}

/** Runs a command in the sandbox; resolves when every process of it is gone (or killed). */
export async function runSandboxed(run: SandboxRun, user: SandboxUser | null = null, bwrap = 'bwrap'): Promise<SandboxResult> {
  // In `none` mode the command's HOME and TMPDIR are a folder of its own beside the copy.
  const scratch = run.mode === 'none' ? await mkdtemp(path.join(path.dirname(run.dir), '.home-')) : null;
  try {
    const env = sandboxEnv(run, scratch ?? '/tmp');
    const shell = limitedShell(run.mode, run.limits, run.command);
    if (run.mode === 'none') return await supervise('/usr/bin/prlimit', shell, env, run.dir, null, run);
    const args = [...bwrapArgs({ workdir: run.dir, readOnly: toolMounts(run.tools), network: run.network === true, env }), '--', '/usr/bin/prlimit', ...shell];
    return await supervise(bwrap, args, bwrapEnv(), '/', user, run);
  } finally {
    if (scratch) await rm(scratch, { recursive: true, force: true });
  }
}

function toolMounts(tools: SandboxTool[] = []) {
  return tools.map((t) => ({ source: t.dir, target: `${SANDBOX_TOOLS}/${t.name}` }));
}

/** bwrap itself needs only PATH to be found; it clears the environment for the command (--clearenv). */
function bwrapEnv(): Record<string, string> {
  return { PATH: childProcessEnv().PATH ?? SYSTEM_PATH };
}

/** Spawns the command in a process group of its own, enforces wall time, output and abort, and collects the result. */
function supervise(file: string, args: string[], env: Record<string, string>, cwd: string, user: SandboxUser | null, run: SandboxRun): Promise<SandboxResult> {
  const started = Date.now();
  const output = new BoundedOutput(run.limits.outputBytes);
  return new Promise((resolve, reject) => {
    let outcome: SandboxOutcome = 'exited';
    const child = spawn(file, args, { cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'], ...(user ?? {}) });
    // Killing the group ends bwrap, whose namespace init dies with it (--die-with-parent) and
    // takes every process of the PID namespace along; in `none` mode it ends the process group.
    const stop = (why: SandboxOutcome) => {
      if (outcome === 'exited') outcome = why;
      try {
        if (child.pid) process.kill(-child.pid, 'SIGKILL');
      } catch {
        // already gone
      }
    };
    const timer = setTimeout(() => stop('time'), run.limits.wallMs);
    const onAbort = () => stop('aborted');
    run.signal?.addEventListener('abort', onAbort, { once: true });
    if (run.signal?.aborted) onAbort();
    const onData = (chunk: Buffer) => {
      if (!output.push(chunk)) stop('output');
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    let exitCode: number | null = null;
    const finish = () => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      child.stdout.destroy();
      child.stderr.destroy();
      resolve({ outcome, exitCode: outcome === 'exited' ? exitCode : null, output: output.text(), outputBytes: output.total, ms: Date.now() - started });
    };
    child.on('error', (err) => {
      clearTimeout(timer);
      run.signal?.removeEventListener('abort', onAbort);
      reject(err);
    });
    child.on('exit', (code) => {
      exitCode = code;
      clearTimeout(timer);
      // Whatever is left of the group goes too; output still in the pipes is read for a moment.
      stop(outcome);
      const grace = setTimeout(finish, 1000);
      child.on('close', () => {
        clearTimeout(grace);
        finish();
      });
    });
  });
}

/** Where sandboxes work, and as whom. */
export interface SandboxSettings {
  mode: SandboxMode;
  /** The folder that holds the sandboxes' working copies (workdirs.ts). */
  root: string;
  /** The user bwrap runs as when Folio runs as root. */
  uid: number;
  gid: number;
  /** The bubblewrap program (a path, or a name looked up on PATH). */
  bwrap?: string;
}

/** One process's sandbox: its working copies, whether it can run here, and running commands in it. */
export class Sandbox {
  readonly mode: SandboxMode;
  readonly user: SandboxUser | null;
  readonly #root: string;
  readonly #bwrap: string;
  #unavailable: Promise<string | null> | undefined;

  constructor(settings: SandboxSettings) {
    this.mode = settings.mode;
    this.#root = settings.root;
    this.#bwrap = settings.bwrap ?? 'bwrap';
    this.user = settings.mode === 'bwrap' && process.getuid?.() === 0 ? { uid: settings.uid, gid: settings.gid } : null;
  }

  /** A new working copy: `from`'s files (without .git) or empty, owned by the sandbox's user. */
  workdir(from?: string): Promise<Workdir> {
    return createWorkdir(this.#root, this.user, from);
  }

  run(run: Omit<SandboxRun, 'mode'>): Promise<SandboxResult> {
    return runSandboxed({ ...run, mode: this.mode }, this.user, this.#bwrap);
  }

  /** Null when commands can run here; else the one sentence saying why not. Asked once (then copies a dead process left a day ago are removed). */
  unavailable(): Promise<string | null> {
    this.#unavailable ??= sweepWorkdirs(this.#root, 24 * 3600_000).then(() => (this.mode === 'none' ? null : this.#probe()));
    return this.#unavailable;
  }

  /** Runs `true` as builds are run: bwrap present, user namespaces allowed, the working copies reachable. */
  async #probe(): Promise<string | null> {
    const wd = await this.workdir();
    try {
      const r = await this.run({ dir: wd.dir, command: 'true', limits: { wallMs: 10_000, memoryBytes: 256 * 1024 * 1024, processes: 16, outputBytes: 4096, fileBytes: 1024 } });
      if (r.outcome === 'exited' && r.exitCode === 0) return null;
      const why = r.output.trim().split('\n')[0]?.replace(/^bwrap: /, '').slice(0, 200) || `it ended with ${r.outcome === 'exited' ? `exit code ${r.exitCode}` : r.outcome}`;
      return `bubblewrap cannot create a sandbox on this server (${why}), so the site build did not run: see docs/deployment.md for what bubblewrap needs, or set FOLIO_BUILD_SANDBOX=none to run builds without a sandbox.`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return NO_BWRAP;
      throw err;
    } finally {
      await wd.remove();
    }
  }
}

const NO_BWRAP =
  'bubblewrap (bwrap) is not installed on this server, so the site build did not run: install the Debian package bubblewrap, or set FOLIO_BUILD_SANDBOX=none to run builds without a sandbox.';
