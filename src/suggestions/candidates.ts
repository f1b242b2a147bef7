// Which existing pages most likely replace a path that answered "not found": compared by slug (the
// last path segment), by title (the words of the whole path against the page's title) and by
// navigation (the sections the path sat in against the page's). Pure functions over the site index.
import type { IndexedPage } from './site-index.ts';

export interface Candidate {
  /** The page's site path, e.g. /guides/authentication. */
  url: string;
  file: string;
  title: string;
  /** 0…1, two decimals: 0.5 × slug + 0.3 × title + 0.2 × navigation similarity. */
  score: number;
  /** Which comparisons matched well (≥ 0.5). */
  matchedBy: ('slug' | 'title' | 'navigation')[];
}

/** Below this score a page is not offered. */
const MIN_SCORE = 0.3;
export const MAX_CANDIDATES = 3;

const WEIGHTS = { slug: 0.5, title: 0.3, navigation: 0.2 } as const;

/** Lower-case words of a path or title; file extensions, `index` and version-like words dropped. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\.(html?|mdx?|php|aspx?)$/g, '')
    .split(/[^a-z0-9]+/)
    .filter((w) => w && w !== 'index' && !/^v?\d+$/.test(w));
}

function segmentsOf(sitePath: string): string[] {
  return sitePath.toLowerCase().split(/[/?#]/).filter(Boolean).slice(0, 20);
}

/** Dice coefficient of character bigrams: tolerant of typos, plurals and reordered word parts. */
function bigramSimilarity(a: string, b: string): number {
  if (a === b) return a ? 1 : 0;
  if (a.length < 2 || b.length < 2) return 0;
  const grams = new Map<string, number>();
  for (let i = 0; i < a.length - 1; i++) grams.set(a.slice(i, i + 2), (grams.get(a.slice(i, i + 2)) ?? 0) + 1);
  let shared = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = grams.get(g) ?? 0;
    if (n > 0) {
      shared++;
      grams.set(g, n - 1);
    }
  }
  return (2 * shared) / (a.length + b.length - 2);
}

/** Share of words found (exactly or nearly) in the other list, averaged both ways. */
function wordOverlap(a: string[], b: string[]): number {
  if (a.length === 0 || b.length === 0) return 0;
  const near = (w: string, list: string[]) => list.some((x) => x === w || bigramSimilarity(w, x) >= 0.75);
  const ab = a.filter((w) => near(w, b)).length / a.length;
  const ba = b.filter((w) => near(w, a)).length / b.length;
  return (ab + ba) / 2;
}

/** How alike two site paths' sections (all but the last segment) are: shared leading sections, and shared words. */
function navigationSimilarity(brokenSections: string[], pageSections: string[]): number {
  if (brokenSections.length === 0 && pageSections.length === 0) return 1;
  let prefix = 0;
  while (prefix < brokenSections.length && prefix < pageSections.length && brokenSections[prefix] === pageSections[prefix]) prefix++;
  const byPrefix = prefix / Math.max(brokenSections.length, pageSections.length);
  return Math.max(byPrefix, wordOverlap(brokenSections.flatMap(words), pageSections.flatMap(words)));
}

/** Scores one page against a broken path. */
export function scorePage(brokenPath: string, page: IndexedPage): Candidate {
  const broken = segmentsOf(brokenPath.slice(0, 500));
  const target = segmentsOf(page.url);
  const brokenSlug = (broken.at(-1) ?? '').replace(/\.(html?|mdx?)$/, '');
  const slugWords = words(brokenSlug);
  const targetSlug = target.at(-1) ?? '';
  const slug = Math.max(bigramSimilarity(brokenSlug, targetSlug), wordOverlap(slugWords, words(targetSlug)));
  const title = wordOverlap(broken.flatMap(words), words(page.title));
  const navigation = navigationSimilarity(broken.slice(0, -1), target.slice(0, -1));
  const parts = { slug, title, navigation };
  const score = WEIGHTS.slug * slug + WEIGHTS.title * title + WEIGHTS.navigation * navigation;
  return {
    url: page.url,
    file: page.file,
    title: page.title,
    score: Math.round(score * 100) / 100,
    matchedBy: (Object.keys(parts) as (keyof typeof parts)[]).filter((k) => parts[k] >= 0.5),
  };
}

/** The pages most likely to replace `brokenPath`, best first (ties by site path), at most MAX_CANDIDATES. */
export function candidatesFor(brokenPath: string, pages: IndexedPage[]): Candidate[] {
  const scored: Candidate[] = [];
  for (const page of pages) {
    const c = scorePage(brokenPath, page);
    if (c.score >= MIN_SCORE) scored.push(c);
  }
  scored.sort((a, b) => b.score - a.score || (a.url < b.url ? -1 : a.url > b.url ? 1 : 0));
  return scored.slice(0, MAX_CANDIDATES);
}
