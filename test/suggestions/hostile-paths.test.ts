// Nothing a visitor sends runs unbounded (issue 30): 50 distinct 200-character not-found paths (the
// longest a suggestion takes), each with four visitors, on a 3,000-page Mintlify repository. Listing the suggestions scores every path
// against the site, and while two lists run (the first reads the repository and indexes the pages) a
// poller on another thread keeps asking /healthz: the server's event loop is never held (/healthz
// answers and the event-loop delay under 100 ms at the 95th percentile, never a second), and the
// list answers with every path compared.
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { repoOf } from './repos.ts';

const PAGES = 3000;
const PATHS = 50;
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const WORDS = 'api auth billing cache cli config deploy errors events export guide hooks import install keys limits logs metrics node python rate release sdk search setup teams tokens usage users webhooks'.split(' ');

function mintlifySite(dir: string): void {
  const pages = Array.from({ length: PAGES }, (_, i) => `${WORDS[i % WORDS.length]}/${WORDS[(i * 7) % WORDS.length]}-${WORDS[(i * 13) % WORDS.length]}-${i}`);
  writeFileSync(path.join(dir, 'docs.json'), JSON.stringify({ name: 'Big', navigation: { groups: [{ group: 'All', pages }] } }));
  for (const [i, p] of pages.entries()) {
    mkdirSync(path.dirname(path.join(dir, `${p}.mdx`)), { recursive: true });
    writeFileSync(path.join(dir, `${p}.mdx`), `---\ntitle: ${WORDS[(i * 3) % WORDS.length]} ${WORDS[(i * 5) % WORDS.length]} ${i}\n---\n\n# Page ${i}\n`);
  }
}

/**
 * The costliest path a suggestion still takes (src/suggestions/path-shape.ts): 200 characters in 12
 * segments of two- and three-letter words, as many words as such a path can hold. Longer or
 * odder paths (the 299 characters of the report) are listed for people and never scored.
 */
const hostilePath = (i: number) => {
  const segments = [`docs`, `h${i}`];
  for (let k = 0; segments.length < 12; k++) {
    let seg = '';
    for (let w = 0; seg.length < 14; w++) seg += `${seg ? '-' : ''}${WORDS[(i + k * 7 + w * 3) % WORDS.length].slice(0, 2 + ((k + w) % 2))}`;
    segments.push(seg);
  }
  return `/${segments.join('/')}`.slice(0, 200).replace(/[-/]+$/, '');
};

let e: E2E;
beforeAll(async () => {
  e = await startE2E();
});
afterAll(async () => {
  await e?.close();
});

/** Asks /healthz one request after another on its own thread (so a held server loop shows in its times); `start` clears the times, `stop` answers with them. */
const POLLER = `
const { parentPort, workerData } = require('node:worker_threads');
let times = [];
let polls = 0;
let done = false;
parentPort.on('message', (m) => { if (m === 'start') times = []; else done = true; });
(async () => {
  while (!done) {
    const t = performance.now();
    const res = await fetch(workerData.url);
    await res.arrayBuffer();
    times.push(performance.now() - t);
    if (++polls === 3) parentPort.postMessage('ready');
    await new Promise((r) => setTimeout(r, 5));
  }
  parentPort.postMessage({ times });
})();
`;

/**
 * Runs `work` while /healthz is polled from another thread. Returns the answers' 95th percentile and
 * worst time, and the server's event-loop delay (95th percentile and worst), in ms. The bound of
 * 100 ms is on the 95th percentile, as in test/security/event-loop.test.ts: test files run in parallel
 * on two shared cores, where one answer can wait for a core or a garbage collection (single stalls of
 * 150–400 ms were seen at load averages of 14–20); the worst is bounded at a second. Scoring on the
 * event loop, as before, held it for the whole list (66 s for these paths), one stall that only the
 * worst catches.
 */
async function whileHealthPolled<T>(work: () => Promise<T>) {
  const poller = new Worker(POLLER, { eval: true, workerData: { url: `${e.server.url}/healthz` } });
  await new Promise((r) => poller.once('message', r));
  poller.postMessage('start');
  const delay = monitorEventLoopDelay({ resolution: 10 });
  delay.enable();
  const result = await work();
  delay.disable();
  const { times } = await new Promise<{ times: number[] }>((r) => {
    poller.once('message', r);
    poller.postMessage('stop');
  });
  await poller.terminate();
  const sorted = [...times].sort((a, b) => a - b);
  const ms = (ns: number) => ns / 1e6;
  return { result, polls: times.length, p95: sorted[Math.floor(sorted.length * 0.95)], worst: sorted.at(-1)!, loopP95: ms(delay.percentile(95)), loopWorst: ms(delay.max) };
}

describe('hostile not-found paths on a large site', () => {
  it(`${PATHS} site-shaped paths of 200 characters on ${PAGES} pages: every path compared, /healthz under 100 ms throughout`, { timeout: 180_000 }, async () => {
    const url = repoOf(e, 'acme/big-site', mintlifySite);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
    const key = await e.server.createKey(projectId);
    const at = Date.now() - 86_400_000;
    const events = Array.from({ length: PATHS }, (_, i) =>
      [1, 2, 3, 4].map((n) => ({ path: hostilePath(i), userAgent: HUMAN_UA, ip: `203.0.${i}.${n}`, status: 404, timestamp: at })),
    ).flat();
    const sent = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
    expect([sent.status, sent.body.rejected]).toEqual([202, []]);

    for (const round of ['first list (reads and indexes the site)', 'next list']) {
      const { result: listed, polls, p95, worst, loopP95, loopWorst } = await whileHealthPolled(() => e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key }));
      console.log(`${round}: /healthz 95th percentile ${p95.toFixed(1)} ms, worst ${worst.toFixed(1)} ms over ${polls} polls; event-loop delay 95th percentile ${loopP95.toFixed(1)} ms, worst ${loopWorst.toFixed(1)} ms`);
      expect(listed.status).toBe(200);
      expect(listed.body.site).toMatchObject({ read: true, framework: 'mintlify', pages: PAGES, error: null, notes: [] });
      const broken = listed.body.suggestions.find((s: { kind: string }) => s.kind === 'broken_paths');
      expect(broken.paths).toHaveLength(PATHS);
      expect(polls).toBeGreaterThan(3);
      expect(p95).toBeLessThan(100);
      expect(loopP95).toBeLessThan(100);
      expect(worst).toBeLessThan(1000);
      expect(loopWorst).toBeLessThan(1000);
    }
  });
});
