// The reference for the referrers and AI-companies reports: generated views (referrers of every kind,
// the site's own host, whole-URL referrers, agents of every class) and the reports' answers from plain
// Sets, checked over whole-day and partial ranges (keys-first-seen.test.ts, the DuckDB upgrade test).
import { aiCompanies, type CompanyRow } from '../../src/analytics/reports/ai-companies.ts';
import { referrers } from '../../src/analytics/reports/referrers.ts';
import { expect } from 'vitest';
import { SOURCE, type AnalyticsEngine, type StoredEvent } from '../../src/analytics/engine.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { CLASS_CODE, type TrafficClass } from '../../src/analytics/traffic-class.ts';
import type { Range } from '../../src/analytics/dates.ts';
import { rng, utf8Compare } from '../analytics/helpers.ts';

export const DAY = 86_400_000;
export const START = Date.UTC(2025, 7, 4);
export const DAYS = 6;
export const P = 'prj_keys_first_seen';
export const OWN = ownHostsOf(['https://docs.example.com']);
/** Stored referrers: the host each counts under (null: none), its class and the company it credits. */
const REFERRERS: [string | null, string | null, string, string | null][] = [
  [null, null, 'other', null],
  [null, null, 'other', null],
  ['chatgpt.com', 'chatgpt.com', 'ai_assistant', 'OpenAI'],
  ['chat.openai.com', 'chat.openai.com', 'ai_assistant', 'OpenAI'],
  ['https://chatgpt.com/c/68a?x=1', 'chatgpt.com', 'ai_assistant', 'OpenAI'],
  ['www.perplexity.ai', 'www.perplexity.ai', 'ai_assistant', 'Perplexity'],
  ['claude.ai', 'claude.ai', 'ai_assistant', 'Anthropic'],
  ['www.google.com', 'www.google.com', 'search', null],
  ['duckduckgo.com', 'duckduckgo.com', 'search', null],
  ['news.ycombinator.com', 'news.ycombinator.com', 'social', null],
  ['blog.example.org', 'blog.example.org', 'other', null],
  ['docs.example.com', null, 'other', null],
  ['https://docs.example.com/guide', null, 'other', null],
];
const AGENTS_OF: Record<Exclude<TrafficClass, 'human'>, (string | null)[]> = {
  ai: ['ChatGPT-User', 'Claude-User', 'Perplexity-User', 'Codex', 'Claude Code', null],
  search: ['OAI-SearchBot', 'Googlebot', 'Claude-SearchBot'],
  training: ['GPTBot', 'ClaudeBot', 'CCBot'],
  bot: [null],
};
const PATHS = ['/a', '/b', '/c', '/docs/é'];
export const RULES = ClassificationRules.load();
const COMPANY = new Map(RULES.agents.map((a) => [a.name, a.company]));

export interface Ref {
  ts: number;
  path: string;
  visitor: bigint;
  cls: TrafficClass;
  agent: string | null;
  host: string | null;
  source: string;
  company: string | null;
}

/** Views on the days [firstDay, firstDay + days). */
export function generate(seed: number, n: number, firstDay: number, days: number): { events: StoredEvent[]; ref: Ref[] } {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: StoredEvent[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = START + firstDay * DAY + Math.floor(r() * days * DAY);
    const cls = pick(['human', 'human', 'human', 'ai', 'ai', 'search', 'training', 'bot'] as const);
    const [referrer, host, source] = pick(REFERRERS);
    const agent = cls === 'human' ? null : pick(AGENTS_OF[cls]);
    const company = cls === 'human' ? (REFERRERS.find((x) => x[1] === host && host !== null)?.[3] ?? null) : agent === null || cls === 'bot' ? null : (COMPANY.get(agent) ?? null);
    const visitor = BigInt(1 + Math.floor(r() * 30));
    const path = pick(PATHS);
    events.push({ projectId: P, ts, path, visitor, cls: CLASS_CODE[cls], agent, referrer, source: SOURCE.api, importKey: null, notFound: false, group: 0 });
    ref.push({ ts, path, visitor, cls, agent, host, source, company });
  }
  return { events, ref };
}

const inRange = (ref: Ref[], range: Range) => ref.filter((e) => (range.from === null || e.ts >= range.from) && (range.to === null || e.ts < range.to));

function expectedReferrers(all: Ref[], range: Range) {
  const ref = inRange(all, range).filter((e) => e.cls === 'human' || e.cls === 'ai');
  const counts = (list: Ref[]) => ({
    human: new Set(list.filter((e) => e.cls === 'human').map((e) => e.visitor)).size,
    ai: new Set(list.filter((e) => e.cls === 'ai').map((e) => e.visitor)).size,
    total: new Set(list.map((e) => e.visitor)).size,
  });
  const referred = ref.filter((e) => e.host !== null);
  const rows = [...new Set(referred.map((e) => e.host!))].map((host) => {
    const list = referred.filter((e) => e.host === host);
    return { host, source: list[0].source, ...counts(list) };
  });
  rows.sort((a, b) => b.total - a.total || utf8Compare(a.host, b.host));
  const classes = ['ai_assistant', 'search', 'social', 'other'].map((source) => ({ source, ...counts(referred.filter((e) => e.source === source)) }));
  // Every day with a visitor's view: its humans, self-referred or not, and those an AI answer sent.
  const aiShare = [...new Set(ref.map((e) => Math.floor(e.ts / DAY)))].sort((a, b) => a - b).map((day) => {
    const humans = ref.filter((e) => e.cls === 'human' && Math.floor(e.ts / DAY) === day);
    return { start: day * DAY, humans: new Set(humans.map((e) => e.visitor)).size, fromAiAssistant: new Set(humans.filter((e) => e.source === 'ai_assistant' && e.host !== null).map((e) => e.visitor)).size };
  });
  return { classes, rows, aiShare };
}

export function expectedCompanies(all: Ref[], range: Range, company?: string): CompanyRow[] {
  const credited = inRange(all, range).filter((e) => e.company !== null && e.cls !== 'bot');
  const scoped = company === undefined ? credited : credited.filter((e) => e.company === company);
  const keyOf = (e: Ref) => (company === undefined ? e.company! : e.path);
  const rows = [...new Set(scoped.map(keyOf))].map((key) => {
    const list = scoped.filter((e) => keyOf(e) === key);
    const of = (cls: TrafficClass) => list.filter((e) => e.cls === cls);
    return {
      company: company ?? key,
      path: company === undefined ? null : key,
      trainingViews: of('training').length,
      searchViews: of('search').length,
      crawlers: new Set(list.filter((e) => e.cls === 'search' || e.cls === 'training').map((e) => e.agent)).size,
      assistantVisitors: new Set(of('ai').map((e) => e.visitor)).size,
      assistantViews: of('ai').length,
      referredHumans: new Set(of('human').map((e) => e.visitor)).size,
    };
  });
  const taken = (x: CompanyRow) => x.trainingViews + x.searchViews + x.assistantViews;
  return rows.sort((a, b) => taken(b) - taken(a) || b.referredHumans - a.referredHumans || utf8Compare(a.company, b.company) || utf8Compare(a.path ?? '', b.path ?? ''));
}

/** Whole-day ranges (the first-seen layout, starting before, on and after a key's first day) and ranges with a bound inside a day. */
export const RANGES: Range[] = [
  { from: null, to: null },
  { from: START, to: START + DAYS * DAY },
  { from: START + DAY, to: START + 4 * DAY },
  { from: START + 2 * DAY, to: START + 3 * DAY },
  { from: START + 3 * DAY, to: null },
  { from: null, to: START + 2 * DAY },
  { from: START + DAY + 3_600_000, to: START + 3 * DAY + 7_200_000 },
  { from: START + 2 * DAY + 60_000, to: START + 2 * DAY + 600_000 },
];

export async function check(engine: AnalyticsEngine, ref: Ref[], when: string): Promise<void> {
  for (const range of RANGES) {
    const label = `${when}, range ${JSON.stringify(range)}`;
    const want = expectedReferrers(ref, range);
    const got = await engine.run(referrers, { projectId: P, range, limit: 100, offset: 0, ownHosts: OWN, rules: RULES });
    expect({ classes: got.classes, rows: got.rows, aiShare: got.aiShare }, label).toEqual(want);
    const page = await engine.run(referrers, { projectId: P, range, limit: 2, offset: 1, ownHosts: OWN, rules: RULES });
    expect(page.rows, label).toEqual(want.rows.slice(1, 3));
    expect(page.hasMore, label).toBe(want.rows.length > 3);
    expect((await engine.run(aiCompanies, { projectId: P, range, limit: 100, offset: 0, ownHosts: OWN, rules: RULES })).rows, label).toEqual(expectedCompanies(ref, range));
    const companies = await engine.run(aiCompanies, { projectId: P, range, limit: 2, offset: 1, ownHosts: OWN, rules: RULES });
    expect(companies.rows, label).toEqual(expectedCompanies(ref, range).slice(1, 3));
    for (const company of ['OpenAI', 'Anthropic', 'Perplexity', 'Common Crawl', 'Mistral']) {
      const perPath = await engine.run(aiCompanies, { projectId: P, range, limit: 100, offset: 0, ownHosts: OWN, rules: RULES, company });
      expect(perPath.rows, `${label}, ${company} per path`).toEqual(expectedCompanies(ref, range, company));
    }
  }
}
