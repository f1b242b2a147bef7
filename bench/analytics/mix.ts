// The events API bodies the ingest benchmarks post or parse: generated traffic as `POST …/events`
// bodies of 1,000 events, and "the mix of a real site" (2% of views not found, 1 in 3 sessions
// referred: its landing view carries the referrer), whole or in parts, so each part's cost can be
// told apart (events-api.ts, ingest-mix.ts).
import { ipOf, rng, timeOrder, USER_AGENTS, type Traffic } from './generate.ts';

const DAY = 86_400_000;

/** The site the benches' project serves (its own pages refer to each other). */
export const SITE = 'https://docs.example.com';
const OUTSIDE = ['https://www.google.com/', 'https://chatgpt.com/', 'https://news.ycombinator.com/item?id=4242', 'https://github.com/acme/docs'];

/**
 * Which parts of the mix the bodies carry: both, one of them, or none (then the mix's bodies equal the
 * plain ones: a control run that shows the bench's own noise).
 */
export const MIX_PARTS = ['all', 'not-found', 'referred', 'none'] as const;
export type MixParts = (typeof MIX_PARTS)[number];

/** A command-line choice among `allowed` (the first when not given). */
function choice<T extends string>(flag: string, allowed: readonly T[], value: string | undefined): T {
  if (value === undefined) return allowed[0];
  if (!(allowed as readonly string[]).includes(value)) throw new Error(`${flag}: one of ${allowed.join(', ')}`);
  return value as T;
}

export const mixParts = (value: string | undefined): MixParts => choice('--mix-parts', MIX_PARTS, value);

/** 2% of views are not found (every 50th). */
export const notFoundView = (parts: MixParts, k: number) => (parts === 'all' || parts === 'not-found') && k % 50 === 0;

/**
 * Which views of a referred session carry its referrer: `first`, its landing view, as browsers send it
 * (a later view's Referer is the site's own page) and as Folio's script does (once per page load, so a
 * single-page site's later views carry none); `every`, every view of it (as if each page were opened
 * from the referring site): a worst case.
 */
export const REFERRED_VIEWS = ['first', 'every'] as const;
export type ReferredViews = (typeof REFERRED_VIEWS)[number];

export const referredViews = (value: string | undefined): ReferredViews => choice('--referred-views', REFERRED_VIEWS, value);

/** 1 in 3 sessions (visitor and day) are referred. */
function referrerOf(parts: MixParts, t: Traffic, k: number): string | undefined {
  if (parts !== 'all' && parts !== 'referred') return undefined;
  const session = Math.imul(t.visitor[k], 2654435761) ^ Math.floor(t.ts[k] / DAY);
  if ((session >>> 0) % 3 !== 0) return undefined;
  // Half the referred sessions come from outside, half click on from another of the site's pages.
  return (session >>> 2) % 2 === 0 ? OUTSIDE[(session >>> 3) % OUTSIDE.length] : `${SITE}${t.paths[(t.path[k] + 1) % t.paths.length]}`;
}

/**
 * The bodies of one arrival order: 1,000 events each, ISO timestamps, IP + user agent (with `parts`,
 * statuses and referrers on the views `views` says). Both arrival orders keep a session's views in
 * time order, so a session's first view in `order` is its landing view.
 */
export function bodies(t: Traffic, order: Uint32Array, parts?: MixParts, views: ReferredViews = 'first'): string[] {
  const out: string[] = [];
  const landed = new Set<number>();
  for (let s = 0; s < order.length; s += 1000) {
    const events = [];
    for (let j = s; j < Math.min(order.length, s + 1000); j++) {
      const k = order[j];
      const e: Record<string, unknown> = { timestamp: new Date(t.ts[k]).toISOString(), path: t.paths[t.path[k]], userAgent: USER_AGENTS[t.ua[k]], ip: ipOf(t.visitor[k]) };
      if (parts !== undefined) {
        const session = t.visitor[k] * 65_536 + Math.floor(t.ts[k] / DAY);
        const landing = !landed.has(session);
        if (landing) landed.add(session);
        const r = landing || views === 'every' ? referrerOf(parts, t, k) : undefined;
        if (r !== undefined) e.referrer = r;
        if (notFoundView(parts, k)) e.status = 404;
      }
      events.push(e);
    }
    out.push(JSON.stringify({ events }));
  }
  return out;
}

/** Sessions (a visitor's views of one day, in time order) in random order across the whole window. */
export function randomSessions(t: Traffic): Uint32Array {
  const byTime = timeOrder(t);
  const sessions = new Map<string, number[]>();
  for (const k of byTime) {
    const id = `${t.visitor[k]}:${Math.floor(t.ts[k] / DAY)}`;
    let s = sessions.get(id);
    if (!s) sessions.set(id, (s = []));
    s.push(k);
  }
  const list = [...sessions.values()];
  const r = rng(99);
  for (let i = list.length - 1; i > 0; i--) {
    const j = Math.floor(r() * (i + 1));
    [list[i], list[j]] = [list[j], list[i]];
  }
  return Uint32Array.from(list.flat());
}

/** Median and range of the paired ratios b[i] / a[i] (rounds run in pairs: drift between rounds cancels). */
export function pairedRatios(a: number[], b: number[]): { median: number; min: number; max: number } {
  const r = a.map((x, i) => b[i] / x).sort((x, y) => x - y);
  return { median: r[Math.floor(r.length / 2)], min: r[0], max: r[r.length - 1] };
}
