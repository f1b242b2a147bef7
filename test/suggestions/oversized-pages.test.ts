// Every read of repository content checks the size first (issue 30): a small repository holding two
// 200 MB pages (they compress to almost nothing) once took the server from 309 MB to 1.5 GB on one
// suggestions list. Git is asked each file's size before its content; files over the page limit are
// not read, and the list's site status names them. Measured in this process, which is the server:
// its memory (RSS) during and after the list stays within 100 MB of where it was before.
import { closeSync, mkdirSync, openSync, writeFileSync, writeSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { committedTree, repoOf, serve } from './repos.ts';
import { MAX_PAGE_BYTES } from '../../src/agent/checks/tree.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const HUGE_BYTES = 200 * 1024 * 1024;
const MB = 1024 * 1024;

/** A page of `bytes` bytes written a megabyte at a time (never held whole in this process). */
function writeHuge(file: string, bytes: number): void {
  mkdirSync(path.dirname(file), { recursive: true });
  const fd = openSync(file, 'w');
  const head = Buffer.from('---\ntitle: Huge\n---\n\n# Huge\n\n');
  const line = Buffer.from('Lorem ipsum dolor sit amet, consectetur adipiscing elit.\n');
  const block = Buffer.alloc(MB);
  for (let i = 0; i < MB; i += line.length) line.copy(block, i);
  writeSync(fd, head);
  for (let written = head.length; written < bytes; written += MB) writeSync(fd, block, 0, Math.min(MB, bytes - written));
  closeSync(fd);
}

function site(dir: string, huge: boolean): void {
  const pages = ['index', 'guides/auth', ...(huge ? ['huge/one', 'huge/two'] : [])];
  writeFileSync(path.join(dir, 'docs.json'), JSON.stringify({ name: 'Acme', navigation: { groups: [{ group: 'All', pages }] } }));
  writeFileSync(path.join(dir, 'index.mdx'), '---\ntitle: Home\n---\n\n# Acme\n');
  mkdirSync(path.join(dir, 'guides'));
  writeFileSync(path.join(dir, 'guides/auth.mdx'), '---\ntitle: Authentication\n---\n\n# Tokens\n');
  if (huge) {
    writeHuge(path.join(dir, 'huge/one.mdx'), HUGE_BYTES);
    writeHuge(path.join(dir, 'huge/two.mdx'), HUGE_BYTES);
  }
}

let e: E2E;
/** The two huge pages, committed before the server starts (writing and compressing 400 MB takes a while). */
let hugeTree: string;
beforeAll(async () => {
  hugeTree = committedTree((dir) => site(dir, true));
  e = await startE2E();
});
afterAll(async () => {
  await e?.close();
});

/** A project on `url` with not-found traffic for /huge/onee and /guides/authentication (three visitors each). */
async function projectWithTraffic(url: string): Promise<{ projectId: string; key: string }> {
  const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
  const key = await e.server.createKey(projectId);
  const at = Date.now() - 86_400_000;
  const events = ['/huge/onee', '/guides/authentication'].flatMap((p) => [1, 2, 3].map((n) => ({ path: p, userAgent: HUMAN_UA, ip: `203.0.113.${n}`, status: 404, timestamp: at })));
  const sent = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
  expect([sent.status, sent.body.rejected]).toEqual([202, []]);
  return { projectId, key };
}

describe('repository content read with its size checked first', () => {
  it('two 200 MB pages: not read, named in the site status, and the server stays within 100 MB', { timeout: 300_000 }, async () => {
    // A first list on a small site: workers started and modules loaded before measuring.
    const small = await projectWithTraffic(repoOf(e, 'acme/small-site', (dir) => site(dir, false)));
    const warm = await e.server.api('GET', `/v2/agent/${small.projectId}/suggestions`, { key: small.key });
    expect(warm.body.site).toMatchObject({ read: true, notes: [] });

    const huge = await projectWithTraffic(serve(e, 'acme/huge-pages', hugeTree));
    const before = process.memoryUsage.rss();
    let peak = before;
    const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage.rss())), 20);
    const listed = await e.server.api('GET', `/v2/agent/${huge.projectId}/suggestions`, { key: huge.key });
    clearInterval(sampler);
    const after = process.memoryUsage.rss();
    console.log(`RSS before ${(before / MB).toFixed(0)} MB, peak during the list ${(peak / MB).toFixed(0)} MB, after ${(after / MB).toFixed(0)} MB`);

    expect(listed.status).toBe(200);
    expect(listed.body.site).toMatchObject({ read: true, framework: 'mintlify', pages: 4, error: null });
    expect(listed.body.site.notes).toEqual([
      `2 files are over the ${(MAX_PAGE_BYTES / MB).toFixed(1)} MB read limit and were not read (titles come from file names): huge/one.mdx (200.0 MB), huge/two.mdx (200.0 MB).`,
    ]);
    // The pages themselves are still known by their paths.
    const broken = listed.body.suggestions.find((s: { kind: string }) => s.kind === 'broken_paths');
    const byPath = Object.fromEntries(broken.paths.map((p: { path: string; candidates: { url: string }[] }) => [p.path, p.candidates[0]?.url]));
    expect(byPath).toEqual({ '/huge/onee': '/huge/one', '/guides/authentication': '/guides/auth' });
    expect(peak - before).toBeLessThan(100 * MB);
    expect(after - before).toBeLessThan(100 * MB);
  });
});
