// Human vs AI classification (docs/analytics.md, "Classification"): the curated agent list first (AI answers, then search
// index, then training crawlers), then `isbot` for every other bot, else human. A Markdown view by a
// human-looking client counts as AI.
import { readFileSync } from 'node:fs';
import { parseSourceRules, useExtraSources } from './referrer-sources.ts';
import { AGENT_LIST } from './agent-list.ts';
import { isbot } from 'isbot';
import { Memo } from '../util/memo.ts';
import type { TrafficClass } from './traffic-class.ts';

export type AgentCategory = 'ai_answer' | 'search' | 'training';

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
  (AGENT_LIST as { agents: AgentEntry[] }).agents,
);

type Compiled = AgentEntry & { re: RegExp };

function compile(list: readonly AgentEntry[]): Compiled[] {
  return CATEGORY_ORDER.flatMap((category) => list.filter((a) => a.category === category).map((a) => ({ ...a, re: new RegExp(a.pattern, 'i') })));
}

let COMPILED = compile(AGENTS);

/** Checks an operator's agent list ({agents: [...]}); throws an Error with one clear sentence. */
export function parseAgentList(json: unknown, where: string): AgentEntry[] {
  const list = (json as { agents?: unknown })?.agents;
  if (!Array.isArray(list)) throw new Error(`${where} must hold {"agents": [...]}.`);
  return list.map((raw, i) => {
    const a = raw as Partial<AgentEntry>;
    const at = `${where}: agents[${i}]`;
    for (const k of ['name', 'company', 'pattern', 'example'] as const) {
      if (typeof a?.[k] !== 'string' || a[k]!.length === 0 || a[k]!.length > 1024) throw new Error(`${at}.${k} must be a non-empty string of at most 1,024 characters.`);
    }
    if (!CATEGORY_ORDER.includes(a.category as AgentCategory)) throw new Error(`${at}.category must be one of ${CATEGORY_ORDER.join(', ')}.`);
    let re: RegExp;
    try {
      re = new RegExp(a.pattern!, 'i');
    } catch (err) {
      throw new Error(`${at}.pattern is not a valid regular expression: ${(err as Error).message}`);
    }
    if (!re.test(a.example!)) throw new Error(`${at}.pattern does not match its own example.`);
    return { name: a.name!, company: a.company!, category: a.category as AgentCategory, pattern: a.pattern!, example: a.example! };
  });
}

/** Reads an operator's agent list from a file (FOLIO_AGENTS_FILE); its `referrers`, if any, take effect at once. */
export function readAgentsFile(file: string): AgentEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new Error(`Cannot read FOLIO_AGENTS_FILE ${file}: ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}.`);
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    throw new Error(`FOLIO_AGENTS_FILE ${file} is not valid JSON.`);
  }
  const agents = parseAgentList(json, `FOLIO_AGENTS_FILE ${file}`);
  useExtraSources(parseSourceRules(json, `FOLIO_AGENTS_FILE ${file}`));
  return agents;
}

/**
 * Adds the operator's agents: within each category they are checked before the built-in ones, so an
 * entry can also reclassify a known user agent. Clears the classification cache.
 */
export function useExtraAgents(extra: readonly AgentEntry[]): void {
  COMPILED = compile([...extra, ...AGENTS]);
  uaCache.clear();
}

/** Each agent name's company in the list in force (the operator's first: a name's first entry wins). */
export function agentCompanies(): ReadonlyMap<string, string> {
  const companies = new Map<string, string>();
  for (const a of COMPILED) if (!companies.has(a.name)) companies.set(a.name, a.company);
  return companies;
}

export const MARKDOWN_AGENT = 'Markdown client';

/** Classifies a user agent alone (no Markdown rule). */
export function classifyUserAgent(userAgent: string): Classification {
  for (const a of COMPILED) if (a.re.test(userAgent)) return { class: CLASS_OF[a.category], agent: a.name };
  if (userAgent.trim() === '' || isbot(userAgent)) return { class: 'bot', agent: null };
  return { class: 'human', agent: null };
}

const uaCache = new Memo<string, Classification>(20_000);

/** classifyUserAgent with a bounded cache: user agents repeat a lot. */
export function classifyUserAgentCached(userAgent: string): Classification {
  let c = uaCache.get(userAgent);
  if (c === undefined) {
    c = classifyUserAgent(userAgent);
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
