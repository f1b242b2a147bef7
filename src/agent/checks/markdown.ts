// Reads one Markdown/MDX page for the checks: its links and images (Markdown, reference definitions,
// JSX attributes, raw HTML), its headings and other ids, and its front matter. Parsed with the MDX
// parser the validation step uses (syntax tree only: nothing is compiled or run).
import { createProcessor } from '@mdx-js/mdx';
import { parse as parseYaml } from 'yaml';
import type { HeadingInfo } from './slugs.ts';

/** Links read from one page at most; the report says when a page had more. */
export const MAX_LINKS_PER_PAGE = 2000;
/** Longest link target considered; longer ones are reported as they are, never resolved. */
const MAX_HREF = 2000;

export interface PageLink {
  href: string;
  line: number | null;
  /** `image`: must be an existing file (images, videos, downloads); `link`: a page or a file. */
  kind: 'link' | 'image';
}

export interface ParsedPage {
  links: PageLink[];
  headings: HeadingInfo[];
  /** ids from HTML/JSX `id` and `<a name>` attributes. */
  ids: string[];
  frontMatter: Record<string, unknown>;
  /** True when the page had more than MAX_LINKS_PER_PAGE links. */
  truncated: boolean;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;
// Bounded repetitions: raw HTML comes from the page (the model may write it), so no pattern may
// backtrack over the whole text.
const HTML_ATTR = /<(a|img|source|video|audio|iframe|link|embed)\b([^>]{0,2000})>/gi;
const HTML_LINK_ATTR = /\b(href|src)\s{0,20}=\s{0,20}(?:"([^"]{0,2000})"|'([^']{0,2000})')/gi;
const HTML_ID = /\b(?:id|name)\s{0,20}=\s{0,20}(?:"([^"]{0,200})"|'([^']{0,200})')/gi;
/** Raw HTML read per node at most. */
const MAX_HTML = 100_000;

interface Node {
  type: string;
  url?: string;
  value?: string;
  name?: string | null;
  depth?: number;
  children?: Node[];
  attributes?: { type: string; name?: string; value?: unknown }[];
  position?: { start: { line: number } };
}

const processors = {
  mdx: createProcessor({ format: 'mdx' }),
  md: createProcessor({ format: 'md' }),
};

function textOf(node: Node): string {
  if (node.type === 'text' || node.type === 'inlineCode') return node.value ?? '';
  return (node.children ?? []).map(textOf).join('');
}

function lineOf(node: Node, offset: number): number | null {
  const l = node.position?.start.line;
  return typeof l === 'number' ? l + offset : null;
}

/**
 * `## Title {#id}` (Docusaurus, MkDocs attr_list) and `## Title {: #id .class }` (attr_list): the
 * heading without the braces, and the id. Scans the line once (no backtracking on hostile input).
 */
export function explicitHeadingId(line: string): { heading: string; id: string } | null {
  const t = line.trimEnd();
  if (!t.endsWith('}') || !/^ {0,3}#{1,6}\s/.test(t)) return null;
  const open = t.lastIndexOf('{');
  if (open === -1) return null;
  const attrs = t.slice(open + 1, -1);
  if (attrs.length > 200) return null;
  const id = /(?:^|[\s:])#([\w\-:.]+)/.exec(attrs)?.[1];
  return id ? { heading: t.slice(0, open).trimEnd(), id } : null;
}

/** Parses a page; `format` is how the framework reads it (`md` for MkDocs and plain Markdown). */
export function parsePage(text: string, format: 'mdx' | 'md'): ParsedPage {
  const { frontMatter, body, offset } = splitFrontMatter(text);
  const { markdown, explicitIds } = takeOutHeadingIds(body);
  const tree = parseTree(markdown, format);
  if (!tree) return { links: [], headings: [], ids: [], frontMatter, truncated: false };
  const found = new PageCollector(offset, explicitIds);
  const stack: Node[] = [tree];
  while (stack.length > 0) {
    const node = stack.pop()!;
    found.visit(node);
    // Headings are collected in document order: children pushed in reverse.
    if (node.children) for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]);
  }
  return { links: found.links, headings: found.headings, ids: found.ids, frontMatter, truncated: found.truncated };
}

/** The front matter's data, the page after it, and how many lines it took (for link line numbers). */
function splitFrontMatter(text: string): { frontMatter: Record<string, unknown>; body: string; offset: number } {
  const fm = FRONT_MATTER.exec(text);
  if (!fm) return { frontMatter: {}, body: text, offset: 0 };
  let frontMatter: Record<string, unknown> = {};
  try {
    const data = parseYaml(fm[1], { logLevel: 'silent' }) as unknown;
    if (data && typeof data === 'object' && !Array.isArray(data)) frontMatter = data as Record<string, unknown>;
  } catch {
    // front matter errors are the validation step's business
  }
  return { frontMatter, body: text.slice(fm[0].length), offset: fm[0].split('\n').length - 1 };
}

/**
 * Explicit heading ids are taken out before parsing: `{#id}` is not valid MDX, and the text without
 * it is what a generated slug would be made of. The ids come back by line number.
 */
function takeOutHeadingIds(body: string): { markdown: string; explicitIds: Map<number, string> } {
  const explicitIds = new Map<number, string>();
  const lines = body.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const cut = explicitHeadingId(lines[i]);
    if (cut) {
      explicitIds.set(i + 1, cut.id);
      lines[i] = cut.heading;
    }
  }
  return { markdown: lines.join('\n'), explicitIds };
}

/** The page's syntax tree; null when it parses neither as its format nor as CommonMark. */
function parseTree(markdown: string, format: 'mdx' | 'md'): Node | null {
  try {
    return processors[format].parse(markdown) as unknown as Node;
  } catch {
    try {
      // Not valid MDX (e.g. a page from before MDX 2): read it as CommonMark for its links.
      return processors.md.parse(markdown) as unknown as Node;
    } catch {
      return null;
    }
  }
}

/** The links, headings and ids of one page, gathered node by node. */
class PageCollector {
  readonly links: PageLink[] = [];
  readonly headings: HeadingInfo[] = [];
  readonly ids: string[] = [];
  truncated = false;
  readonly #offset: number;
  readonly #explicitIds: Map<number, string>;

  /** `offset`: lines of front matter before the parsed text; `explicitIds`: heading ids by line. */
  constructor(offset: number, explicitIds: Map<number, string>) {
    this.#offset = offset;
    this.#explicitIds = explicitIds;
  }

  visit(node: Node): void {
    switch (node.type) {
      case 'link':
      case 'definition':
        this.#add(node.url, 'link', node);
        break;
      case 'image':
        this.#add(node.url, 'image', node);
        break;
      case 'heading': {
        const line = node.position?.start.line ?? -1;
        this.headings.push({ text: textOf(node).trim(), explicitId: this.#explicitIds.get(line) ?? null });
        break;
      }
      case 'html':
        this.#fromHtml(node.value ?? '', node);
        break;
      case 'mdxJsxFlowElement':
      case 'mdxJsxTextElement':
        this.#fromJsx(node);
        break;
    }
  }

  #add(href: unknown, kind: PageLink['kind'], node: Node): void {
    if (typeof href !== 'string') return;
    const h = href.trim();
    if (h === '') return;
    if (this.links.length >= MAX_LINKS_PER_PAGE) {
      this.truncated = true;
      return;
    }
    this.links.push({ href: h.length > MAX_HREF ? h.slice(0, MAX_HREF) : h, line: lineOf(node, this.#offset), kind });
  }

  #fromHtml(raw: string, node: Node): void {
    const html = raw.length > MAX_HTML ? raw.slice(0, MAX_HTML) : raw;
    for (const m of html.matchAll(HTML_ATTR)) {
      const tag = m[1].toLowerCase();
      const attrs = m[2];
      for (const a of attrs.matchAll(HTML_LINK_ATTR)) {
        this.#add(a[2] ?? a[3], tag === 'a' || tag === 'link' ? 'link' : 'image', node);
      }
    }
    for (const m of html.matchAll(HTML_ID)) this.ids.push(m[1] ?? m[2]);
  }

  #fromJsx(node: Node): void {
    const name = node.name ?? '';
    for (const attr of node.attributes ?? []) {
      if (attr.type !== 'mdxJsxAttribute' || typeof attr.value !== 'string') continue;
      if (attr.name === 'href' || attr.name === 'to') this.#add(attr.value, 'link', node);
      else if (attr.name === 'src') this.#add(attr.value, /^(a|link)$/i.test(name) ? 'link' : 'image', node);
      else if (attr.name === 'id' || (attr.name === 'name' && name === 'a')) this.ids.push(attr.value);
    }
  }
}
