// Human vs AI classification (DESIGN.md): the curated agent list first (AI answers, then search
// index, then training crawlers), then `isbot` for every other bot, else human. A Markdown view by a
// human-looking client counts as AI.
import { readFileSync } from 'node:fs';
import { isbot } from 'isbot';

export type AgentCategory = 'ai_answer' | 'search' | 'training';
export type TrafficClass = 'human' | 'ai' | 'search' | 'training' | 'bot';

export interface AgentEntry {
  name: string;
  company: string;
  category: AgentCategory;
  pattern: string;
  example: string;
}

export interface Classification {
  class: TrafficClass;
  /** Agent name from the list; "Markdown client" for a human-looking client reading Markdown; null for humans and unnamed bots. */
  agent: string | null;
}

const CATEGORY_ORDER: readonly AgentCategory[] = ['ai_answer', 'search', 'training'];
const CLASS_OF: Record<AgentCategory, TrafficClass> = { ai_answer: 'ai', search: 'search', training: 'training' };

export const AGENTS: readonly AgentEntry[] = Object.freeze(
  (JSON.parse(readFileSync(new URL('./agents.json', import.meta.url), 'utf8')) as { agents: AgentEntry[] }).agents,
);

const COMPILED = CATEGORY_ORDER.flatMap((category) =>
  AGENTS.filter((a) => a.category === category).map((a) => ({ ...a, re: new RegExp(a.pattern, 'i') })),
);

export const MARKDOWN_AGENT = 'Markdown client';

/** Classifies a user agent alone (no Markdown rule). */
export function classifyUserAgent(userAgent: string): Classification {
  for (const a of COMPILED) if (a.re.test(userAgent)) return { class: CLASS_OF[a.category], agent: a.name };
  if (userAgent.trim() === '' || isbot(userAgent)) return { class: 'bot', agent: null };
  return { class: 'human', agent: null };
}

const uaCache = new Map<string, Classification>();
const UA_CACHE_MAX = 20_000;

/** classifyUserAgent with a bounded cache: user agents repeat a lot. */
export function classifyUserAgentCached(userAgent: string): Classification {
  let c = uaCache.get(userAgent);
  if (c === undefined) {
    c = classifyUserAgent(userAgent);
    if (uaCache.size >= UA_CACHE_MAX) uaCache.clear();
    uaCache.set(userAgent, c);
  }
  return c;
}

/** A path that asks for Markdown: `*.md`, `*.mdx`, `llms.txt`, `llms-full.txt`. */
export function isMarkdownPath(path: string): boolean {
  return /\.mdx?$/i.test(path) || /(^|\/)llms(-full)?\.txt$/i.test(path);
}

/** True when the Accept header ranks text/markdown above text/html (or lists it first at equal quality). */
export function prefersMarkdown(accept: string | undefined | null): boolean {
  if (!accept) return false;
  let md = { q: 0, i: Infinity };
  let html = { q: 0, i: Infinity };
  accept.split(',').forEach((part, i) => {
    const [type, ...params] = part.trim().toLowerCase().split(';');
    let q = 1;
    for (const p of params) {
      const m = /^\s*q\s*=\s*([0-9.]+)\s*$/.exec(p);
      if (m) q = Number(m[1]);
    }
    if (!Number.isFinite(q)) q = 0;
    const t = type.trim();
    if ((t === 'text/markdown' || t === 'text/x-markdown') && q > md.q) md = { q, i };
    if ((t === 'text/html' || t === 'application/xhtml+xml') && q > html.q) html = { q, i };
  });
  return md.q > 0 && (md.q > html.q || (md.q === html.q && md.i < html.i));
}

/** The full rule: user agent first; a human-looking client reading Markdown is AI. */
export function classify(userAgent: string, path: string, accept?: string | null): Classification {
  const c = classifyUserAgentCached(userAgent);
  if (c.class === 'human' && (isMarkdownPath(path) || prefersMarkdown(accept))) return { class: 'ai', agent: MARKDOWN_AGENT };
  return c;
}
