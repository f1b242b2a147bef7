// The agent's view of a repository: a folder it may read and edit. Every path the model gives is
// resolved inside the root; `..`, absolute paths out of it, symlinks that leave it and anything under
// `.git` are refused with an error the model can read. Nothing here throws at the model: tools turn
// WorkspaceError into a tool result.
import { promises as fs, type Dirent } from 'node:fs';
import path from 'node:path';
import { compileUntrustedGlob, PatternError } from '../util/untrusted-pattern.ts';

export class WorkspaceError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceError';
  }
}

/** A glob of the model's, matched in linear time (a glob without `/` matches file names anywhere). */
function modelGlob(glob: string): (path: string) => boolean {
  try {
    return compileUntrustedGlob(glob, { matchBase: true });
  } catch (err) {
    if (err instanceof PatternError) throw new WorkspaceError(err.message);
    throw err;
  }
}

export interface WorkspaceLimits {
  /** Largest file read_file/search will read, in bytes. */
  maxReadBytes: number;
  /** Largest content write_file/edit_file may produce, in bytes. */
  maxWriteBytes: number;
  /** Characters of a tool result shown to the model before clipping. */
  maxOutputChars: number;
  /** Entries list_files returns at most. */
  maxListEntries: number;
  /** Matches search returns at most. */
  maxSearchMatches: number;
}

export const DEFAULT_LIMITS: WorkspaceLimits = {
  maxReadBytes: 1024 * 1024,
  maxWriteBytes: 512 * 1024,
  maxOutputChars: 20_000,
  maxListEntries: 1000,
  maxSearchMatches: 200,
};

const SKIP_DIRS = new Set(['.git', 'node_modules']);

export interface Workspace {
  readonly root: string;
  readonly limits: WorkspaceLimits;
  /** Resolves a model-given path to an absolute path inside the root; throws WorkspaceError otherwise. */
  resolve(p: string, opts?: { write?: boolean }): Promise<string>;
  readText(p: string): Promise<string>;
  /** The first `maxBytes` of a text file (never more is read) and the file's whole size in bytes. */
  readHead(p: string, maxBytes: number): Promise<{ text: string; size: number }>;
  writeText(p: string, content: string): Promise<{ created: boolean }>;
  remove(p: string): Promise<void>;
  move(from: string, to: string): Promise<void>;
  exists(p: string): Promise<boolean>;
  /** Relative paths of files under `dir` (recursive), sorted, skipping .git and node_modules. `limit` defaults to `maxListEntries`. */
  listFiles(dir?: string, opts?: { glob?: string; limit?: number }): Promise<{ files: string[]; truncated: boolean }>;
  /** Paths (relative, POSIX) the agent wrote, moved or deleted since the workspace was opened. */
  readonly touched: Set<string>;
  /** Files the agent moved since the workspace was opened, as [from, to] (relative, POSIX), in order. */
  readonly moves: [string, string][];
}

function toPosix(p: string): string {
  return p.split(path.sep).join('/');
}

function isInside(root: string, target: string): boolean {
  const rel = path.relative(root, target);
  return rel === '' || (!rel.startsWith('..') && !path.isAbsolute(rel));
}

export async function openWorkspace(root: string, limits: Partial<WorkspaceLimits> = {}): Promise<Workspace> {
  const realRoot = await fs.realpath(root);
  const lim: WorkspaceLimits = { ...DEFAULT_LIMITS, ...limits };
  const touched = new Set<string>();
  const moves: [string, string][] = [];
  const resolve = (p: string, opts: { write?: boolean } = {}) => resolveInside(realRoot, p, opts);
  const relOf = (abs: string) => toPosix(path.relative(realRoot, abs));

  return {
    root: realRoot,
    limits: lim,
    touched,
    moves,
    resolve,
    async readText(p) {
      return readTextFile(await resolve(p), p, lim.maxReadBytes);
    },
    async readHead(p, maxBytes) {
      return readTextHead(await resolve(p), p, maxBytes);
    },
    async writeText(p, content) {
      if (typeof content !== 'string') throw new WorkspaceError('content must be a string.');
      const size = Buffer.byteLength(content, 'utf8');
      if (size > lim.maxWriteBytes) {
        throw new WorkspaceError(`Content is ${size} bytes, over the ${lim.maxWriteBytes}-byte write limit.`);
      }
      const abs = await resolve(p, { write: true });
      const created = await writeTextFile(abs, p, content);
      touched.add(relOf(abs));
      return { created };
    },
    async remove(p) {
      const abs = await resolve(p, { write: true });
      const st = await existingEntry(abs, p);
      if (st.isDirectory()) throw new WorkspaceError(`"${p}" is a directory; delete its files one by one.`);
      await fs.unlink(abs);
      touched.add(relOf(abs));
    },
    async move(from, to) {
      const a = await resolve(from, { write: true });
      const b = await resolve(to, { write: true });
      const st = await existingEntry(a, from);
      if (st.isDirectory()) throw new WorkspaceError(`"${from}" is a directory; move its files one by one.`);
      if (await exists(b)) throw new WorkspaceError(`"${to}" already exists; delete it first or choose another name.`);
      await fs.mkdir(path.dirname(b), { recursive: true });
      await fs.rename(a, b);
      touched.add(relOf(a));
      touched.add(relOf(b));
      moves.push([relOf(a), relOf(b)]);
    },
    exists: async (p) => exists(await resolve(p)),
    async listFiles(dir = '.', opts = {}) {
      const start = dir === '.' || dir === '' ? realRoot : await resolve(dir);
      // The model's list_files passes no limit and gets at most maxListEntries; search and the docs
      // checks ask for more.
      const limit = opts.limit ?? lim.maxListEntries;
      const match = opts.glob ? modelGlob(opts.glob) : null;
      return listFilesUnder(realRoot, start, dir, { limit, match });
    },
  };
}

/** A model-given path made absolute inside the root; refuses "..", NUL bytes and paths outside the root. */
function lexicalPath(realRoot: string, p: unknown): string {
  if (typeof p !== 'string' || p.trim() === '') throw new WorkspaceError('A path is required.');
  if (p.includes('\0')) throw new WorkspaceError(`Path "${p.replace(/\0/g, '\\0')}" contains a NUL byte.`);
  const raw = p.trim().replace(/\\/g, '/');
  if (raw.split('/').includes('..')) {
    throw new WorkspaceError(`Path "${p}" contains "..": paths must stay inside the repository.`);
  }
  const abs = path.isAbsolute(raw) ? path.resolve(raw) : path.resolve(realRoot, raw);
  if (!isInside(realRoot, abs)) {
    throw new WorkspaceError(`Path "${p}" is outside the repository; use a path relative to the repository root.`);
  }
  return abs;
}

/** Real path of the deepest existing ancestor (or the target), checked to stay inside the root. */
async function checkRealPath(realRoot: string, abs: string, original: string): Promise<void> {
  let probe = abs;
  for (;;) {
    try {
      const real = await fs.realpath(probe);
      if (!isInside(realRoot, real)) {
        throw new WorkspaceError(`Path "${original}" leads through a symbolic link out of the repository.`);
      }
      return;
    } catch (err) {
      if (err instanceof WorkspaceError) throw err;
      const code = (err as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR') throw new WorkspaceError(`Path "${original}" cannot be resolved.`);
      await refuseDanglingLinkOut(realRoot, probe, original);
      const parent = path.dirname(probe);
      if (parent === probe) return;
      probe = parent;
    }
  }
}

/** A dangling symlink: lstat succeeds but realpath fails. Refuse it if it points outside. */
async function refuseDanglingLinkOut(realRoot: string, probe: string, original: string): Promise<void> {
  try {
    const st = await fs.lstat(probe);
    if (st.isSymbolicLink()) {
      const target = path.resolve(path.dirname(probe), await fs.readlink(probe));
      if (!isInside(realRoot, target)) {
        throw new WorkspaceError(`Path "${original}" is a symbolic link out of the repository.`);
      }
    }
  } catch (e) {
    if (e instanceof WorkspaceError) throw e;
  }
}

/** Workspace.resolve: inside the root, not in .git, and no symbolic link out of the root on the way. */
async function resolveInside(realRoot: string, p: string, opts: { write?: boolean }): Promise<string> {
  const abs = lexicalPath(realRoot, p);
  const rel = toPosix(path.relative(realRoot, abs));
  if (rel === '.git' || rel.startsWith('.git/')) {
    throw new WorkspaceError(`Path "${p}" is inside .git, which the agent may not ${opts.write ? 'change' : 'read'}.`);
  }
  await checkRealPath(realRoot, abs, p);
  return abs;
}

/** A text file's content; directories, files over the read limit and binary files are refused. */
async function readTextFile(abs: string, p: string, maxReadBytes: number): Promise<string> {
  let st;
  try {
    st = await fs.stat(abs);
  } catch {
    throw new WorkspaceError(`File "${p}" does not exist.`);
  }
  if (st.isDirectory()) throw new WorkspaceError(`"${p}" is a directory; use list_files to see its contents.`);
  if (st.size > maxReadBytes) {
    throw new WorkspaceError(`File "${p}" is ${st.size} bytes, over the ${maxReadBytes}-byte read limit.`);
  }
  const buf = await fs.readFile(abs);
  if (buf.includes(0)) throw new WorkspaceError(`File "${p}" is binary and cannot be read as text.`);
  return buf.toString('utf8');
}

/** A text file's first bytes, its size asked first: at most `maxBytes` are read, whatever the file's size. */
async function readTextHead(abs: string, p: string, maxBytes: number): Promise<{ text: string; size: number }> {
  const handle = await fs.open(abs, 'r').catch(() => {
    throw new WorkspaceError(`File "${p}" does not exist.`);
  });
  try {
    const st = await handle.stat();
    if (st.isDirectory()) throw new WorkspaceError(`"${p}" is a directory; use list_files to see its contents.`);
    const buf = Buffer.alloc(Math.min(st.size, maxBytes));
    const { bytesRead } = await handle.read(buf, 0, buf.length, 0);
    const head = buf.subarray(0, bytesRead);
    if (head.includes(0)) throw new WorkspaceError(`File "${p}" is binary and cannot be read as text.`);
    // A character cut at the limit decodes as U+FFFD, which the caller drops with the rest of the cut.
    return { text: head.toString('utf8'), size: st.size };
  } finally {
    await handle.close();
  }
}

/** Writes a file (creating its folder), never through a symbolic link or over a directory; whether it is new. */
async function writeTextFile(abs: string, p: string, content: string): Promise<boolean> {
  let created = true;
  try {
    const st = await fs.lstat(abs);
    if (st.isDirectory()) throw new WorkspaceError(`"${p}" is a directory, not a file.`);
    if (st.isSymbolicLink()) throw new WorkspaceError(`"${p}" is a symbolic link; write to the file it points to instead.`);
    created = false;
  } catch (err) {
    if (err instanceof WorkspaceError) throw err;
  }
  try {
    await fs.mkdir(path.dirname(abs), { recursive: true });
  } catch {
    throw new WorkspaceError(`Cannot create the folder for "${p}": a file is in the way.`);
  }
  await fs.writeFile(abs, content, 'utf8');
  return created;
}

/** The entry at `abs` itself (a symbolic link is not followed); the model hears that `p` does not exist otherwise. */
async function existingEntry(abs: string, p: string) {
  try {
    return await fs.lstat(abs);
  } catch {
    throw new WorkspaceError(`File "${p}" does not exist.`);
  }
}

/** Files under `start` (recursive, sorted by name, skipping SKIP_DIRS), relative to the root; at most `limit`. */
async function listFilesUnder(
  realRoot: string,
  start: string,
  dir: string,
  { limit, match }: { limit: number; match: ((path: string) => boolean) | null },
): Promise<{ files: string[]; truncated: boolean }> {
  const out: string[] = [];
  let truncated = false;
  const walk = async (d: string): Promise<void> => {
    let entries: Dirent[];
    try {
      entries = await fs.readdir(d, { withFileTypes: true });
    } catch {
      throw new WorkspaceError(`Folder "${dir}" does not exist.`);
    }
    entries.sort((x, y) => (x.name < y.name ? -1 : x.name > y.name ? 1 : 0));
    for (const e of entries) {
      if (truncated) return;
      const abs = path.join(d, e.name);
      if (e.isDirectory()) {
        if (SKIP_DIRS.has(e.name)) continue;
        await walk(abs);
      } else if (e.isFile() || e.isSymbolicLink()) {
        const rel = toPosix(path.relative(realRoot, abs));
        if (match && !match(rel)) continue;
        if (out.length >= limit) {
          truncated = true;
          return;
        }
        out.push(rel);
      }
    }
  };
  await walk(start);
  return { files: out, truncated };
}

async function exists(abs: string): Promise<boolean> {
  try {
    await fs.lstat(abs);
    return true;
  } catch {
    return false;
  }
}

/** Clips text to `max` characters, saying how much was left out. */
export function clip(text: string, max: number): string {
  if (text.length <= max) return text;
  return `${text.slice(0, max)}\n… [clipped: ${text.length - max} more characters not shown]`;
}
