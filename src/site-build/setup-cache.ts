// A build's setup step (installing the site's dependencies), run once per set of lockfiles: what it
// adds to the build's folder (node_modules, a virtualenv…) is kept under the cache, keyed by the
// tool, the setup command and the lockfiles' contents, and every later build of the same key —
// a fix round, the base side, the next job — links to it, mounted read-only, instead of installing
// again. The setup step alone may reach the network, and only when the operator allows it.
import { createHash, randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readdir, readFile, rename, rm, symlink } from 'node:fs/promises';
import path from 'node:path';
import type { BuildReport, DocsProblem } from '../agent/checks/types.ts';
import { sandboxWorkdir, toolDirInside, type Sandbox, type SandboxLimits, type SandboxTool } from '../sandbox/index.ts';
import { KeyedSerial } from '../util/serial.ts';
import { shellQuote, type BuildPlan } from './plans.ts';
import { cleanOutput } from './problems.ts';

export interface PreparedSetup {
  state: BuildReport['setup'];
  /** The cache's folder, for the build's PATH and mounts. */
  tools: SandboxTool[];
  /** The problem when the setup step failed. */
  failed?: DocsProblem;
}

const SETUP_TOOL = 'setup';

/** How setup steps run: whether they may reach the network, for how long, within which limits. */
export interface SetupRules {
  network: boolean;
  limits: SandboxLimits;
}

export class SetupCache {
  readonly #root: string;
  readonly #sandbox: Sandbox;
  readonly #rules: SetupRules;
  readonly #running = new KeyedSerial();

  constructor(root: string, sandbox: Sandbox, rules: SetupRules) {
    this.#root = root;
    this.#sandbox = sandbox;
    this.#rules = rules;
  }

  /** Makes the plan's setup available in `workdir` (a build's copy): from the cache, or run now and kept. */
  async prepare(plan: BuildPlan, workdir: string, signal: AbortSignal): Promise<PreparedSetup> {
    if (!plan.setup) return { state: 'none', tools: [] };
    const key = await this.#key(plan, workdir);
    const cached = path.join(this.#root, key);
    let state: BuildReport['setup'] = 'cached';
    if (!existsSync(cached)) {
      const failed = await this.#running.run(key, async () => {
        if (existsSync(cached)) return undefined;
        state = 'ran';
        return this.#run(plan, workdir, cached, signal);
      });
      if (failed) return { state: 'ran', tools: [], failed };
    }
    const tool: SandboxTool = { name: SETUP_TOOL, dir: cached, bin: 'node_modules/.bin' };
    const inside = toolDirInside(this.#sandbox.mode, tool);
    const into = path.join(workdir, plan.cwd);
    for (const name of await readdir(cached)) {
      await rm(path.join(into, name), { recursive: true, force: true });
      await symlink(path.posix.join(inside, name), path.join(into, name));
    }
    return { state, tools: [tool] };
  }

  async #key(plan: BuildPlan, workdir: string): Promise<string> {
    const h = createHash('sha256').update(JSON.stringify([plan.tool, plan.setup, plan.cwd, this.#sandbox.mode]));
    for (const f of plan.lockfiles) h.update(`\0${f}\0`).update(await readFile(path.join(workdir, f)).catch(() => Buffer.alloc(0)));
    return h.digest('hex').slice(0, 32);
  }

  /** Runs the setup on a copy of the build's folder; what it added there becomes the cache entry. Its problem when it fails. */
  async #run(plan: BuildPlan, workdir: string, cached: string, signal: AbortSignal): Promise<DocsProblem | undefined> {
    const wd = await this.#sandbox.workdir(workdir);
    try {
      const command = plan.cwd ? `cd ${shellQuote(plan.cwd)} && ${plan.setup}` : plan.setup!;
      const result = await this.#sandbox.run({ dir: wd.dir, command, tools: plan.tools, network: this.#rules.network, limits: this.#rules.limits, signal });
      if (result.outcome === 'aborted') throw Object.assign(new Error('Setup aborted'), { name: 'AbortError' });
      if (result.outcome !== 'exited' || result.exitCode !== 0) {
        const tail = cleanOutput(result.output, sandboxWorkdir(this.#sandbox.mode, wd.dir)).trim().split('\n').slice(-8).join('\n').slice(-500);
        const why = result.outcome === 'time' ? 'ran longer than its time limit and was stopped' : result.outcome === 'output' ? 'printed too much and was stopped' : `exited with code ${result.exitCode}`;
        return { check: 'build', path: plan.lockfiles[0] ?? (plan.cwd || '.'), line: null, target: 'setup', message: `The build's setup step (${plan.setup}) ${why}${tail ? `; its output ends with:\n${tail}` : '.'}` };
      }
      await this.#keep(path.join(workdir, plan.cwd), path.join(wd.dir, plan.cwd), cached);
      return undefined;
    } finally {
      await wd.remove();
    }
  }

  /** Moves what the setup added (top-level entries `before` lacks) into the cache entry, whole or not at all. */
  async #keep(before: string, after: string, cached: string): Promise<void> {
    await mkdir(this.#root, { recursive: true, mode: 0o711 });
    await chmod(this.#root, 0o711);
    const had = new Set(await readdir(before));
    const staging = `${cached}.${randomBytes(6).toString('hex')}`;
    await mkdir(staging, { mode: 0o711 });
    for (const name of await readdir(after)) if (!had.has(name)) await rename(path.join(after, name), path.join(staging, name));
    await rename(staging, cached);
  }
}
