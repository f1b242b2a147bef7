// What the framework site models share: finding pages, reading a configuration file, page candidates.
import path from 'node:path';
import { within } from '../paths.ts';
import type { Target } from '../site.ts';
import type { DocsTree } from '../tree.ts';

export function pagesUnder(tree: DocsTree, root: string, exts: RegExp): Set<string> {
  const out = new Set<string>();
  for (const f of tree.files) if (within(root, f) && exts.test(f)) out.add(f);
  return out;
}

export async function readText(tree: DocsTree, file: string | null): Promise<string | null> {
  if (!file) return null;
  return (await tree.readMany([file])).get(file) ?? null;
}

/** Files a link path may name: with each extension, or as a folder's index page. */
export function candidates(p: string, exts: string[], indexNames: string[]): string[] {
  const out: string[] = [];
  if (p !== '') out.push(...exts.map((e) => `${p}${e}`));
  for (const n of indexNames) out.push(...exts.map((e) => (p === '' ? `${n}${e}` : `${p}/${n}${e}`)));
  return out;
}

export function noRedirects() {
  return null;
}

/** A site without redirects: nothing to resolve, nothing to add. */
export const WITHOUT_REDIRECTS = {
  redirects: null,
  redirectFor: noRedirects,
  resolveRedirect: (): Target => ({ kind: 'skip' }),
  redirectEntry: () => null,
} as const;

export function keysOf(url: string): string[] {
  const last = url.split('/').filter(Boolean).pop() ?? url;
  return [...new Set([last, path.posix.basename(url)])].filter((k) => k.length >= 2);
}

/** A configuration object, or null when the value is not a plain object. */
export function asObject(parsed: unknown): Record<string, unknown> | null {
  return parsed && typeof parsed === 'object' && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : null;
}
