// A read-only view of a repository's files for the checks: the job's workspace as it is now, or the
// base commit's tree (read from git by the caller). Links are resolved against `files` only: a link
// target is never opened, so a hostile link cannot make the checks read outside the repository.
import type { DocsSource } from '../prompts.ts';
import type { Workspace } from '../workspace.ts';

/** Files larger than this are not parsed (their links are not checked). */
export const MAX_PAGE_BYTES = 1024 * 1024;
/** Repositories with more files than this are checked partially (the report says so). */
export const MAX_TREE_FILES = 100_000;

export interface DocsTree {
  /** Every file (relative POSIX paths), without .git and node_modules. */
  readonly files: ReadonlySet<string>;
  /** True when the listing stopped at MAX_TREE_FILES. */
  readonly truncated: boolean;
  /** Texts of the given files; missing, binary and oversized files are absent from the map. */
  readMany(paths: string[]): Promise<Map<string, string>>;
}

/** Caches texts: a tree never changes while the checks run. */
function cached(files: ReadonlySet<string>, truncated: boolean, load: (paths: string[]) => Promise<Map<string, string>>): DocsTree {
  const texts = new Map<string, string | null>();
  return {
    files,
    truncated,
    async readMany(paths) {
      const wanted = [...new Set(paths)].filter((p) => files.has(p) && !texts.has(p));
      if (wanted.length > 0) {
        const got = await load(wanted);
        for (const p of wanted) {
          const t = got.get(p);
          texts.set(p, t === undefined || t.length > MAX_PAGE_BYTES || t.includes('\0') ? null : t);
        }
      }
      const out = new Map<string, string>();
      for (const p of paths) {
        const t = texts.get(p);
        if (typeof t === 'string') out.set(p, t);
      }
      return out;
    },
  };
}

/** The workspace as it is now. Reads go through the workspace, which refuses paths that lead out of it. */
export async function workspaceTree(ws: Workspace): Promise<DocsTree> {
  const { files, truncated } = await ws.listFiles('.', { limit: MAX_TREE_FILES });
  return cached(new Set(files), truncated, async (paths) => {
    const out = new Map<string, string>();
    // A few reads at a time: each one resolves the path (symlinks) before reading.
    let next = 0;
    const reader = async () => {
      while (next < paths.length) {
        const p = paths[next++];
        try {
          out.set(p, await ws.readText(p));
        } catch {
          // unreadable, binary, too large or a link out of the workspace: not checked
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(16, paths.length) }, reader));
    return out;
  });
}

/** A tree from a DocsSource (e.g. the base commit read from git). */
export function sourceTree(src: DocsSource): DocsTree {
  const files = src.files.filter((f) => !f.split('/').includes('node_modules'));
  const truncated = files.length > MAX_TREE_FILES;
  return cached(new Set(truncated ? files.slice(0, MAX_TREE_FILES) : files), truncated, (paths) => src.readMany(paths));
}
