// Running the docs checks on an edit of a real folder, as the agent loop would: the files are the
// base, `edit` is the job's change. The folders are removed after each test.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach } from 'vitest';
import { createDocsChecks, type ChecksReport, type DocsChecksOptions } from '../../src/agent/checks/index.ts';
import { detectDocs, type DocsSource } from '../../src/agent/prompts.ts';
import { openWorkspace, type Workspace } from '../../src/agent/workspace.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

export function memorySource(files: Record<string, string>): DocsSource {
  return {
    files: Object.keys(files).sort(),
    async readMany(paths) {
      return new Map(paths.filter((p) => p in files).map((p) => [p, files[p]]));
    },
  };
}

/** Checks `edit` applied to `files` (the base), as the agent loop would; `opts`: the job's policy. */
export async function checkEdit(
  files: Record<string, string>,
  edit: (ws: Workspace) => Promise<unknown>,
  prior: string[] = [],
  opts: Pick<DocsChecksOptions, 'policy' | 'enforcedOnly'> = {},
): Promise<{ report: ChecksReport; ws: Workspace; again: () => Promise<ChecksReport> }> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-checks-'));
  dirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  const ws = await openWorkspace(dir);
  const profile = await detectDocs(ws);
  await edit(ws);
  const checks = createDocsChecks({ profile, base: async () => memorySource(files), priorChanges: async () => prior, ...opts });
  return { report: await checks.run(ws), ws, again: () => checks.run(ws) };
}
