// Human vs AI classification (docs/analytics.md, "Classification"): the curated agent list first (AI answers, then search
// index, then training crawlers), then `isbot` for every other bot, else human. A Markdown view by a
// human-looking client counts as AI. The lists in force — Folio's agents.json and the operator's
// FOLIO_AGENTS_FILE — are one value, ClassificationRules, built once at startup and passed to what
// classifies (the ingest pipeline) and to the reports that map agents and hosts.
import { readFileSync } from 'node:fs';
import { parseSourceRules, type SourceRule } from './referrer-sources.ts';
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

/** The lists in force, the operator's entries first: plain data, so a worker thread can be given them. */
export interface RuleLists {
  agents: readonly AgentEntry[];
  sources: readonly SourceRule[];
}

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

/** Folio's own lists (agents.json: its `agents` and its `referrers`). */
function builtInLists(): RuleLists {
  const json: unknown = JSON.parse(readFileSync(new URL('./agents.json', import.meta.url), 'utf8'));
  return { agents: (json as { agents: AgentEntry[] }).agents, sources: parseSourceRules(json, 'agents.json') };
}

/** The operator's lists from FOLIO_AGENTS_FILE (its `referrers` are optional). */
function readAgentsFile(file: string): RuleLists {
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
  return { agents: parseAgentList(json, `FOLIO_AGENTS_FILE ${file}`), sources: parseSourceRules(json, `FOLIO_AGENTS_FILE ${file}`) };
}

export const MARKDOWN_AGENT = 'Markdown client';

/** The agent and referring-source lists in force, compiled for classifying, with a cache of user agents. */
export class ClassificationRules implements RuleLists {
  readonly agents: readonly AgentEntry[];
  /** The referring-source rules (referrer-sources.ts). */
  readonly sources: readonly SourceRule[];
  /** Each agent name's company (the operator's first: a name's first entry wins). */
  readonly agentCompanies: ReadonlyMap<string, string>;
  readonly #compiled: (AgentEntry & { re: RegExp })[];
  /** User agents repeat a lot. */
  readonly #cache = new Memo<string, Classification>(20_000);

  constructor(lists: RuleLists) {
    this.agents = lists.agents;
    this.sources = lists.sources;
    // Within each category the operator's agents come first, so an entry can also reclassify a known user agent.
    this.#compiled = CATEGORY_ORDER.flatMap((category) => lists.agents.filter((a) => a.category === category).map((a) => ({ ...a, re: new RegExp(a.pattern, 'i') })));
    const companies = new Map<string, string>();
    for (const a of this.#compiled) if (!companies.has(a.name)) companies.set(a.name, a.company);
    this.agentCompanies = companies;
  }

  /** Folio's lists, with the operator's file (FOLIO_AGENTS_FILE) checked first; a bad file throws one clear sentence. */
  static load(agentsFile?: string | null): ClassificationRules {
    return agentsFile ? ClassificationRules.withExtra(readAgentsFile(agentsFile)) : new ClassificationRules(builtInLists());
  }

  /** Folio's lists with `extra` checked first (its entries as parseAgentList and parseSourceRules give them). */
  static withExtra(extra: Partial<RuleLists>): ClassificationRules {
    const builtIn = builtInLists();
    return new ClassificationRules({ agents: [...(extra.agents ?? []), ...builtIn.agents], sources: [...(extra.sources ?? []), ...builtIn.sources] });
  }

  /** Classifies a user agent alone (no Markdown rule). */
  classifyUserAgent(userAgent: string): Classification {
    let c = this.#cache.get(userAgent);
    if (c === undefined) {
      c = this.#uncached(userAgent);
      this.#cache.set(userAgent, c);
    }
    return c;
  }

  #uncached(userAgent: string): Classification {
    for (const a of this.#compiled) if (a.re.test(userAgent)) return { class: CLASS_OF[a.category], agent: a.name };
    if (userAgent.trim() === '' || isbot(userAgent)) return { class: 'bot', agent: null };
    return { class: 'human', agent: null };
  }

  /** The full rule: user agent first; a human-looking client reading Markdown is AI. */
  classify(userAgent: string, path: string, accept?: string | null): Classification {
    const c = this.classifyUserAgent(userAgent);
    if (c.class === 'human' && (isMarkdownPath(path) || prefersMarkdown(accept))) return { class: 'ai', agent: MARKDOWN_AGENT };
    return c;
  }
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
