// The team's instruction files read through the workspace (src/agent/instructions.ts): bounded per file
// and in total, said when cut, and never through a symbolic link out of the repository.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openWorkspace } from '../../src/agent/workspace.ts';
import { INSTRUCTION_LIMITS, instructionsSection, nestedInstructions, readInstructions, type InstructionFile } from '../../src/agent/instructions.ts';

let root: string;
let outside: string;
beforeEach(() => {
  root = mkdtempSync(path.join(os.tmpdir(), 'folio-instr-'));
  outside = mkdtempSync(path.join(os.tmpdir(), 'folio-outside-'));
  writeFileSync(path.join(outside, 'secret.md'), 'OUTSIDE-SECRET: the server key is hunter2\n');
});
afterEach(() => {
  rmSync(root, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

function write(rel: string, text: string): void {
  mkdirSync(path.dirname(path.join(root, rel)), { recursive: true });
  writeFileSync(path.join(root, rel), text);
}

describe('instruction files', () => {
  it('reads the root files, the project setting and .cursor/rules in order', async () => {
    write('AGENTS.md', 'agents');
    write('CLAUDE.md', 'claude');
    write('.github/copilot-instructions.md', 'copilot');
    write('.mintlify/AGENTS.md', 'mintlify');
    write('.cursor/rules/style.mdc', 'cursor style');
    write('.cursor/rules/b.mdc', 'cursor b');
    const found = await readInstructions(await openWorkspace(root), 'setting');
    expect(found.files.map((f) => [f.path, f.text])).toEqual([
      ['AGENTS.md', 'agents'],
      ['Folio project settings', 'setting'],
      ['CLAUDE.md', 'claude'],
      ['.github/copilot-instructions.md', 'copilot'],
      ['.mintlify/AGENTS.md', 'mintlify'],
      ['.cursor/rules/b.mdc', 'cursor b'],
      ['.cursor/rules/style.mdc', 'cursor style'],
    ]);
    expect(found.skipped).toEqual([]);
  });

  it('cuts an oversized file (reading only its head) and says so; the total is bounded, then files are skipped', async () => {
    write('AGENTS.md', 'A'.repeat(5 * 1024 * 1024));
    write('CLAUDE.md', 'C'.repeat(INSTRUCTION_LIMITS.fileChars + 10));
    write('.github/copilot-instructions.md', 'G'.repeat(INSTRUCTION_LIMITS.fileChars));
    write('.mintlify/AGENTS.md', 'never given');
    const found = await readInstructions(await openWorkspace(root), null);
    const [agents, claude, copilot] = found.files;
    expect(agents.cut).toBe(true);
    expect(agents.text).toContain(`[cut: the file has ${5 * 1024 * 1024} bytes; only its first ${INSTRUCTION_LIMITS.fileChars} characters are given]`);
    expect(agents.text.replace(/\n\[cut:.*\]$/, '')).toHaveLength(INSTRUCTION_LIMITS.fileChars);
    expect(claude.cut).toBe(true);
    // The third file gets what is left of the total, and says it is cut.
    expect(copilot.cut).toBe(true);
    expect(copilot.text).toContain('[cut: the file has');
    expect(found.files.reduce((n, f) => n + f.text.length, 0)).toBeLessThanOrEqual(INSTRUCTION_LIMITS.totalChars + 300);
    expect(found.skipped).toEqual([{ path: '.mintlify/AGENTS.md', reason: `The instructions already fill the ${INSTRUCTION_LIMITS.totalChars}-character limit.` }]);
    expect(instructionsSection(found).length).toBeLessThan(INSTRUCTION_LIMITS.totalChars + 2000);
  });

  it('never reads a symbolic link out of the worktree, at the root or nested', async () => {
    symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'AGENTS.md'));
    mkdirSync(path.join(root, 'docs'));
    symlinkSync(path.join(outside, 'secret.md'), path.join(root, 'docs', 'AGENTS.md'));
    write('docs/page.md', '# Page');
    symlinkSync(outside, path.join(root, '.cursor'));
    const ws = await openWorkspace(root);
    const found = await readInstructions(ws, null);
    expect(found.files).toEqual([]);
    expect(found.skipped).toEqual([{ path: 'AGENTS.md', reason: expect.stringContaining('symbolic link') }]);
    expect(JSON.stringify(found)).not.toContain('OUTSIDE-SECRET');
    const given: InstructionFile[] = [];
    const notes = nestedInstructions(ws, (f) => void given.push(f));
    expect(await notes('docs/page.md')).toBeNull();
    expect(given).toEqual([]);
  });

  it('gives the nearest nested AGENTS.md once, not for the root, not for files elsewhere', async () => {
    write('AGENTS.md', 'root');
    write('docs/AGENTS.md', 'docs rule');
    write('docs/api/AGENTS.md', 'api rule');
    const given: InstructionFile[] = [];
    const notes = nestedInstructions(await openWorkspace(root), (f) => void given.push(f));
    expect(await notes('README.md')).toBeNull();
    expect(await notes('blog/new.md')).toBeNull();
    expect(await notes('docs/api/ref/call.md')).toContain('api rule');
    expect(await notes('./docs/api/other.md')).toBeNull();
    const docs = await notes('docs/guide.md');
    expect(docs).toContain('docs rule');
    expect(docs).toContain("below Folio's rules");
    expect(await notes('docs/guide.md')).toBeNull();
    expect(await notes('../etc/passwd')).toBeNull();
    expect(given.map((f) => [f.path, f.scope])).toEqual([
      ['docs/api/AGENTS.md', 'docs/api'],
      ['docs/AGENTS.md', 'docs'],
    ]);
  });
});
