// Candidate scoring on hostile not-found paths (issue 30): 50 distinct 299-character paths of short
// words on a docs site of N pages. Before: every page compared with every path word by word on the
// event loop (test/fixtures/reference-candidates.ts, the first implementation), timed on a few paths
// and given per path and for 50. After: the page index built once per site version, then the capped,
// budgeted scoring of all 50 paths; and the same list through the worker (candidate-scoring.ts) while
// the event loop's delay is watched.
//   node_modules/.bin/node bench/suggestions-scoring.ts [pages=3000] [oldPaths=3]
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { candidatesOfList, PageIndex, type ScoredPage } from '../src/suggestions/candidates.ts';
import { scoreCandidates } from '../src/suggestions/candidate-scoring.ts';
import { referenceCandidates } from '../test/fixtures/reference-candidates.ts';

const pageCount = Number(process.argv[2] ?? 3000);
const oldPaths = Number(process.argv[3] ?? 3);

const WORDS = 'api auth authentication authorization billing cache cli config deploy deployment errors events export guide guides hooks import install keys limits logs metrics migrate node overview pagination python quickstart rate reference release sdk search security settings setup storage teams testing tokens upgrade usage users webhooks'.split(' ');
let seed = 42;
const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31);
const pick = () => WORDS[Math.floor(rand() * WORDS.length)];

const pages: ScoredPage[] = Array.from({ length: pageCount }, (_, i) => {
  const slug = `${pick()}-${pick()}-${i}`;
  return { file: `docs/${pick()}/${slug}.mdx`, url: `/${pick()}/${pick()}/${slug}`, title: `${pick()} ${pick()} ${pick()}`.replace(/^./, (c) => c.toUpperCase()) };
});
/** 299 characters of two- and three-letter words joined by hyphens: as many words as a path can hold. */
const hostile = Array.from({ length: 50 }, (_, i) => {
  let p = `/docs/h${i}/`;
  while (p.length < 296) p += `${pick().slice(0, 2 + (p.length % 2))}-`;
  return p.slice(0, 299);
});

const ms = (t: number) => `${t.toFixed(1)} ms`;

let t = performance.now();
for (const p of hostile.slice(0, oldPaths)) referenceCandidates(p, pages);
const oldPerPath = (performance.now() - t) / oldPaths;

t = performance.now();
const index = new PageIndex(pages);
const indexMs = performance.now() - t;
t = performance.now();
const list = candidatesOfList(hostile, index);
const newMs = performance.now() - t;

const delay = monitorEventLoopDelay({ resolution: 5 });
delay.enable();
t = performance.now();
await scoreCandidates({ version: 'bench-cold', pages }, hostile);
const coldMs = performance.now() - t;
t = performance.now();
await scoreCandidates({ version: 'bench-cold', pages }, hostile);
const warmMs = performance.now() - t;
delay.disable();

console.log(`candidate scoring, 50 hostile 299-character paths on ${pageCount} pages:`);
console.log(`  before (every page, word by word, on the event loop): ${ms(oldPerPath)} per path (timed on ${oldPaths}), ${(oldPerPath * 50 / 1000).toFixed(1)} s for 50`);
console.log(`  after: index built once per site version ${ms(indexMs)}; 50 paths ${ms(newMs)} (${list.unscored} left unscored by the budget)`);
console.log(`  ratio before/after for the 50 paths: ${((oldPerPath * 50) / newMs).toFixed(0)}×`);
console.log(`  through the worker: first list (pages sent, index built) ${ms(coldMs)}, next list ${ms(warmMs)}; event loop delay max ${ms(delay.max / 1e6)}`);
