// What one process shares between the git workspaces of its jobs: the lock of each mirror, the
// fetch rounds jobs share, and the pool of idle worktrees. The services create one (with the agent
// handler) and drain it at shutdown.
//
// A job's turn ends by handing its worktree to the pool instead of deleting it; the next job of that
// repository moves it to its own folder (`git worktree move`) and resets it with `git checkout
// --force -B <branch> <start>` and `git clean -ffdx`, which rewrite only the files that differ. An
// idle worktree is taken out of the pool synchronously, so two jobs never hold the same one. Folders
// of a pool carry this process's pid and a random instance id; those of dead processes are removed
// the first time a mirror is used.
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { Coalescer } from './coalesce.ts';
import { git } from './run.ts';
import { KeyedSerial } from '../util/serial.ts';
import { processAlive } from '../util/process-alive.ts';

export interface WorktreePoolOptions {
  dataDir: string;
  /**
   * Idle worktrees kept for later jobs, all repositories together (the least recently released is
   * removed first). 0 removes every worktree when its job's turn ends.
   */
  size: number;
}

interface Spare {
  mirror: string;
  dir: string;
}

/** Where idle worktrees of a mirror wait: `<dataDir>/worktrees/.pool/<mirror id>/<pid>-<instance>-<n>`. */
export function poolPath(dataDir: string, mirror: string): string {
  return path.join(dataDir, 'worktrees', '.pool', path.basename(mirror, '.git'));
}

export class WorktreePool {
  readonly size: number;
  /**
   * Fetches of one repository with the same credentials, shared by the jobs that ask at once. Git's
   * own ref locks keep processes apart; within this process fetches of a mirror run under its lock.
   */
  readonly fetches = new Coalescer();
  readonly #dataDir: string;
  readonly #locks = new KeyedSerial();
  readonly #instance = `${process.pid}-${randomBytes(4).toString('hex')}`;
  #slots = 0;
  /** Idle worktrees, least recently released first. */
  readonly #spares: Spare[] = [];
  readonly #swept = new Set<string>();
  readonly #background = new Set<Promise<void>>();

  constructor(opts: WorktreePoolOptions) {
    this.#dataDir = opts.dataDir;
    this.size = opts.size;
  }

  /**
   * Runs `fn` under the mirror's lock. Commands that read every worktree's record (`worktree
   * add/move/prune`, `branch -D`, `fetch`) run under it: git 2.39 dies reading a record another
   * `worktree add` is still writing ("failed to read worktrees/<id>/commondir").
   */
  locked<T>(mirror: string, fn: () => Promise<T>): Promise<T> {
    return this.#locks.run(mirror, fn);
  }

  /** Idle worktrees (of every mirror, or of one). */
  pooled(mirror?: string): string[] {
    return this.#spares.filter((s) => !mirror || s.mirror === mirror).map((s) => s.dir);
  }

  /**
   * Moves an idle worktree of `mirror` to `target` and returns true, or false when there is none.
   * The first call for a mirror also sweeps the pool folders of processes that are gone.
   */
  async take(mirror: string, target: string): Promise<boolean> {
    if (!this.#swept.has(mirror)) {
      this.#swept.add(mirror);
      this.#inBackground(this.#sweepOrphans(mirror));
    }
    if (this.size === 0) return false;
    for (;;) {
      // Found and taken out in one synchronous step: no other job can take the same worktree.
      const i = this.#spares.findLastIndex((s) => s.mirror === mirror);
      if (i === -1) return false;
      const [spare] = this.#spares.splice(i, 1);
      try {
        await this.#move(mirror, spare.dir, target);
        return true;
      } catch {
        this.#inBackground(this.remove(mirror, spare.dir));
        await fs.rm(target, { recursive: true, force: true });
      }
    }
  }

  /** Parks a worktree (HEAD detached, its branch deleted) in the pool; false when the pool is off or it could not be moved. */
  async put(mirror: string, dir: string): Promise<boolean> {
    if (this.size === 0) return false;
    const slot = path.join(poolPath(this.#dataDir, mirror), `${this.#instance}-${++this.#slots}`);
    try {
      await this.#move(mirror, dir, slot);
    } catch {
      // Removed instead by the caller, wherever the failed move left it.
      await fs.rm(slot, { recursive: true, force: true }).catch(() => undefined);
      return false;
    }
    this.#spares.push({ mirror, dir: slot });
    while (this.#spares.length > this.size) {
      const old = this.#spares.shift()!;
      this.#inBackground(this.remove(old.mirror, old.dir));
    }
    return true;
  }

  /**
   * Removes a worktree's folder (outside the lock: the slow part), then its record in the mirror and
   * `branch`, if given.
   */
  async remove(mirror: string, dir: string, branch?: string): Promise<void> {
    await fs.rm(dir, { recursive: true, force: true });
    await this.locked(mirror, async () => {
      await git(['worktree', 'prune'], { cwd: mirror }).catch(() => undefined);
      if (branch) await git(['branch', '-D', '--quiet', '--', branch], { cwd: mirror }).catch(() => undefined);
    });
  }

  /** Waits until background removals (evicted idle worktrees, folders of dead processes) are done. */
  async settled(): Promise<void> {
    while (this.#background.size > 0) await Promise.all([...this.#background]);
  }

  /** Removes every idle worktree and waits for background removals (shutdown). */
  async drain(): Promise<void> {
    for (const s of this.#spares.splice(0)) this.#inBackground(this.remove(s.mirror, s.dir));
    await this.settled();
  }

  /** `git worktree move`, which renames the folder and updates git's records of it. */
  async #move(mirror: string, from: string, to: string): Promise<void> {
    await fs.mkdir(path.dirname(to), { recursive: true });
    await this.locked(mirror, () => git(['worktree', 'move', '--', from, to], { cwd: mirror }));
  }

  #inBackground(work: Promise<void>): void {
    const p: Promise<void> = work.catch(() => undefined).finally(() => this.#background.delete(p));
    this.#background.add(p);
  }

  /** Removes pool folders of this mirror left by processes that are gone (or by an earlier run of this pid). */
  async #sweepOrphans(mirror: string): Promise<void> {
    const root = poolPath(this.#dataDir, mirror);
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
      if (`${m[1]}-${m[2]}` === this.#instance || (pid !== process.pid && processAlive(pid))) continue;
      await this.remove(mirror, path.join(root, name));
    }
  }
}
