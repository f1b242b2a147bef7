// Link targets as paths: splitting off anchors and queries, and joining relative paths without ever
// leaving the repository (a `..` past the root is reported, not followed).
import path from 'node:path';
import { hostNameOf } from '../../util/host-name.ts';

export interface SplitHref {
  /** The path part, percent-decoded ('' for an anchor on the same page). */
  path: string;
  anchor: string | null;
}

/** null for links that leave the site (a scheme such as https: or mailto:, or `//host`). */
export function splitHref(raw: string): SplitHref | null {
  let href = raw.trim();
  if (href.startsWith('<') && href.endsWith('>')) href = href.slice(1, -1).trim();
  if (/^[a-z][a-z0-9+.-]*:/i.test(href) || href.startsWith('//')) return null;
  let anchor: string | null = null;
  const hash = href.indexOf('#');
  if (hash !== -1) {
    anchor = decode(href.slice(hash + 1));
    href = href.slice(0, hash);
  }
  const q = href.indexOf('?');
  if (q !== -1) href = href.slice(0, q);
  return { path: decode(href), anchor: anchor === '' ? null : anchor };
}

/** Where a redirect leads when it leaves the site: another host (null when no host can be read), or another scheme. */
export type OffSite = { kind: 'host'; host: string | null } | { kind: 'scheme'; scheme: string };

/**
 * Where a redirect's destination takes a browser when it is not a path of this site: another host (an
 * absolute URL, `//host/…`, or `/\host`, which browsers read as `//host`) or another scheme
 * (`javascript:`, `data:`…); null for a path of this site. Read as a browser reads a Location: tabs and
 * line breaks dropped, C0 controls and spaces trimmed, backslashes taken for slashes.
 */
export function offSiteTarget(destination: string): OffSite | null {
  const d = destination
    .replace(/[\t\n\r]/g, '')
    .replace(/^[\u0000-\u0020]+|[\u0000-\u0020]+$/g, '')
    .replace(/\\/g, '/');
  if (d.startsWith('//')) return { kind: 'host', host: hostNameOf(`https:${d}`) };
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(d);
  if (!scheme) return null;
  const name = scheme[1].toLowerCase();
  return name === 'http' || name === 'https' ? { kind: 'host', host: hostNameOf(d) } : { kind: 'scheme', scheme: name };
}

function decode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}

/** `rel` joined to the folder `dir` (both relative to the repository root); null when it leaves the root. */
export function joinPath(dir: string, rel: string): string | null {
  const parts = dir === '' || dir === '.' ? [] : dir.split('/');
  for (const seg of rel.split('/')) {
    if (seg === '' || seg === '.') continue;
    if (seg === '..') {
      if (parts.length === 0) return null;
      parts.pop();
    } else parts.push(seg);
  }
  return parts.join('/');
}

export function dirOf(file: string): string {
  const d = path.posix.dirname(file);
  return d === '.' ? '' : d;
}

/** `child` is `dir` or inside it ('' is the root). */
export function within(dir: string, child: string): boolean {
  return dir === '' || child === dir || child.startsWith(dir + '/');
}

/** `file` relative to `dir` (which contains it). */
export function relativeTo(dir: string, file: string): string {
  return dir === '' ? file : file.slice(dir.length + 1);
}

export function stripExt(file: string): string {
  return file.replace(/\.(mdx|md|markdown)$/i, '');
}

const ASSET_EXT = /\.(png|jpe?g|gif|svg|webp|avif|ico|bmp|pdf|zip|gz|tgz|tar|mp4|webm|mov|mp3|wav|ogg|json|ya?ml|txt|csv|xml|js|css|woff2?|ttf|otf)$/i;

/** Looks like a file other than a page (an image, a download, a data file). */
export function isAssetPath(p: string): boolean {
  return ASSET_EXT.test(p);
}

export function isPagePath(p: string): boolean {
  return /\.(mdx|md)$/i.test(p);
}
