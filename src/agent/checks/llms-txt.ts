// llms.txt (llmstxt.org): the Markdown index of a docs site that AI agents read first. Where a
// repository keeps one, it must follow the job's pages: a page the job adds is listed in it, and a
// page the job removes (or moves away) is no longer linked from it. Links are matched to pages by
// their site address: `https://docs.example.com/guides/auth.md`, `/guides/auth` and `guides/auth/`
// all name the page served at /guides/auth.
import type { Site } from './site.ts';
import { stripExt } from './paths.ts';
import type { DocsProblem } from './types.ts';

const NAME = 'llms.txt';
/** Markdown link targets: `[title](target)` or `[title](<target>)`. */
const LINK = /\]\(\s*<?([^)\s>]+)>?/g;

/** The repository's llms.txt: the one nearest the root (a site's static folder, the docs folder, the root). */
export function llmsTxtFile(files: ReadonlySet<string>): string | null {
  const found = [...files].filter((f) => f === NAME || f.endsWith(`/${NAME}`));
  return found.sort((a, b) => a.split('/').length - b.split('/').length || a.localeCompare(b))[0] ?? null;
}

/** A site address as one key: no origin, query, anchor, leading or trailing slash, extension or `/index`. */
export function addressKey(href: string): string {
  let p = href.trim();
  try {
    if (/^[a-z][a-z0-9+.-]*:\/\//i.test(p)) p = new URL(p).pathname;
  } catch {
    // not a URL: read as a path
  }
  p = p.split(/[?#]/)[0];
  try {
    p = decodeURIComponent(p);
  } catch {
    // keep it as written
  }
  return p
    .replace(/^\.?\/+/, '')
    .replace(/\/+$/, '')
    .replace(/\.(mdx?|html?|txt)$/i, '')
    .replace(/(^|\/)index$/i, '');
}

/** Where a page is served, as an address key (its path without extension where the framework has no URLs). */
function pageKey(site: Site, page: string): string {
  return addressKey(site.urlOf(page) ?? stripExt(page));
}

/** The address keys llms.txt links to. */
function linkedKeys(text: string): string[] {
  return [...text.matchAll(LINK)].slice(0, 50_000).map((m) => addressKey(m[1]));
}

/** A link names the page when its address is the page's, or ends with it (a site served under a prefix). */
const names = (link: string, page: string) => link === page || (page !== '' && link.endsWith(`/${page}`));

/**
 * Problems of the current llms.txt against the pages the job added and removed. `listable`: whether
 * an added page is one readers navigate to (not a snippet or partial).
 */
export function llmsTxtProblems(
  file: string,
  text: string,
  changes: { added: string[]; removed: string[] },
  cur: Site,
  base: Site,
  listable: (page: string) => boolean,
): DocsProblem[] {
  const links = linkedKeys(text);
  const problems: DocsProblem[] = [];
  for (const page of changes.added.filter(listable)) {
    const key = pageKey(cur, page);
    if (links.some((l) => names(l, key))) continue;
    problems.push({
      check: 'llms-txt',
      path: file,
      line: null,
      target: page,
      message: `${file} does not list the new page ${page}: add a line such as "- [Title](/${key}${key ? '.md' : 'index.md'}): what it covers" so AI agents find it.`,
    });
  }
  for (const page of changes.removed) {
    const key = pageKey(base, page);
    // A page moved to the same address (a renamed file with the same URL) is still there.
    if (changes.added.some((p) => pageKey(cur, p) === key)) continue;
    if (!links.some((l) => names(l, key))) continue;
    problems.push({
      check: 'llms-txt',
      path: file,
      line: null,
      target: page,
      message: `${file} still links to ${page}, which this job removed: remove the line or point it at the page that replaces it.`,
    });
  }
  return problems;
}
