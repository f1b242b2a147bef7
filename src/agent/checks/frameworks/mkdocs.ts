// MkDocs: pages are .md files under docs_dir linked by relative path; an explicit `nav` lists them.
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import type { DocsProfile } from '../../prompts.ts';
import type { PageLink } from '../markdown.ts';
import { dirOf, isPagePath, joinPath, relativeTo, splitHref, stripExt } from '../paths.ts';
import { redirectMatcher, type Navigation, type Redirect, type Site, type Target } from '../site.ts';
import type { DocsTree } from '../tree.ts';
import { asObject, candidates, keysOf, pagesUnder, readText, WITHOUT_REDIRECTS } from './common.ts';

/** What link resolution needs to know of the site. */
interface MkdocsResolver {
  docsDir: string;
  tree: DocsTree;
  pages: Set<string>;
  /** use_directory_urls: a/b.md is served at a/b/. */
  directoryUrls: boolean;
  /** The path of site_url ('/project' for https://example.org/project/), '' without one. */
  sitePrefix: string;
}

export async function mkdocsSite(profile: DocsProfile, tree: DocsTree): Promise<Site> {
  const docsDir = profile.docsRoot;
  const pages = pagesUnder(tree, docsDir, /\.(md|markdown)$/i);
  const config = parseConfig((await readText(tree, profile.configFile)) ?? '');
  const resolver: MkdocsResolver = {
    docsDir,
    tree,
    pages,
    directoryUrls: config.use_directory_urls !== false,
    sitePrefix: sitePrefixOf(config.site_url),
  };
  const nav = config.nav !== undefined && config.nav !== null ? navigationOf(config.nav, profile.configFile!, docsDir, pages) : null;

  return {
    framework: 'mkdocs',
    tree,
    configFile: profile.configFile,
    staticDir: null,
    pages,
    slugStyle: 'python-markdown',
    nav,
    ...redirectsOf(config, resolver),
    format: () => 'md',
    // Served by file: a/b.md at /a/b/ (directory URLs) or /a/b.html, a folder's index.md at /a/.
    urlOf: (page) => `/${stripExt(relativeTo(docsDir, page)).replace(/(^|\/)(index|README)$/i, '')}`,
    needsNav: () => true,
    linkKeys: (page) => keysOf(stripExt(relativeTo(docsDir, page))),
    resolve: (from, link) => resolveLink(resolver, from, link),
  };
}

function parseConfig(configText: string): Record<string, unknown> {
  try {
    return asObject(parseYaml(configText, { logLevel: 'silent', uniqueKeys: false }) as unknown) ?? {};
  } catch {
    // a configuration that does not parse is the validation step's business
    return {};
  }
}

/**
 * The redirects plugin's `redirect_maps` (`plugins: [{redirects: {redirect_maps: {old.md: new.md}}}]`):
 * both sides are paths under docs_dir, a destination may also be a URL. Moved pages need no entry
 * here (MkDocs serves pages by file, and the plugin is optional), so only the declared ones are checked.
 */
function redirectsOf(config: Record<string, unknown>, resolver: MkdocsResolver): Pick<Site, 'redirects' | 'redirectFor' | 'resolveRedirect' | 'redirectEntry'> {
  const plugins = Array.isArray(config.plugins) ? config.plugins : [];
  const options = plugins.map((p) => asObject(p)?.redirects).find((o) => o !== undefined);
  if (options === undefined) return WITHOUT_REDIRECTS;
  const maps = asObject(asObject(options)?.redirect_maps) ?? {};
  const redirects: Redirect[] = Object.entries(maps)
    .filter((e): e is [string, string] => typeof e[1] === 'string')
    .slice(0, 10_000)
    .map(([source, destination]) => ({ source, destination }));
  return {
    redirects,
    redirectFor: redirectMatcher(redirects),
    resolveRedirect: (destination) => resolveLink(resolver, joinPath(resolver.docsDir, 'index.md') ?? 'index.md', { href: destination, line: null, kind: 'link' }),
    redirectEntry: () => null,
  };
}

function sitePrefixOf(siteUrl: unknown): string {
  if (typeof siteUrl !== 'string') return '';
  try {
    return new URL(siteUrl).pathname.replace(/\/+$/, '');
  } catch {
    // not a URL
    return '';
  }
}

/** The pages `nav` lists (at any depth), matched to page files by their docs-relative path. */
function navigationOf(navConfig: unknown, configFile: string, docsDir: string, pages: Set<string>): Navigation {
  const raw: string[] = [];
  const walk = (v: unknown, depth: number) => {
    if (depth > 50 || raw.length > 50_000) return;
    if (typeof v === 'string') raw.push(v);
    else if (Array.isArray(v)) for (const x of v) walk(x, depth + 1);
    else if (v && typeof v === 'object') for (const x of Object.values(v)) walk(x, depth + 1);
  };
  walk(navConfig, 0);
  const entries = raw
    .filter((v) => !/^[a-z][a-z0-9+.-]*:/i.test(v) && !v.startsWith('/') && !v.includes('*') && v !== '...')
    .map((value) => {
      const p = joinPath(docsDir, value.trim());
      return { value, page: p !== null && pages.has(p) ? p : null };
    });
  const listed = new Set(entries.filter((e) => e.page).map((e) => e.page!));
  return {
    file: configFile,
    label: `${path.posix.basename(configFile)} nav`,
    entries,
    includes: (page) => listed.has(page),
    entryFor: (page) => relativeTo(docsDir, page),
  };
}

function resolveLink(site: MkdocsResolver, from: string, link: PageLink): Target {
  const h = splitHref(link.href);
  if (!h) return { kind: 'external' };
  if (h.path === '') return h.anchor ? { kind: 'self', anchor: h.anchor } : { kind: 'skip' };
  const { sitePrefix } = site;
  let p = h.path;
  let bases: string[];
  if (p.startsWith('/')) {
    if (sitePrefix && (p === sitePrefix || p.startsWith(sitePrefix + '/'))) p = p.slice(sitePrefix.length) || '/';
    bases = [site.docsDir];
  } else bases = [dirOf(from), urlDir(site, from)];
  const tried: string[] = [];
  for (const b of [...new Set(bases)]) {
    const f = joinPath(b, p);
    if (f === null) return { kind: 'outside' };
    const t = lookup(site, f, link.kind);
    if (t) return t.kind === 'page' ? { ...t, anchor: h.anchor } : t;
    tried.push(f);
  }
  return { kind: 'missing', tried };
}

/** The folder a page's URL is in, as docs-relative path: a/b.md is served at a/b/ with directory URLs. */
function urlDir({ docsDir, directoryUrls }: MkdocsResolver, page: string): string {
  const rel = stripExt(relativeTo(docsDir, page));
  if (/(^|\/)(index|readme)$/i.test(rel) || !directoryUrls) return dirOf(page);
  return joinPath(docsDir, rel) ?? dirOf(page);
}

/** The page or file a path names: exactly, or (for links) without its extension or as a folder's index page. */
function lookup({ tree, pages }: MkdocsResolver, p: string, kind: PageLink['kind']): Target | null {
  if (pages.has(p)) return { kind: 'page', page: p, anchor: null };
  if (tree.files.has(p)) return { kind: 'file', file: p };
  if (kind === 'image' || isPagePath(p)) return null;
  for (const c of candidates(p.replace(/\/+$/, ''), ['.md'], ['index', 'README'])) if (pages.has(c)) return { kind: 'page', page: c, anchor: null };
  return null;
}
