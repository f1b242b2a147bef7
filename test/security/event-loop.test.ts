// No untrusted input runs unbounded on the event loop: the model's search patterns run on RE2
// (linear time), globs from the model and users compile to RE2 too, and Markdown/MDX from the
// repository or the model is parsed on a worker with a time limit. While each of these runs on
// hostile input, a real server keeps answering /healthz quickly (the bound: under 100 ms).
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTools } from '../../src/agent/tools.ts';
import { openWorkspace } from '../../src/agent/workspace.ts';
import { parsePageOffLoop, checkMdxOffLoop } from '../../src/agent/parsing.ts';
import { compileUntrusted, compileUntrustedGlob, MAX_GLOB_LENGTH, MAX_PATTERN_LENGTH } from '../../src/util/untrusted-pattern.ts';
import { OffLoop } from '../../src/util/off-loop.ts';
import { pathsMatch, globProblem } from '../../src/jobs/triggers/summary.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let dir: string;
beforeAll(async () => {
  server = await startTestServer();
  dir = mkdtempSync(path.join(os.tmpdir(), 'folio-loop-'));
  writeFileSync(path.join(dir, 'evil.md'), `${'a'.repeat(40)}!\n`);
  writeFileSync(path.join(dir, 'huge.md'), `${'a'.repeat(1024 * 1024 - 2)}!\n`);
  for (let i = 0; i < 20; i++) writeFileSync(path.join(dir, `${'a'.repeat(30)}${i}.md`), 'x\n');
});
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

/**
 * Runs `work` while polling /healthz one request after another; returns the work's result and the
 * answers' times (ms). `slowest` is the 95th percentile: the suite runs test files in parallel on
 * two cores, so single answers can wait for a core; a blocked event loop would hold every answer for
 * seconds, and the outright worst is bounded separately (`worst` under a second).
 */
async function whileHealthPolled<T>(work: () => Promise<T>): Promise<{ slowest: number; worst: number; polls: number; result: T }> {
  let done = false;
  let times: number[] = [];
  const poller = (async () => {
    while (!done) {
      const t = performance.now();
      const res = await fetch(`${server.url}/healthz`);
      await res.arrayBuffer();
      times.push(performance.now() - t);
    }
  })();
  // Let the poller connect first so the first (cold) request is not counted against the work.
  await new Promise((r) => setTimeout(r, 50));
  times = [];
  const result = await work();
  await new Promise((r) => setTimeout(r, 30));
  done = true;
  await poller;
  const sorted = [...times].sort((a, b) => a - b);
  const worst = sorted.at(-1) ?? 0;
  expect(worst).toBeLessThan(1000);
  return { slowest: sorted[Math.floor(sorted.length * 0.95)] ?? 0, worst, polls: times.length, result };
}

describe('the model search tool', () => {
  it('runs (a+)+$ over a pathological line and a 1 MB line without stalling the server', async () => {
    const ws = await openWorkspace(dir, { maxReadBytes: 2 * 1024 * 1024 });
    const tools = createTools(ws, { finished: null });
    const search = tools.search as { execute: (i: unknown, o: unknown) => Promise<string> };
    const { slowest, polls, result } = await whileHealthPolled(async () => {
      const outs: string[] = [];
      for (let i = 0; i < 5; i++) outs.push(await search.execute({ pattern: '(a+)+$' }, { toolCallId: 't', messages: [] }));
      outs.push(await search.execute({ pattern: '(A|AA)+!$', ignore_case: true }, { toolCallId: 't', messages: [] }));
      return outs;
    });
    // No line ends in a run of a's; the matching pattern finds both lines, the 1 MB one shown cut.
    expect(result[0]).toBe('No matches for /(a+)+$/.');
    expect(result[5]).toContain(`evil.md:1: ${'a'.repeat(40)}!`);
    expect(result[5]).toContain(`huge.md:1: ${'a'.repeat(300)}…`);
    expect(polls).toBeGreaterThan(3);
    expect(slowest).toBeLessThan(100);
  });

  it('refuses what RE2 cannot run with a sentence for the model', async () => {
    const ws = await openWorkspace(dir);
    const search = createTools(ws, { finished: null }).search as { execute: (i: unknown, o: unknown) => Promise<string> };
    const run = (pattern: string) => search.execute({ pattern }, { toolCallId: 't', messages: [] });
    expect(await run('(a)\\1')).toMatch(/^Error: The pattern cannot be used: invalid escape sequence: `\\1`\. Patterns use RE2 syntax/);
    expect(await run('(?=a)a')).toMatch(/^Error: The pattern cannot be used: .*\(\?=.*Patterns use RE2 syntax/);
    expect(await run('a'.repeat(MAX_PATTERN_LENGTH + 1))).toMatch(/^Error: The pattern is 1001 characters long; at most 1000 are allowed\./);
    // Ordinary patterns and flags keep working.
    expect(compileUntrusted('^#\\s+\\w+', {}).test('# Home')).toBe(true);
    expect(compileUntrusted('HOME', { ignoreCase: true }).test('# home')).toBe(true);
    expect(compileUntrusted('\\d{2,3}').test('a1b')).toBe(false);
  });
});

describe('globs from the model and users', () => {
  const hostile = `${'*a'.repeat(20)}*b`; // picomatch: over a minute on a 40-character name

  it('match in linear time: the model listing files and a trigger path filter', async () => {
    const ws = await openWorkspace(dir);
    const list = createTools(ws, { finished: null }).list_files as { execute: (i: unknown, o: unknown) => Promise<string> };
    const { slowest, result } = await whileHealthPolled(async () => {
      const listed = await list.execute({ glob: hostile }, { toolCallId: 't', messages: [] });
      const matched = pathsMatch([{ path: `${'a'.repeat(4000)}` }, { path: 'docs/a.md' }], [hostile, `**/${hostile}`]);
      return { listed, matched };
    });
    expect(result.listed).toBe(`No files match "${hostile}".`);
    expect(result.matched).toBe(false);
    expect(slowest).toBeLessThan(100);
  });

  it.each([
    ['*.md', 'docs/a.md', true, true],
    ['*.md', 'a.md', true, true],
    ['docs/*.md', 'docs/x/a.md', false, false],
    ['docs/**', 'docs/x/a.md', true, true],
    ['src/**/*.ts', 'src/a.ts', true, true],
    ['*.{md,mdx}', 'guide/b.mdx', true, true],
    ['[!a-c]*.md', 'b.md', false, false],
    ['.github/**', '.github/workflows/ci.yml', true, true],
    ['a\\*b', 'a*b', true, true],
    ['?.md', 'ab.md', false, false],
  ])('%s on %s: the model (file names anywhere) %s, a path filter (whole path) when it has a slash', (glob, p, forModel) => {
    expect(compileUntrustedGlob(glob, { matchBase: true })(p)).toBe(forModel);
    if (glob.includes('/')) expect(compileUntrustedGlob(glob)(p)).toBe(forModel);
  });

  it('a path filter without a slash matches from the root, as before', () => {
    expect(pathsMatch([{ path: 'docs/a.md' }], ['*.md'])).toBe(false);
    expect(pathsMatch([{ path: 'a.md' }], ['*.md'])).toBe(true);
  });

  it('refuses long or malformed globs with a sentence', () => {
    expect(globProblem('x'.repeat(MAX_GLOB_LENGTH + 1))).toMatch(/at most 500 are allowed/);
    expect(globProblem('docs/[abc')).toMatch(/has a "\[" without its "\]"/);
    expect(globProblem('{a,b')).toMatch(/has a "\{" without its "\}"/);
    expect(globProblem(`${'{a,b}'.repeat(60)}`)).toMatch(/more than 100 \{…\} alternatives/);
    expect(globProblem('src/**')).toBeNull();
  });
});

describe('Markdown and MDX from the repository or the model', () => {
  // micromark's emphasis resolution is quadratic: this page takes ~26 s to parse on one thread.
  const slowPage = '*a'.repeat(50_000);

  it('is parsed off the event loop; a page over the time limit is reported unparsed, and the server never stalls', async () => {
    const { slowest, result } = await whileHealthPolled(() => Promise.all([parsePageOffLoop(slowPage, 'md'), checkMdxOffLoop(slowPage, 'md', {})]));
    const [parsed, problems] = result;
    expect(parsed).toEqual({ links: [], headings: [], ids: [], frontMatter: {}, truncated: true });
    expect(problems).toEqual([expect.stringMatching(/^The file took longer than 10 s to parse; simplify it/)]);
    expect(slowest).toBeLessThan(100);
    // The worker is replaced: the next page parses normally.
    const next = await parsePageOffLoop('# Title\n\n[x](./y.md)\n', 'md');
    expect(next.links).toEqual([{ href: './y.md', line: 3, kind: 'link' }]);
  }, 60_000);

  it('a task over its limit stops its thread, and the next task gets a new one', async () => {
    const tasks = new URL('../fixtures/off-loop-tasks.ts', import.meta.url);
    await expect(new OffLoop<{ spin: (ms: number) => number }>(tasks, { timeoutMs: 300 }).run('spin', 60_000)).rejects.toMatchObject({ code: 'task_timed_out' });
    // A new thread starts (its limit counts its start-up, so this one gets room for a loaded machine).
    await expect(new OffLoop<{ spin: (ms: number) => number }>(tasks, { timeoutMs: 10_000 }).run('spin', 1)).resolves.toBe(1);
  });

  it('a task waiting for a thread starts its limit when it runs: three long tasks on two threads all finish', async () => {
    // Each task takes 3 s of its 5 s; the third waits 3 s for a thread, which must not count.
    const loop = new OffLoop<{ spin: (ms: number) => number }>(new URL('../fixtures/off-loop-tasks.ts', import.meta.url), { timeoutMs: 5_000 });
    await expect(Promise.all([loop.run('spin', 3_000), loop.run('spin', 3_000), loop.run('spin', 3_000)])).resolves.toEqual([3_000, 3_000, 3_000]);
  }, 30_000);
});
