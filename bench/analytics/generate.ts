// A generator of realistic docs-site traffic, deterministic from a seed:
//   - Zipf page popularity over 5,000 paths (s = 1.05),
//   - human visitors in sessions of several views within ~30 minutes, 35% of sessions by returning
//     visitors (earlier days), weekday-heavy days,
//   - about 30% of views by AI agents (assistants and coding agents, short bursts, some on .md pages),
//   - some crawlers (search and training) with few identities and many views,
//   - 1 in 3 human sessions referred (its first view; later views are clicks from the site's own host
//     OWN_HOST half the time): ~20% of them by AI assistants' answers, the rest by search, social and
//     many other hosts (REFERRER_HOSTS).
// Usage as a script: node bench/analytics/generate.ts --events 1000000 --days 30 --out access.log
import { createWriteStream } from 'node:fs';

export const HUMAN_UAS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
];
export const AI_UAS = [
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)',
  'claude-code/2.0.14 (external, cli)',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Cursor/1.7.44 Chrome/132.0.6834.210 Electron/34.5.8 Safari/537.36',
  'GitHubCopilotChat/0.31.2',
];
export const CRAWLER_UAS = [
  'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; GPTBot/1.2; +https://openai.com/gptbot',
  'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm) Chrome/116.0.1938.76 Safari/537.36',
  'CCBot/2.0 (https://commoncrawl.org/faq/)',
];
export const USER_AGENTS = [...HUMAN_UAS, ...AI_UAS, ...CRAWLER_UAS];

/** The site's own host: clicks between its pages carry it as referrer (never a referral). */
export const OWN_HOST = 'docs.example.com';
/** Referring hosts, by weight: AI assistants (on the source list), search, social, and 300 other sites (on no list). */
const WEIGHTED_HOSTS: [string, number][] = [
  ['chatgpt.com', 10], ['www.perplexity.ai', 4], ['claude.ai', 3], ['gemini.google.com', 2], ['copilot.microsoft.com', 1],
  ['www.google.com', 35], ['www.bing.com', 4], ['duckduckgo.com', 3],
  ['news.ycombinator.com', 3], ['www.reddit.com', 4], ['github.com', 6], ['stackoverflow.com', 5],
  ...Array.from({ length: 300 }, (_, i): [string, number] => [`blog-${i}.example.org`, 20 / 300]),
];
export const REFERRER_HOSTS = [...WEIGHTED_HOSTS.map(([h]) => h), OWN_HOST];
const OWN_INDEX = REFERRER_HOSTS.length - 1;

export interface Traffic {
  n: number;
  ts: Float64Array;
  path: Int32Array;
  visitor: Int32Array;
  ua: Uint8Array;
  /** Index into REFERRER_HOSTS, -1 for none. */
  referrer: Int16Array;
  paths: string[];
  visitors: number;
  start: number;
  days: number;
}

/** mulberry32: a small seeded PRNG, so generated traffic is the same on every run. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export function makePaths(count = 5000): string[] {
  const sections = ['guide', 'reference', 'api', 'tutorials', 'concepts', 'deploy', 'sdk', 'cli', 'integrations', 'changelog'];
  return Array.from({ length: count }, (_, i) => {
    const s = sections[i % sections.length];
    if (i === 0) return '/';
    if (i % 97 === 0) return `/${s}/page-${i}.md`;
    return `/docs/${s}/topic-${Math.floor(i / 10)}/page-${i}`;
  });
}

export function generateTraffic(opts: { events: number; days?: number; seed?: number; start?: number }): Traffic {
  const n = opts.events;
  const days = opts.days ?? 30;
  const r = rng(opts.seed ?? 42);
  const start = opts.start ?? Date.UTC(2025, 5, 1);
  const paths = makePaths(5000);
  // Zipf CDF over paths.
  const cdf = new Float64Array(paths.length);
  let sum = 0;
  for (let i = 0; i < paths.length; i++) cdf[i] = sum += 1 / Math.pow(i + 1, 1.05);
  for (let i = 0; i < paths.length; i++) cdf[i] /= sum;
  const zipf = () => {
    const x = r();
    let lo = 0;
    let hi = cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (cdf[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };
  const dayWeights = Array.from({ length: days }, (_, d) => ([5, 6].includes(new Date(start + d * 86_400_000).getUTCDay()) ? 0.45 : 1));
  const dw = dayWeights.reduce((a, b) => a + b, 0);
  const pickDay = () => {
    let x = r() * dw;
    for (let d = 0; d < days; d++) if ((x -= dayWeights[d]) <= 0) return d;
    return days - 1;
  };
  const hostWeight = WEIGHTED_HOSTS.reduce((a, [, w]) => a + w, 0);
  const pickHost = () => {
    let x = r() * hostWeight;
    for (let h = 0; h < WEIGHTED_HOSTS.length; h++) if ((x -= WEIGHTED_HOSTS[h][1]) <= 0) return h;
    return WEIGHTED_HOSTS.length - 1;
  };
  const t = { n, ts: new Float64Array(n), path: new Int32Array(n), visitor: new Int32Array(n), ua: new Uint8Array(n), referrer: new Int16Array(n).fill(-1), paths, visitors: 0, start, days };
  const humanSeen: { id: number; ua: number; day: number }[] = [];
  const crawlerIds = Array.from({ length: 40 }, (_, i) => i);
  let nextVisitor = crawlerIds.length;
  let i = 0;
  while (i < n) {
    const kind = r();
    const day = pickDay();
    let ts = start + day * 86_400_000 + Math.floor(r() * 86_400_000);
    if (kind < 0.62) {
      // A human session.
      let id: number;
      let ua: number;
      const returning = humanSeen.length > 0 && r() < 0.35 ? humanSeen[Math.floor(r() * humanSeen.length)] : null;
      if (returning) [id, ua] = [returning.id, returning.ua];
      else {
        id = nextVisitor++;
        ua = Math.floor(r() * HUMAN_UAS.length);
        if (humanSeen.length < 2_000_000) humanSeen.push({ id, ua, day });
      }
      const views = 1 + Math.floor(-Math.log(1 - r()) * 3);
      const referred = r() < 1 / 3 ? pickHost() : -1;
      let page = zipf();
      for (let v = 0; v < views && i < n; v++, i++) {
        t.ts[i] = ts;
        t.path[i] = page;
        t.visitor[i] = id;
        t.ua[i] = ua;
        t.referrer[i] = v === 0 ? referred : r() < 0.5 ? OWN_INDEX : -1;
        ts += Math.floor(5_000 + r() * 240_000);
        page = r() < 0.5 ? zipf() : Math.min(paths.length - 1, page + 1 + Math.floor(r() * 5));
      }
    } else if (kind < 0.92) {
      // An AI agent answering a question: a short burst, sometimes Markdown pages.
      const ua = HUMAN_UAS.length + Math.floor(r() * AI_UAS.length);
      const id = r() < 0.2 && nextVisitor > 100 ? crawlerIds.length + Math.floor(r() * (nextVisitor - crawlerIds.length)) : nextVisitor++;
      const views = 1 + Math.floor(r() * 3);
      for (let v = 0; v < views && i < n; v++, i++) {
        t.ts[i] = ts + v * 300;
        t.path[i] = zipf();
        t.visitor[i] = id;
        t.ua[i] = ua;
      }
    } else {
      // A crawler: few identities, many views, uniform over pages.
      const c = Math.floor(r() * crawlerIds.length);
      const views = 1 + Math.floor(r() * 20);
      for (let v = 0; v < views && i < n; v++, i++) {
        t.ts[i] = ts + v * 1000;
        t.path[i] = Math.floor(r() * paths.length);
        t.visitor[i] = crawlerIds[c];
        t.ua[i] = HUMAN_UAS.length + AI_UAS.length + (c % CRAWLER_UAS.length);
      }
    }
  }
  // Clamp to the window (sessions can run past midnight of the last day).
  const end = start + days * 86_400_000 - 1;
  for (let k = 0; k < n; k++) if (t.ts[k] > end) t.ts[k] = end;
  t.visitors = nextVisitor;
  return t;
}

export const ipOf = (visitor: number) => `10.${(visitor >>> 16) & 255}.${(visitor >>> 8) & 255}.${visitor & 255}`;

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const p2 = (x: number) => (x < 10 ? '0' + x : String(x));

/** One combined-format access-log line for event k. */
export function combinedLine(t: Traffic, k: number): string {
  const d = new Date(t.ts[k]);
  const when = `${p2(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} +0000`;
  const referrer = t.referrer[k] < 0 ? '-' : `https://${REFERRER_HOSTS[t.referrer[k]]}/`;
  return `${ipOf(t.visitor[k])} - - [${when}] "GET ${t.paths[t.path[k]]} HTTP/1.1" 200 ${2000 + (k % 5000)} "${referrer}" "${USER_AGENTS[t.ua[k]]}"`;
}

/** Time-ordered event indices (access logs are in time order). */
export function timeOrder(t: Traffic): Uint32Array {
  const idx = new Uint32Array(t.n);
  for (let k = 0; k < t.n; k++) idx[k] = k;
  return idx.sort((a, b) => t.ts[a] - t.ts[b]);
}

/** Writes the traffic as a time-ordered nginx/Apache combined access log. */
export async function writeCombinedLog(t: Traffic, file: string): Promise<void> {
  const ws = createWriteStream(file);
  const order = timeOrder(t);
  let buf: string[] = [];
  for (let j = 0; j < order.length; j++) {
    buf.push(combinedLine(t, order[j]));
    if (buf.length === 10_000) {
      if (!ws.write(buf.join('\n') + '\n')) await new Promise<void>((r) => ws.once('drain', () => r()));
      buf = [];
    }
  }
  ws.end(buf.length ? buf.join('\n') + '\n' : '');
  await new Promise<void>((r) => ws.on('finish', () => r()));
}

if (import.meta.main) {
  const arg = (name: string, def: string) => {
    const i = process.argv.indexOf(`--${name}`);
    return i === -1 ? def : process.argv[i + 1];
  };
  const events = Number(arg('events', '1000000'));
  const out = arg('out', 'access.log');
  const t = generateTraffic({ events, days: Number(arg('days', '30')) });
  await writeCombinedLog(t, out);
  process.stderr.write(`wrote ${events} lines (${t.visitors} visitor identities) to ${out}\n`);
}
