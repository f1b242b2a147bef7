// Mintlify (docs.json / mint.json): pages are .mdx/.md files addressed without extension from the
// folder of the configuration; `navigation` lists them in `pages` arrays; `redirects` map old paths.
import path from 'node:path';
import type { DocsProfile } from '../../prompts.ts';
import type { PageLink } from '../markdown.ts';
import { dirOf, joinPath, relativeTo, splitHref, stripExt, within } from '../paths.ts';
import { normalizeSitePath, redirectMatcher, type Navigation, type Redirect, type Site, type Target } from '../site.ts';
import type { DocsTree } from '../tree.ts';
import { asObject, candidates, keysOf, pagesUnder, readText } from './common.ts';

const NOT_PAGES = /^(readme|changelog|contributing|license|code_of_conduct|security)$/i;

export async function mintlifySite(profile: DocsProfile, tree: DocsTree): Promise<Site> {
  const root = profile.docsRoot;
  const pages = pagesUnder(tree, root, /\.(mdx|md)$/i);
  const config = parseConfig(await readText(tree, profile.configFile));
  const urlKey = (page: string) => urlKeyOf(root, page);
  const redirects = redirectsOf(config);
  const redirectFor = redirectMatcher(redirects);
  const nav = config && config.navigation !== undefined ? navigationOf(config.navigation, profile.configFile!, pages, urlKey) : null;
  const resolver: MintlifyResolver = { root, tree, pages, urlKey, redirectFor };

  return {
    framework: 'mintlify',
    tree,
    configFile: profile.configFile,
    staticDir: null,
    pages,
    slugStyle: 'mintlify',
    nav,
    redirects,
    format: () => 'mdx',
    urlOf: (page) => normalizeSitePath(urlKey(page)),
    redirectFor,
    // Destinations are site paths, resolved like a link from the configuration file.
    resolveRedirect: (destination) => resolveLink(resolver, profile.configFile ?? 'docs.json', { href: destination.startsWith('/') ? destination : `/${destination}`, line: null, kind: 'link' }),
    redirectEntry: (oldUrl, newUrl) => `{"source": "${oldUrl}", "destination": "${newUrl}"} to "redirects" in ${profile.configFile ?? 'docs.json'}`,
    needsNav: (page) => {
      const rel = relativeTo(root, page);
      const base = path.posix.basename(stripExt(rel));
      return !rel.startsWith('snippets/') && !base.startsWith('_') && !NOT_PAGES.test(base);
    },
    linkKeys: (page) => keysOf(urlKey(page) || 'index'),
    resolve: (from, link) => resolveLink(resolver, from, link),
  };
}

function parseConfig(configText: string | null): Record<string, unknown> | null {
  try {
    return asObject(configText ? (JSON.parse(configText) as unknown) : null);
  } catch {
    // a configuration that does not parse is the validation step's business
    return null;
  }
}

/** Site path of a page, without the leading slash: 'guides/auth', '' for the home page. */
function urlKeyOf(root: string, page: string): string {
  const u = stripExt(relativeTo(root, page));
  return u === 'index' ? '' : u.replace(/\/index$/, '');
}

function redirectsOf(config: Record<string, unknown> | null): Redirect[] {
  if (!Array.isArray(config?.redirects)) return [];
  return (config.redirects as unknown[])
    .filter((r): r is Redirect => !!r && typeof r === 'object' && typeof (r as Redirect).source === 'string' && typeof (r as Redirect).destination === 'string')
    .map((r) => ({ source: r.source, destination: r.destination }));
}

/** The pages `navigation` lists, matched to page files by their site path. */
function navigationOf(navigation: unknown, configFile: string, pages: Set<string>, urlKey: (page: string) => string): Navigation {
  const byUrl = new Map<string, string>();
  for (const p of [...pages].sort()) if (!byUrl.has(urlKey(p))) byUrl.set(urlKey(p), p);
  const normEntry = (v: string) => stripExt(v.trim().replace(/^\/+/, '').replace(/\/+$/, '')).replace(/(^|\/)index$/, '');
  const raw: string[] = [];
  collectPages(navigation, false, raw);
  const entries = raw
    // OpenAPI operations ("GET /users"), files and URLs are not pages.
    .filter((v) => !/\s/.test(v.trim()) && !/^[a-z][a-z0-9+.-]*:/i.test(v) && !/\.(json|ya?ml)$/i.test(v))
    .map((value) => ({ value, page: byUrl.get(normEntry(value)) ?? null }));
  const listed = new Set(entries.map((e) => normEntry(e.value)));
  return {
    file: configFile,
    label: `${path.posix.basename(configFile)} "navigation"`,
    entries,
    includes: (page) => listed.has(urlKey(page)),
    entryFor: (page) => urlKey(page) || 'index',
  };
}

/** Strings in any `pages` array of a navigation object, however deeply nested (groups, tabs, anchors…). */
function collectPages(v: unknown, inPages: boolean, out: string[], depth = 0): void {
  if (depth > 50 || out.length > 50_000) return;
  if (typeof v === 'string') {
    if (inPages) out.push(v);
  } else if (Array.isArray(v)) {
    for (const x of v) collectPages(x, inPages, out, depth + 1);
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) collectPages(x, k === 'pages', out, depth + 1);
  }
}

/** What link resolution needs to know of the site. */
interface MintlifyResolver {
  root: string;
  tree: DocsTree;
  pages: Set<string>;
  urlKey: (page: string) => string;
  redirectFor: Site['redirectFor'];
}

function resolveLink({ root, tree, pages, urlKey, redirectFor }: MintlifyResolver, from: string, link: PageLink): Target {
  const h = splitHref(link.href);
  if (!h) return { kind: 'external' };
  if (h.path === '') return h.anchor ? { kind: 'self', anchor: h.anchor } : { kind: 'skip' };
  const absolute = h.path.startsWith('/');
  // Relative links: from the page's folder, or (as a browser would) from its URL's folder.
  const bases = absolute ? [root] : [dirOf(from), joinPath(root, dirOf(urlKey(from))) ?? root];
  const tried: string[] = [];
  for (const base of [...new Set(bases)]) {
    const p = joinPath(base, h.path);
    if (p === null) return { kind: 'outside' };
    if (link.kind === 'image') {
      if (tree.files.has(p)) return { kind: 'file', file: p };
      tried.push(p);
      continue;
    }
    const t = lookup(tree, pages, p);
    if (t) return t.kind === 'page' ? { ...t, anchor: h.anchor } : t;
    tried.push(p);
    if (within(root, p) && redirectFor('/' + relativeTo(root, p))) return { kind: 'skip' };
  }
  if (absolute && h.path.replace(/\/+$/, '') === '') return { kind: 'skip' };
  return { kind: 'missing', tried };
}

/** The page or file a path names: exactly, or without its extension, or as a folder's index page. */
function lookup(tree: DocsTree, pages: Set<string>, p: string): Target | null {
  if (pages.has(p)) return { kind: 'page', page: p, anchor: null };
  if (tree.files.has(p)) return { kind: 'file', file: p };
  for (const c of candidates(p, ['.mdx', '.md'], ['index'])) if (pages.has(c)) return { kind: 'page', page: c, anchor: null };
  return null;
}
