// `folio` on a Node older than 24 says in one sentence how to run it, before reading any TypeScript.
import { describe, expect, it } from 'vitest';
import { execFileSync, spawnSync } from 'node:child_process';
import path from 'node:path';
import { ROOT } from '../helpers/process.ts';
import { NODE_MAJOR, nodeVersionProblem } from '../../bin/node-check.mjs';

/** A system `node` older than Folio's, when this machine has one (Debian's is often older). */
function olderSystemNode(): string | null {
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) {
    try {
      const v = execFileSync(candidate, ['--version'], { encoding: 'utf8' }).trim();
      if (Number(v.slice(1).split('.')[0]) < NODE_MAJOR) return candidate;
    } catch {}
  }
  return null;
}

describe('the Node version check of bin/folio.mjs', () => {
  it.each(['24.21.0', '24.0.0', '26.1.2'])('lets Node %s run Folio', (v) => {
    expect(nodeVersionProblem(v)).toBeNull();
  });

  it.each(['22.12.0', '20.20.2', '18.19.1', 'garbage'])('tells Node %s to use npx folio or Node 24, in one sentence', (v) => {
    const problem = nodeVersionProblem(v)!;
    expect(problem).toContain(`this is Node ${v}`);
    expect(problem).toContain('`npx folio`');
    expect(problem).toContain('Node 24');
    expect(problem.split(/[.:] [A-Z]/)).toHaveLength(1);
  });

  it('is what an older Node prints when it runs bin/folio.mjs, with exit code 1 and no stack trace', () => {
    const old = olderSystemNode();
    // Without an older node on this machine, the same check runs in this one with a fake version.
    const r = old
      ? spawnSync(old, [path.join(ROOT, 'bin/folio.mjs'), '--version'], { encoding: 'utf8' })
      : spawnSync(process.execPath, ['--input-type=module', '--eval', `Object.defineProperty(process.versions, 'node', { value: '20.0.0' }); await import(${JSON.stringify(path.join(ROOT, 'bin/folio.mjs'))});`], { encoding: 'utf8' });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/^folio: Folio needs Node 24 and this is Node \d+\.\d+\.\d+: run it as `npx folio`.*\n$/);
  });
});
