// Plain Markdown: relative links between files, GitHub heading anchors, no navigation.
import { dirOf, joinPath, splitHref, stripExt } from '../paths.ts';
import type { Site } from '../site.ts';
import type { DocsTree } from '../tree.ts';
import { keysOf, pagesUnder, WITHOUT_REDIRECTS } from './common.ts';

export function plainSite(tree: DocsTree): Site {
  const pages = pagesUnder(tree, '', /\.(mdx|md)$/i);
  const dirs = new Set<string>();
  for (const f of tree.files) for (let d = dirOf(f); d !== ''; d = dirOf(d)) dirs.add(d);
  return {
    framework: 'markdown',
    tree,
    configFile: null,
    staticDir: null,
    pages,
    slugStyle: 'github',
    nav: null,
    ...WITHOUT_REDIRECTS,
    format: (page) => (page.endsWith('.mdx') ? 'mdx' : 'md'),
    urlOf: () => null,
    needsNav: () => false,
    linkKeys: (page) => keysOf(stripExt(page)),
    resolve(from, link) {
      const h = splitHref(link.href);
      if (!h) return { kind: 'external' };
      if (h.path === '') return h.anchor ? { kind: 'self', anchor: h.anchor } : { kind: 'skip' };
      const f = joinPath(h.path.startsWith('/') ? '' : dirOf(from), h.path);
      if (f === null) return { kind: 'outside' };
      if (pages.has(f)) return { kind: 'page', page: f, anchor: h.anchor };
      if (tree.files.has(f) || dirs.has(f.replace(/\/+$/, '')) || f === '') return { kind: 'file', file: f };
      return { kind: 'missing', tried: [f] };
    },
  };
}
