// Repositories for the suggestions' tests whose files are too many or too large to pass as strings:
// `write` fills a work tree, which is committed and then served by the code host as a bare clone.
// A slow one can be committed before the server starts (git runs synchronously here, in the server's
// process) and served later, which takes a moment (a local clone links the objects).
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { E2E } from '../agent/e2e-helpers.ts';
import { gitSync } from '../fixtures/git-server.ts';

/** A work tree with one commit of what `write` put in it. */
export function committedTree(write: (dir: string) => void): string {
  const work = mkdtempSync(path.join(os.tmpdir(), 'folio-big-'));
  gitSync(['init', '--quiet', '-b', 'main'], work);
  write(work);
  gitSync(['add', '--all'], work);
  gitSync(['commit', '--quiet', '-m', 'Docs'], work);
  return work;
}

/** Serves `work`'s commit as `name` on the code host (a bare clone), removes the work tree, and returns the repository URL. */
export function serve(e: E2E, name: string, work: string): string {
  try {
    const bare = path.join(e.host.root, `${name}.git`);
    mkdirSync(path.dirname(bare), { recursive: true });
    gitSync(['clone', '--bare', '--quiet', work, bare], os.tmpdir());
    return `${e.host.origin}/${name}.git`;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A repository on the code host with what `write` put in it. */
export function repoOf(e: E2E, name: string, write: (dir: string) => void): string {
  return serve(e, name, committedTree(write));
}
