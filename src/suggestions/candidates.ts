// Which existing pages most likely replace a path that answered "not found": compared by slug (the
// last path segment), by title (the words of the whole path against the page's title) and by
// navigation (the sections the path sat in against the page's). The score of a page is
// 0.5 × slug + 0.3 × title + 0.2 × navigation similarity.
//
// The cost is bounded by design, whatever visitors send: a site is indexed once per version
// (PageIndex: its words, their character pairs, and which pages hold them), a path's words are capped
// (MAX_GROUP_WORDS per group, MAX_WORD_CHARS each, MAX_SLUG_CHARS of slug), only pages that share a
// word or a character pair with the path are scored (a page sharing neither scores at most 0.2 and is
// never offered), and a list's paths together may visit at most WORK_PER_LIST index entries (those past
// it get no candidates, and the list says how many). It runs off the event loop (candidate-scoring.ts).
// Within the caps the scores are exactly those of comparing every page with the path.

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

/** A page as the site index has it (site-index.ts IndexedPage). */
export interface ScoredPage {
  file: string;
  url: string;
  title: string;
}

/** Below this score a page is not offered. */
const MIN_SCORE = 0.3;
export const MAX_CANDIDATES = 3;

const WEIGHTS = { slug: 0.5, title: 0.3, navigation: 0.2 } as const;
/** Two words this alike (Dice coefficient of their character pairs) count as the same word. */
const NEAR = 0.75;

/** Characters of a path compared; segments of it. */
const MAX_PATH_CHARS = 500;
const MAX_SEGMENTS = 20;
/** Words compared per group (the path's sections, its slug; a page's title, slug, sections). */
export const MAX_GROUP_WORDS = 12;
/** Longer words are compared by their first MAX_WORD_CHARS characters. */
export const MAX_WORD_CHARS = 32;
/** Longer slugs are compared by their first MAX_SLUG_CHARS characters. */
export const MAX_SLUG_CHARS = 100;
/**
 * Index entries one list's paths may visit together: about a second of work on a slow machine, off
 * the event loop. 50 ordinary paths on a 3,000-page site whose pages share most of their words take
 * about a quarter of it (~100,000 each).
 */
export const WORK_PER_LIST = 20_000_000;
/** What scoring one page costs, in index entries. */
const PAGE_WORK = 32;

/** Lower-case words of a path or title; file extensions, `index` and version-like words dropped. */
export function words(text: string): string[] {
  return text
    .toLowerCase()
    .replace(/\.(html?|mdx?|php|aspx?)$/g, '')
    .split(/[^a-z0-9]+/)
    .filter((w) => w && w !== 'index' && !/^v?\d+$/.test(w));
}

const cappedWords = (list: string[]) => list.slice(0, MAX_GROUP_WORDS).map((w) => w.slice(0, MAX_WORD_CHARS));

function segmentsOf(sitePath: string): string[] {
  return sitePath.slice(0, MAX_PATH_CHARS).toLowerCase().split(/[/?#]/).filter(Boolean).slice(0, MAX_SEGMENTS);
}

/** Character pairs of a word with how often each occurs. */
function bigrams(text: string): Map<string, number> {
  const grams = new Map<string, number>();
  for (let i = 0; i < text.length - 1; i++) {
    const g = text.slice(i, i + 2);
    grams.set(g, (grams.get(g) ?? 0) + 1);
  }
  return grams;
}

/** Dice coefficient of character pairs from the count of pairs two texts share. */
function dice(a: string, b: string, shared: number): number {
  if (a === b) return a ? 1 : 0;
  if (a.length < 2 || b.length < 2) return 0;
  return (2 * shared) / (a.length + b.length - 2);
}

interface PageEntry {
  page: ScoredPage;
  slug: string;
  /** Word ids of the slug, the title and the sections (all but the last segment). */
  slugWords: number[];
  titleWords: number[];
  sections: string[];
  sectionWords: number[];
}

/** Appends `values` (an id, or an id and a count) to the list at `key`. */
function post<K>(index: Map<K, number[]>, key: K, ...values: number[]): void {
  const list = index.get(key);
  if (list) list.push(...values);
  else index.set(key, values);
}

/** A site's pages indexed for scoring: built once per site version and reused for every path. */
export class PageIndex {
  readonly entries: PageEntry[] = [];
  /** Every distinct word of the pages, by id. */
  readonly vocabulary: string[] = [];
  readonly #wordIds = new Map<string, number>();
  /** Character pair → ids of the words holding it, each with its count in the word (pairs of ids and counts). */
  readonly #wordsByPair = new Map<string, number[]>();
  /** Word id → pages whose slug or title holds it. */
  readonly #pagesByWord = new Map<number, number[]>();
  /** Character pair → pages whose slug holds it, each with its count (pairs of page and count). */
  readonly #slugsByPair = new Map<string, number[]>();
  readonly #pagesBySlug = new Map<string, number[]>();

  constructor(pages: readonly ScoredPage[]) {
    for (const page of pages) {
      const target = segmentsOf(page.url);
      const slug = (target.at(-1) ?? '').slice(0, MAX_SLUG_CHARS);
      const sections = target.slice(0, -1);
      const entry: PageEntry = {
        page,
        slug,
        slugWords: cappedWords(words(slug)).map((w) => this.#wordId(w)),
        titleWords: cappedWords(words(page.title)).map((w) => this.#wordId(w)),
        sections,
        sectionWords: cappedWords(sections.flatMap(words)).map((w) => this.#wordId(w)),
      };
      const id = this.entries.push(entry) - 1;
      for (const w of new Set([...entry.slugWords, ...entry.titleWords])) post(this.#pagesByWord, w, id);
      for (const [g, n] of bigrams(slug)) post(this.#slugsByPair, g, id, n);
      post(this.#pagesBySlug, slug, id);
    }
  }

  #wordId(w: string): number {
    let id = this.#wordIds.get(w);
    if (id === undefined) {
      id = this.vocabulary.push(w) - 1;
      this.#wordIds.set(w, id);
      for (const [g, n] of bigrams(w)) post(this.#wordsByPair, g, id, n);
    }
    return id;
  }

  /** Ids of the site's words near `w` (equal, or with NEAR of their character pairs shared). */
  nearWords(w: string, budget: Budget): number[] {
    const out: number[] = [];
    const exact = this.#wordIds.get(w);
    if (exact !== undefined) out.push(exact);
    if (w.length < 2) return out;
    const shared = new Map<number, number>();
    for (const [g, n] of bigrams(w)) {
      const list = this.#wordsByPair.get(g);
      if (!list || !budget.spend(list.length / 2)) continue;
      for (let i = 0; i < list.length; i += 2) shared.set(list[i], (shared.get(list[i]) ?? 0) + Math.min(n, list[i + 1]));
    }
    for (const [id, s] of shared) if (id !== exact && dice(w, this.vocabulary[id], s) >= NEAR) out.push(id);
    return out;
  }

  /** Pages whose slug or title holds word `id`. */
  pagesWithWord(id: number): readonly number[] {
    return this.#pagesByWord.get(id) ?? [];
  }

  /** Pages whose slug shares character pairs with `slug`, with the count of pairs shared (Dice's numerator), and pages with exactly this slug. */
  slugPairs(slug: string, budget: Budget): Map<number, number> {
    const shared = new Map<number, number>();
    for (const id of this.#pagesBySlug.get(slug) ?? []) shared.set(id, 0);
    for (const [g, n] of bigrams(slug)) {
      const list = this.#slugsByPair.get(g);
      if (!list || !budget.spend(list.length / 2)) continue;
      for (let i = 0; i < list.length; i += 2) shared.set(list[i], (shared.get(list[i]) ?? 0) + Math.min(n, list[i + 1]));
    }
    return shared;
  }
}

/** The index entries a list may still visit. */
export class Budget {
  #left: number;
  constructor(entries: number) {
    this.#left = entries;
  }
  get spent(): boolean {
    return this.#left <= 0;
  }
  /** Takes `n` entries; false (taking none) when fewer are left. */
  spend(n: number): boolean {
    if (n > this.#left) {
      this.#left = 0;
      return false;
    }
    this.#left -= n;
    return true;
  }
}

/** Distinct words of a path that get a bit (a slug cut at MAX_SLUG_CHARS can add a few); the rest never match. */
const MAX_BITS = 31;

/** A broken path's words as bits: each distinct word one bit (-1: none left), and each group its words' bits in order. */
interface BrokenWords {
  /** Distinct words, by bit. */
  distinct: string[];
  /** Bits of the group's words, in order (repeats kept: they weigh as in the path). */
  slug: number[];
  all: number[];
  sections: number[];
}

function brokenWords(slugWords: string[], lastWords: string[], sectionWords: string[]): BrokenWords {
  const distinct: string[] = [];
  const bit = (w: string) => {
    const i = distinct.indexOf(w);
    return i !== -1 || distinct.length >= MAX_BITS ? i : distinct.push(w) - 1;
  };
  const sections = sectionWords.map(bit);
  return { distinct, slug: slugWords.map(bit), all: [...sections, ...lastWords.map(bit)], sections };
}

/**
 * Share of words found (exactly or nearly) in the other list, averaged both ways: `group` the path's
 * words as bits, `pageWords` a page's word ids, `near` each site word's bits of path words it is near.
 */
function overlap(group: number[], pageWords: number[], near: Map<number, number>): number {
  if (group.length === 0 || pageWords.length === 0) return 0;
  let groupMask = 0;
  for (const b of group) if (b >= 0) groupMask |= 1 << b;
  let found = 0;
  let pageFound = 0;
  for (const w of pageWords) {
    const m = near.get(w) ?? 0;
    found |= m;
    if (m & groupMask) pageFound++;
  }
  let groupFound = 0;
  for (const b of group) if (b >= 0 && found & (1 << b)) groupFound++;
  return (groupFound / group.length + pageFound / pageWords.length) / 2;
}

/** How alike two site paths' sections are: shared leading sections, and shared words. */
function navigationSimilarity(brokenSections: string[], entry: PageEntry, sectionBits: number[], near: Map<number, number>): number {
  const pageSections = entry.sections;
  if (brokenSections.length === 0 && pageSections.length === 0) return 1;
  let prefix = 0;
  while (prefix < brokenSections.length && prefix < pageSections.length && brokenSections[prefix] === pageSections[prefix]) prefix++;
  const byPrefix = prefix / Math.max(brokenSections.length, pageSections.length);
  return Math.max(byPrefix, overlap(sectionBits, entry.sectionWords, near));
}

/** Best first; ties by site path, then in the site's page order. */
const byScore = (a: { c: Candidate; p: number }, b: { c: Candidate; p: number }) => b.c.score - a.c.score || (a.c.url < b.c.url ? -1 : a.c.url > b.c.url ? 1 : a.p - b.p);

/** The pages most likely to replace `brokenPath`, best first (ties by site path), at most MAX_CANDIDATES. */
export function candidatesFor(brokenPath: string, index: PageIndex, budget = new Budget(WORK_PER_LIST)): Candidate[] {
  const broken = segmentsOf(brokenPath);
  const last = broken.at(-1) ?? '';
  const brokenSlug = last.replace(/\.(html?|mdx?)$/, '').slice(0, MAX_SLUG_CHARS);
  const sectionsOf = broken.slice(0, -1);
  const bw = brokenWords(cappedWords(words(brokenSlug)), cappedWords(words(last)), cappedWords(sectionsOf.flatMap(words)));
  // Each site word near a path word: which of the path's words (as bits) it is near.
  const near = new Map<number, number>();
  const touched = new Set<number>();
  for (const [b, w] of bw.distinct.entries()) {
    for (const id of index.nearWords(w, budget)) {
      near.set(id, (near.get(id) ?? 0) | (1 << b));
      const pages = index.pagesWithWord(id);
      if (budget.spend(pages.length)) for (const p of pages) touched.add(p);
    }
  }
  const slugShared = index.slugPairs(brokenSlug, budget);
  for (const p of slugShared.keys()) touched.add(p);
  const out: { c: Candidate; p: number }[] = [];
  if (!budget.spend(touched.size * PAGE_WORK)) return [];
  // Only pages sharing a word or a slug pair can score MIN_SCORE: the others score 0.2 at most.
  for (const p of touched) {
    const entry = index.entries[p];
    const slug = Math.max(dice(brokenSlug, entry.slug, slugShared.get(p) ?? 0), overlap(bw.slug, entry.slugWords, near));
    const title = overlap(bw.all, entry.titleWords, near);
    const navigation = navigationSimilarity(sectionsOf, entry, bw.sections, near);
    const score = WEIGHTS.slug * slug + WEIGHTS.title * title + WEIGHTS.navigation * navigation;
    if (score < MIN_SCORE) continue;
    const parts = { slug, title, navigation };
    const c: Candidate = {
      url: entry.page.url,
      file: entry.page.file,
      title: entry.page.title,
      score: Math.round(score * 100) / 100,
      matchedBy: (Object.keys(parts) as (keyof typeof parts)[]).filter((k) => parts[k] >= 0.5),
    };
    out.push({ c, p });
  }
  return out.sort(byScore).slice(0, MAX_CANDIDATES).map((x) => x.c);
}

/** Candidates of each path of a list, within one list's work: paths past it get none and are counted. */
export function candidatesOfList(paths: readonly string[], index: PageIndex): { byPath: Record<string, Candidate[]>; unscored: number } {
  const budget = new Budget(WORK_PER_LIST);
  const byPath: Record<string, Candidate[]> = Object.create(null);
  let unscored = 0;
  for (const path of paths) {
    const found = budget.spent ? [] : candidatesFor(path, index, budget);
    // A path the budget ran out on was compared with part of the site only: it offers nothing.
    if (budget.spent) unscored++;
    else byPath[path] = found;
  }
  return { byPath, unscored };
}
