// Heading anchors as each docs framework makes them.
// - Docusaurus and plain Markdown (GitHub): github-slugger, the library Docusaurus itself uses;
//   duplicates get -1, -2…
// - MkDocs: Python-Markdown's `toc` slugify (NFKD, ASCII only, [^\w\s-] dropped, lower case,
//   runs of spaces and hyphens to one hyphen); duplicates get _1, _2…
// - Mintlify does not publish its rule (it keeps some punctuation, e.g. curly apostrophes): an anchor
//   matches a heading when both agree after dropping everything but letters and digits, besides the
//   exact GitHub slug.
import GithubSlugger from 'github-slugger';

export type SlugStyle = 'github' | 'python-markdown' | 'mintlify';

/** The anchors of one page: exact ids, and (Mintlify) the loose forms of its headings. */
export interface Anchors {
  exact: Set<string>;
  loose: Set<string> | null;
}

export function looseKey(text: string): string {
  return text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, '');
}

/** Python-Markdown's markdown.extensions.toc.slugify with the default separator. */
export function pythonMarkdownSlug(text: string): string {
  const ascii = text.normalize('NFKD').replace(/[^\x00-\x7f]/g, '');
  return ascii
    .replace(/[^\w\s-]/g, '')
    .trim()
    .toLowerCase()
    .replace(/[-\s]+/g, '-');
}

/** Python-Markdown's `unique`: foo, foo_1, foo_2… (an empty slug becomes _1). */
function uniquePython(id: string, used: Set<string>): string {
  let out = id;
  while (used.has(out) || out === '') {
    const m = /^(.*)_([0-9]+)$/.exec(out);
    out = m ? `${m[1]}_${Number(m[2]) + 1}` : `${out}_1`;
  }
  used.add(out);
  return out;
}

export interface HeadingInfo {
  text: string;
  /** An id given explicitly (`{#id}`), which replaces the generated one. */
  explicitId: string | null;
}

/** The anchors of a page with these headings (in order) and other ids (HTML/JSX `id`/`name`). */
export function anchorsFor(style: SlugStyle, headings: HeadingInfo[], otherIds: Iterable<string>): Anchors {
  const exact = new Set<string>(otherIds);
  const loose = style === 'mintlify' ? new Set<string>() : null;
  if (style === 'python-markdown') {
    const used = new Set<string>(exact);
    for (const h of headings) exact.add(h.explicitId ?? uniquePython(pythonMarkdownSlug(h.text), used));
  } else {
    const slugger = new GithubSlugger();
    for (const h of headings) {
      if (h.explicitId) exact.add(h.explicitId);
      else exact.add(slugger.slug(h.text));
      loose?.add(looseKey(h.text));
    }
  }
  return { exact, loose };
}

export function hasAnchor(anchors: Anchors, anchor: string): boolean {
  if (anchors.exact.has(anchor)) return true;
  if (anchors.loose) {
    const key = looseKey(anchor);
    return key !== '' && anchors.loose.has(key);
  }
  return false;
}
