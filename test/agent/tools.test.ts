import { mkdtempSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createTools, type FinishState } from '../../src/agent/tools.ts';
import { openWorkspace, type Workspace } from '../../src/agent/workspace.ts';

let dir: string;
let outside: string;
let ws: Workspace;
let tools: ReturnType<typeof createTools>;
const state: FinishState = { finished: null };

async function call(name: string, input: Record<string, unknown>): Promise<string> {
  const t = tools[name] as { execute: (i: unknown, o: unknown) => Promise<string> };
  return t.execute(input, { toolCallId: 't', messages: [] });
}

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'folio-ws-'));
  outside = mkdtempSync(path.join(os.tmpdir(), 'folio-out-'));
  writeFileSync(path.join(outside, 'secret.txt'), 'TOP SECRET');
  mkdirSync(path.join(dir, 'docs/guide'), { recursive: true });
  mkdirSync(path.join(dir, '.git'), { recursive: true });
  writeFileSync(path.join(dir, '.git/config'), '[core]\n');
  writeFileSync(path.join(dir, 'docs/index.md'), '# Home\n\nWelcome to the docs.\nWelcome again.\n');
  writeFileSync(path.join(dir, 'docs/guide/install.mdx'), '---\ntitle: Install\n---\n\nRun `npm install`.\n');
  symlinkSync(outside, path.join(dir, 'docs/escape'));
  symlinkSync(path.join(outside, 'secret.txt'), path.join(dir, 'leak.txt'));
  symlinkSync('index.md', path.join(dir, 'docs/alias.md'));
  ws = await openWorkspace(dir, { maxOutputChars: 400, maxReadBytes: 2000, maxWriteBytes: 1000, maxSearchMatches: 3 });
  tools = createTools(ws, state);
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('tool set', () => {
  it('has exactly the issue names', () => {
    expect(Object.keys(tools).sort()).toEqual(['delete_file', 'edit_file', 'finish', 'list_files', 'move_file', 'read_file', 'search', 'write_file']);
  });
});

describe('path escapes are refused with a readable error', () => {
  const attempts: [string, Record<string, unknown>][] = [
    ['read_file', { path: '../etc/passwd' }],
    ['read_file', { path: 'docs/../../x' }],
    ['read_file', { path: '/etc/passwd' }],
    ['read_file', { path: 'docs/escape/secret.txt' }],
    ['read_file', { path: 'leak.txt' }],
    ['read_file', { path: '.git/config' }],
    ['write_file', { path: '.git/hooks/post-checkout', content: 'evil' }],
    ['write_file', { path: '.git', content: 'x' }],
    ['write_file', { path: 'docs/escape/new.txt', content: 'x' }],
    ['write_file', { path: '../outside.txt', content: 'x' }],
    ['edit_file', { path: 'leak.txt', old_string: 'TOP', new_string: 'X' }],
    ['delete_file', { path: '.git/config' }],
    ['delete_file', { path: '../x' }],
    ['move_file', { from: 'docs/index.md', to: '.git/index.md' }],
    ['move_file', { from: 'docs/index.md', to: '../moved.md' }],
    ['move_file', { from: 'docs/index.md', to: 'docs/escape/moved.md' }],
    ['list_files', { path: '..' }],
    ['list_files', { path: 'docs/escape' }],
    ['search', { pattern: 'SECRET', path: 'docs/escape' }],
    ['read_file', { path: 'docs\\..\\..\\x' }],
    ['read_file', { path: 'a\0b' }],
  ];
  for (const [name, input] of attempts) {
    it(`${name} ${JSON.stringify(input)}`, async () => {
      const out = await call(name, input);
      expect(out).toMatch(/^Error: /);
      expect(out).not.toContain('TOP SECRET');
    });
  }

  it('leaves everything outside and under .git untouched', async () => {
    await call('write_file', { path: '.git/config', content: 'evil' });
    await call('move_file', { from: 'docs/index.md', to: '../moved.md' });
    expect(readFileSync(path.join(dir, '.git/config'), 'utf8')).toBe('[core]\n');
    expect(existsSync(path.join(dir, '../moved.md'))).toBe(false);
    expect(existsSync(path.join(outside, 'new.txt'))).toBe(false);
    expect(readFileSync(path.join(outside, 'secret.txt'), 'utf8')).toBe('TOP SECRET');
  });

  it('allows absolute paths and symlinks that stay inside', async () => {
    expect(await call('read_file', { path: path.join(ws.root, 'docs/index.md') })).toContain('Welcome');
    expect(await call('read_file', { path: 'docs/alias.md' })).toContain('Welcome');
  });

  it('search never reports matches from outside or from .git', async () => {
    const out = await call('search', { pattern: 'SECRET|core' });
    expect(out).toMatch(/^No matches/);
  });
});

describe('edit_file exact-match rules', () => {
  it('replaces a unique match', async () => {
    const out = await call('edit_file', { path: 'docs/index.md', old_string: '# Home', new_string: '# Start' });
    expect(out).toBe('Edited docs/index.md: replaced 1 occurrence.');
    expect(readFileSync(path.join(dir, 'docs/index.md'), 'utf8')).toBe('# Start\n\nWelcome to the docs.\nWelcome again.\n');
  });
  it('refuses an ambiguous match unless replace_all', async () => {
    const out = await call('edit_file', { path: 'docs/index.md', old_string: 'Welcome', new_string: 'Hello' });
    expect(out).toMatch(/occurs 2 times.*replace_all/);
    expect(readFileSync(path.join(dir, 'docs/index.md'), 'utf8')).toContain('Welcome to');
    const all = await call('edit_file', { path: 'docs/index.md', old_string: 'Welcome', new_string: 'Hello', replace_all: true });
    expect(all).toContain('replaced 2 occurrences');
    expect(readFileSync(path.join(dir, 'docs/index.md'), 'utf8')).toBe('# Home\n\nHello to the docs.\nHello again.\n');
  });
  it('refuses a missing match, empty old_string and a no-op', async () => {
    expect(await call('edit_file', { path: 'docs/index.md', old_string: '#  Home', new_string: 'x' })).toMatch(/not found.*exactly/);
    expect(await call('edit_file', { path: 'docs/index.md', old_string: '', new_string: 'x' })).toMatch(/must not be empty/);
    expect(await call('edit_file', { path: 'docs/index.md', old_string: 'Home', new_string: 'Home' })).toMatch(/same/);
    expect(await call('edit_file', { path: 'docs/none.md', old_string: 'a', new_string: 'b' })).toMatch(/does not exist/);
  });
  it('treats $ patterns in new_string literally', async () => {
    await call('edit_file', { path: 'docs/index.md', old_string: '# Home', new_string: "# $& $1 $'" });
    expect(readFileSync(path.join(dir, 'docs/index.md'), 'utf8').split('\n')[0]).toBe("# $& $1 $'");
  });
});

describe('reads, lists, clipping and size caps', () => {
  it('reads line ranges with numbers', async () => {
    const out = await call('read_file', { path: 'docs/index.md', start_line: 3, end_line: 4 });
    expect(out).toContain('lines 3-4 of 4');
    expect(out).toContain('3\tWelcome to the docs.');
    expect(out).not.toContain('# Home');
    expect(await call('read_file', { path: 'docs/index.md', start_line: 9 })).toMatch(/past the end/);
    expect(await call('read_file', { path: 'docs' })).toMatch(/is a directory/);
  });
  it('clips long output and says so', async () => {
    writeFileSync(path.join(dir, 'long.md'), Array.from({ length: 100 }, (_, i) => `line ${i} ${'x'.repeat(10)}`).join('\n'));
    const out = await call('read_file', { path: 'long.md' });
    expect(out).toMatch(/clipped: \d+ more characters/);
    expect(out).toContain('Use start_line and end_line');
    expect(out.length).toBeLessThan(800);
  });
  it('caps reads and writes', async () => {
    writeFileSync(path.join(dir, 'big.md'), 'y'.repeat(3000));
    expect(await call('read_file', { path: 'big.md' })).toMatch(/over the 2000-byte read limit/);
    expect(await call('write_file', { path: 'new.md', content: 'z'.repeat(1001) })).toMatch(/over the 1000-byte write limit/);
    expect(existsSync(path.join(dir, 'new.md'))).toBe(false);
  });
  it('refuses binary files', async () => {
    writeFileSync(path.join(dir, 'img.png'), Buffer.from([0x89, 0x50, 0, 1, 2]));
    expect(await call('read_file', { path: 'img.png' })).toMatch(/binary/);
  });
  it('lists files with a glob, skipping .git', async () => {
    const out = await call('list_files', { glob: '**/*.mdx' });
    expect(out).toBe('docs/guide/install.mdx');
    const all = await call('list_files', {});
    expect(all).not.toContain('.git');
    expect(all).toContain('docs/index.md');
  });
  it('searches with regex and glob, bounded matches', async () => {
    expect(await call('search', { pattern: 'npm\\s+install', glob: '*.mdx' })).toBe('docs/guide/install.mdx:5: Run `npm install`.');
    expect(await call('search', { pattern: '(' })).toMatch(/^Error: The pattern cannot be used: missing closing \)/);
    writeFileSync(path.join(dir, 'many.md'), 'hit\n'.repeat(10));
    expect(await call('search', { pattern: 'hit' })).toMatch(/stopped at 3 matches/);
  });
  it('writes, moves and deletes, tracking touched files', async () => {
    expect(await call('write_file', { path: 'docs/new/page.md', content: '# New\n' })).toMatch(/^Created/);
    expect(await call('move_file', { from: 'docs/new/page.md', to: 'docs/page.md' })).toMatch(/^Moved/);
    expect(await call('move_file', { from: 'docs/page.md', to: 'docs/index.md' })).toMatch(/already exists/);
    expect(await call('delete_file', { path: 'docs/guide/install.mdx' })).toMatch(/^Deleted/);
    expect(await call('delete_file', { path: 'docs/guide/install.mdx' })).toMatch(/does not exist/);
    expect([...ws.touched].sort()).toEqual(['docs/guide/install.mdx', 'docs/new/page.md', 'docs/page.md']);
  });
  it('finish records title and summary', async () => {
    expect(await call('finish', { title: ' T ', summary: 'S' })).toBe('Turn finished.');
    expect(state.finished).toEqual({ title: 'T', summary: 'S' });
  });
});
