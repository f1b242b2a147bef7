// The site's own build as one more check (plans.ts says which): run in the sandbox on a copy of the
// job's worktree, its output read as problems (problems.ts). Only what the job did is blamed: when
// the build reports problems, the same build runs once on the base side (the worktree with the
// job's changed files as the base commit has them), and problems found there too are pre-existing.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import type { BuildConfig } from '../config.ts';
import { sortByBase, type BuildReport, type ChecksReport, type DocsProblem } from '../agent/checks/types.ts';
import type { DocsProfile, DocsSource } from '../agent/prompts.ts';
import type { Workspace } from '../agent/workspace.ts';
import { Sandbox, sandboxWorkdir, type SandboxResult } from '../sandbox/index.ts';
import { planBuild, shellQuote, type BuildPlan, type BuildSettings } from './plans.ts';
import { buildProblems, cleanOutput, type ReadFile } from './problems.ts';
import { SetupCache } from './setup-cache.ts';

export type { BuildSettings };

/** One side's build: how it went and what it found. */
interface SideBuild {
  report: BuildReport;
  problems: DocsProblem[];
}

/** A turn's build result: the report, and its problems sorted into the job's and the base's. */
export interface SiteBuildResult {
  report: BuildReport;
  problems: DocsProblem[];
  preExisting: DocsProblem[];
}

export interface TurnBuildOptions {
  profile: DocsProfile;
  settings: BuildSettings;
  /** The job's base commit (where its branch forked from the base branch). */
  base: () => Promise<DocsSource>;
  /** Paths changed by the job's earlier turns, relative to the base. */
  priorChanges: () => Promise<string[]>;
  signal: AbortSignal;
}

/** One process's site builds: the sandbox and the setup cache they share. */
export class SiteBuilds {
  readonly #config: BuildConfig;
  readonly #sandbox: Sandbox;
  readonly #setups: SetupCache;

  constructor(config: BuildConfig) {
    this.#config = config;
    this.#sandbox = new Sandbox({ mode: config.sandbox, root: path.join(config.dir, 'work'), uid: config.uid, gid: config.gid });
    this.#setups = new SetupCache(path.join(config.dir, 'setup'), this.#sandbox, { network: config.setupNetwork, limits: this.#limits(config.setupTimeoutMs) });
  }

  /** The build check of one turn; null when the project turned builds off. */
  forTurn(opts: TurnBuildOptions): { run(ws: Workspace): Promise<SiteBuildResult | null> } | null {
    if (!opts.settings.enabled) return null;
    // The base side is built at most once per turn, and only when the workspace's build finds problems.
    let base: Promise<SideBuild> | undefined;
    const run = async (ws: Workspace, plan: BuildPlan): Promise<SiteBuildResult> => {
      const unavailable = await this.#sandbox.unavailable();
      if (unavailable) return { report: skipped(plan.tool, plan.command, unavailable), problems: [], preExisting: [] };
      const now = await this.#build(plan, opts, ws.root, workspaceReader(ws));
      if (now.problems.length === 0) return { ...now, preExisting: [] };
      base ??= this.#buildBase(plan, opts, ws);
      const before = await base;
      const { fresh, preExisting } = sortByBase(now.problems, before.problems);
      return { report: now.report, problems: fresh, preExisting };
    };
    return {
      run: async (ws) => {
        const plan = await this.#plan(opts, ws);
        if (plan === null) return null;
        if ('skip' in plan) return { report: skipped(plan.tool, plan.command, plan.skip), problems: [], preExisting: [] };
        try {
          return await run(ws, plan);
        } catch (err) {
          if ((err as Error).name === 'AbortError' || opts.signal.aborted) throw err;
          // The server's trouble (a full disk, a copy that failed), not the job's: said by its code, no paths.
          const code = (err as NodeJS.ErrnoException).code ?? 'an unexpected error';
          return { report: skipped(plan.tool, plan.command, `The site build could not be prepared on this server (${code}), so it did not run.`), problems: [], preExisting: [] };
        }
      },
    };
  }

  #plan(opts: TurnBuildOptions, ws: Workspace) {
    return planBuild(opts.profile, opts.settings, this.#config, (p) => ws.exists(p).catch(() => false));
  }

  /** The base side: a copy of the worktree with the job's changed files as the base commit has them. */
  async #buildBase(plan: BuildPlan, opts: TurnBuildOptions, ws: Workspace): Promise<SideBuild> {
    const [source, prior] = await Promise.all([opts.base(), opts.priorChanges()]);
    const changed = [...new Set([...prior, ...ws.touched])];
    const baseFiles = await source.readMany(changed);
    const read: ReadFile = async (p) => (await source.readMany([p])).get(p) ?? null;
    return this.#build(plan, opts, ws.root, read, baseFiles, changed);
  }

  /** Copies `from` (with `replace`d files: the base's text, or removed when absent), sets up, builds, reads the output. */
  async #build(plan: BuildPlan, opts: TurnBuildOptions, from: string, read: ReadFile, replace?: Map<string, string>, changed: string[] = []): Promise<SideBuild> {
    const wd = await this.#sandbox.workdir(from);
    try {
      if (replace) await wd.replaceFiles(changed, replace);
      const setup = await this.#setups.prepare(plan, wd.dir, opts.signal);
      if (setup.failed) return { report: report(plan, 'failed', setup.failed.message, setup.state, 0), problems: [setup.failed] };
      const mode = this.#sandbox.mode;
      const result = await this.#sandbox.run({
        dir: wd.dir,
        command: plan.cwd ? `cd ${shellQuote(plan.cwd)} && ${plan.command}` : plan.command,
        tools: [...plan.tools, ...setup.tools],
        limits: this.#limits(opts.settings.timeoutSeconds ? opts.settings.timeoutSeconds * 1000 : this.#config.timeoutMs),
        signal: opts.signal,
      });
      return await this.#read(plan, opts, result, cleanOutput(result.output, sandboxWorkdir(mode, wd.dir)), read, setup.state);
    } finally {
      await wd.remove();
    }
  }

  /** The sandbox limits of a command that may run `wallMs`. */
  #limits(wallMs: number) {
    const c = this.#config;
    return { wallMs, memoryBytes: c.memoryBytes, processes: c.processes, outputBytes: c.outputBytes, fileBytes: c.memoryBytes };
  }

  async #read(plan: BuildPlan, opts: TurnBuildOptions, result: SandboxResult, text: string, read: ReadFile, setup: BuildReport['setup']): Promise<SideBuild> {
    if (result.outcome === 'aborted') throw abortError(opts.signal);
    const configFile = opts.profile.configFile ?? (plan.cwd || '.');
    const stopped = stopReason(result, this.#config);
    if (stopped) {
      const problem: DocsProblem = { check: 'build', path: configFile, line: null, target: result.outcome, message: stopped };
      return { report: report(plan, 'failed', stopped, setup, result.ms), problems: [problem] };
    }
    const passed = result.exitCode === 0;
    const problems = await buildProblems({ tool: plan.tool, cwd: plan.cwd, docsRoot: opts.profile.docsRoot, configFile, text, passed, read });
    const reason = passed ? null : `The site build (${plan.tool}) exited with code ${result.exitCode} and reported ${problems.length} problem${problems.length === 1 ? '' : 's'}.`;
    return { report: report(plan, passed ? 'passed' : 'failed', reason, setup, result.ms), problems };
  }
}

function stopReason(result: SandboxResult, config: BuildConfig): string | null {
  if (result.outcome === 'time') return `The site build ran longer than its time limit (${Math.round(result.ms / 1000)} s) and was stopped.`;
  if (result.outcome === 'output') return `The site build printed more than ${Math.round(config.outputBytes / 1024)} KiB of output and was stopped.`;
  return null;
}

function report(plan: BuildPlan, status: BuildReport['status'], reason: string | null, setup: BuildReport['setup'], ms: number): BuildReport {
  return { tool: plan.tool, command: plan.command, status, reason, setup, ms };
}

function skipped(tool: string, command: string, reason: string): BuildReport {
  return { tool, command, status: 'skipped', reason, setup: 'none', ms: 0 };
}

/** Reads a page of the job's workspace, inside it only. */
function workspaceReader(ws: Workspace): ReadFile {
  return async (p) => {
    try {
      return await readFile(await ws.resolve(p), 'utf8');
    } catch {
      return null;
    }
  };
}

function abortError(signal: AbortSignal): Error {
  const err = new Error(`Build aborted: ${String(signal.reason)}`);
  err.name = 'AbortError';
  return err;
}

/** The docs checks' report with the build's added: its problems among the others, its report as `build`. */
export function withBuild(report: ChecksReport, build: SiteBuildResult | null): ChecksReport {
  if (!build) return report;
  return {
    ...report,
    ran: build.report.status === 'skipped' ? report.ran : [...report.ran, 'build'],
    problems: [...report.problems, ...build.problems],
    preExisting: [...report.preExisting, ...build.preExisting],
    build: build.report,
  };
}
