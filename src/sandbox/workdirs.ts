// The sandboxes' working copies: each a folder of its own under one root, with a name nobody can
// guess, reachable only by Folio and the sandbox's user. The root is not the data directory: when
// Folio runs as root, bwrap runs as another user (index.ts), which must reach its copy but never
// Folio's data.
import { randomBytes } from 'node:crypto';
import { chmod, cp, lchown, lstat, mkdir, readdir, realpath, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { SandboxUser } from './index.ts';

export interface Workdir {
  dir: string;
  /** Sets these files (relative paths) to the given texts, removing those without one; never through a link out of the folder. */
  replaceFiles(paths: string[], texts: Map<string, string>): Promise<void>;
  remove(): Promise<void>;
}

/** A new folder under `root`, holding `from`'s files except its top-level .git, owned by `user`. */
export async function createWorkdir(root: string, user: SandboxUser | null, from?: string): Promise<Workdir> {
  // Others may pass through the root and the folder that holds it (0711) to their own copy, never list them.
  await mkdir(root, { recursive: true, mode: 0o711 });
  for (const d of [path.dirname(root), root]) await chmod(d, 0o711);
  const dir = path.join(root, randomBytes(12).toString('hex'));
  await mkdir(dir, { mode: 0o700 });
  const remove = () => rm(dir, { recursive: true, force: true });
  try {
    if (from) {
      const gitDir = path.join(from, '.git');
      await cp(from, dir, { recursive: true, verbatimSymlinks: true, force: true, filter: (src) => src !== gitDir });
    }
    if (user) await chownTree(dir, user);
  } catch (err) {
    await remove();
    throw err;
  }
  return { dir, remove, replaceFiles: (paths, texts) => replaceFiles(dir, user, paths, texts) };
}

async function replaceFiles(dir: string, user: SandboxUser | null, paths: string[], texts: Map<string, string>): Promise<void> {
  const real = await realpath(dir);
  for (const p of paths) {
    const target = path.resolve(real, p);
    if (!target.startsWith(`${real}${path.sep}`)) continue;
    const parent = path.dirname(target);
    await mkdir(parent, { recursive: true });
    // A link anywhere on the way (a repository may hold any) must not lead the write out of the copy.
    if (!`${await realpath(parent)}${path.sep}`.startsWith(`${real}${path.sep}`)) continue;
    await rm(target, { force: true, recursive: true });
    const text = texts.get(p);
    if (text === undefined) continue;
    await writeFile(target, text, { flag: 'wx' });
    if (user) await lchown(target, user.uid, user.gid);
  }
}

/** Removes copies left by a process that died mid-build: those older than `ageMs`. */
export async function sweepWorkdirs(root: string, ageMs: number): Promise<void> {
  const entries = await readdir(root, { withFileTypes: true }).catch(() => []);
  for (const e of entries) {
    const p = path.join(root, e.name);
    const s = await lstat(p).catch(() => null);
    if (s && Date.now() - s.mtimeMs > ageMs) await rm(p, { recursive: true, force: true });
  }
}

/** Gives a tree to `user`, links themselves rather than what they point to. */
export async function chownTree(dir: string, user: SandboxUser): Promise<void> {
  await lchown(dir, user.uid, user.gid);
  for (const e of await readdir(dir, { withFileTypes: true, recursive: true })) {
    await lchown(path.join(e.parentPath, e.name), user.uid, user.gid);
  }
}
