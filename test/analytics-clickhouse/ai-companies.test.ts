// What each AI company takes and gives back, on DuckDB, on ClickHouse 18.16 (the server of
// FOLIO_TEST_CLICKHOUSE_URL) and on ClickHouse 26.x (chdb, always), against plain Sets over the
// written events: crawls and crawler agents, assistants' visitors and views, humans sent by the
// assistants' answers (stored hosts and, as older rows kept them, whole URLs), per company and per path.
import { aiCompanies, type CompanyRow } from '../../src/analytics/reports/ai-companies.ts';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { ClassificationRules, MARKDOWN_AGENT } from '../../src/analytics/classify.ts';
import { ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { CLASS_CODE, type TrafficClass } from '../../src/analytics/traffic-class.ts';
import type { Range } from '../../src/analytics/dates.ts';
import { rng, utf8Compare } from '../analytics/helpers.ts';
import { freshName } from './helpers.ts';
import { threeEngines } from './engines.ts';

vi.setConfig({ testTimeout: 120_000, hookTimeout: 120_000 });

const DAY = 86_400_000;
const START = Date.UTC(2025, 6, 1);
const P = 'prj_ai_companies';
/** The site's own host: a view it referred credits no one, even were it an assistant's host. */
const OWN = ownHostsOf(['https://docs.example.com']);
/** Stored referrers of human views, and the company each must credit (null: none). */
const REFERRERS: [string | null, string | null][] = [
  [null, null],
  ['chatgpt.com', 'OpenAI'],
  ['https://chatgpt.com/c/68a?x=1', 'OpenAI'],
  ['www.perplexity.ai', 'Perplexity'],
  ['claude.ai', 'Anthropic'],
  ['gemini.google.com', 'Google'],
  ['chat.deepseek.com', 'DeepSeek'],
  ['www.google.com', null],
  ['evilchatgpt.com', null],
  ['docs.example.com', null],
];
const AGENTS_OF: Record<Exclude<TrafficClass, 'human'>, (string | null)[]> = {
  ai: ['ChatGPT-User', 'Claude-User', 'Perplexity-User', 'Codex', 'Claude Code', MARKDOWN_AGENT],
  search: ['OAI-SearchBot', 'Googlebot', 'Claude-SearchBot', 'Bingbot'],
  training: ['GPTBot', 'ClaudeBot', 'Bytespider', 'CCBot'],
  bot: [null],
};
const PATHS = ['/a', '/b', '/c', '/docs/é', '/docs/z', '/Z'];
const RULES = ClassificationRules.load();
const COMPANY = new Map(RULES.agents.map((a) => [a.name, a.company]));

interface Ref {
  ts: number;
  path: string;
  visitor: bigint;
  cls: TrafficClass;
  agent: string | null;
  company: string | null;
}

function generate(seed: number, n: number): { events: StoredEvent[]; ref: Ref[] } {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: StoredEvent[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = START + Math.floor(r() * 5 * DAY);
    const cls = pick(['human', 'human', 'ai', 'search', 'training', 'bot'] as const);
    const [referrer, referred] = pick(REFERRERS);
    const agent = cls === 'human' ? null : pick(AGENTS_OF[cls]);
    const company = cls === 'human' ? referred : cls === 'bot' || agent === null ? null : (COMPANY.get(agent) ?? null);
    const visitor = BigInt(1 + Math.floor(r() * 40));
    const p = pick(PATHS);
    events.push({ projectId: P, ts, path: p, visitor, cls: CLASS_CODE[cls], agent, referrer, source: SOURCE.api, importKey: null, notFound: false, group: 0 });
    ref.push({ ts, path: p, visitor, cls, agent, company });
  }
  return { events, ref };
}

/** The report's rows from plain Sets: per company, or per path of `company`. */
function expected(ref: Ref[], range: Range, company?: string): CompanyRow[] {
  const inRange = ref.filter((e) => e.company !== null && (range.from === null || e.ts >= range.from) && (range.to === null || e.ts < range.to));
  const scoped = company === undefined ? inRange : inRange.filter((e) => e.company === company);
  const keyOf = (e: Ref) => (company === undefined ? e.company! : e.path);
  const rows = [...new Set(scoped.map(keyOf))].map((key) => {
    const list = scoped.filter((e) => keyOf(e) === key);
    const of = (cls: TrafficClass) => list.filter((e) => e.cls === cls);
    const crawls = list.filter((e) => e.cls === 'search' || e.cls === 'training');
    return {
      company: company ?? key,
      path: company === undefined ? null : key,
      trainingViews: of('training').length,
      searchViews: of('search').length,
      crawlers: new Set(crawls.map((e) => e.agent)).size,
      assistantVisitors: new Set(of('ai').map((e) => e.visitor)).size,
      assistantViews: of('ai').length,
      referredHumans: new Set(of('human').map((e) => e.visitor)).size,
    };
  });
  const taken = (x: CompanyRow) => x.trainingViews + x.searchViews + x.assistantViews;
  return rows.sort((a, b) => taken(b) - taken(a) || b.referredHumans - a.referredHumans || utf8Compare(a.company, b.company) || utf8Compare(a.path ?? '', b.path ?? ''));
}

const { backends: BACKENDS, cleanup } = threeEngines('folio-ai-companies-');
afterAll(cleanup);

describe.each(BACKENDS)('$name: what each AI company takes and gives back', ({ skip, open, drop }) => {
  it.skipIf(skip)('counts every company, and one company per path, exactly as plain Sets, page by page and within a range', async () => {
    const store = freshName('folio_ai_co');
    const engine = await open(store);
    try {
      const data = generate(17, 2000);
      for (let s = 0; s < data.events.length; s += 400) await engine.write(data.events.slice(s, s + 400));
      await engine.compact();
      const run = (range: Range, limit: number, offset: number, company?: string) =>
        engine.run(aiCompanies, { projectId: P, range, limit, offset, ownHosts: OWN, rules: RULES, ...(company === undefined ? {} : { company }) });
      const all: Range = { from: null, to: null };
      const want = expected(data.ref, all);
      expect(want.map((r) => r.company)).toEqual(expect.arrayContaining(['OpenAI', 'Anthropic', 'ByteDance', 'Common Crawl', 'DeepSeek', 'Microsoft']));
      expect(want.some((r) => r.referredHumans > 0 && r.trainingViews > 0)).toBe(true);
      expect((await run(all, 100, 0)).rows).toEqual(want);
      // Paged by three: the same rows in the same order.
      const paged: CompanyRow[] = [];
      for (let offset = 0; ; offset += 3) {
        const page = await run(all, 3, offset);
        paged.push(...page.rows);
        if (!page.hasMore) break;
      }
      expect(paged).toEqual(want);
      // A range whose bounds fall inside days.
      const part: Range = { from: START + DAY + 3_600_000, to: START + 3 * DAY + 7_200_000 };
      expect((await run(part, 100, 0)).rows).toEqual(expected(data.ref, part));
      for (const company of ['OpenAI', 'Anthropic', 'DeepSeek', 'Nobody']) {
        const perPath = await run(all, 100, 0, company);
        expect(perPath.company).toBe(company);
        expect(perPath.rows).toEqual(expected(data.ref, all, company));
      }
      const firstTwo = await run(all, 2, 0, 'OpenAI');
      expect(firstTwo.rows).toEqual(expected(data.ref, all, 'OpenAI').slice(0, 2));
      expect(firstTwo.hasMore).toBe(true);
      // The wire: crawls per referred human, null when the company sent no one.
      const wire = aiCompanies.wire(await run(all, 100, 0));
      for (const row of wire.companies) {
        expect(row.crawlsPerReferredHuman).toBe(row.referredHumans === 0 ? null : (row.trainingViews + row.searchViews) / row.referredHumans);
      }
      expect(wire.companies.find((r) => r.company === 'Common Crawl')?.crawlsPerReferredHuman).toBeNull();
      // Another project, or none stored: no rows.
      expect((await engine.run(aiCompanies, { projectId: 'prj_none', range: all, limit: 10, offset: 0, rules: RULES })).rows).toEqual([]);
    } finally {
      await engine.close();
      await drop(store);
    }
  });

  it.skipIf(skip)('counts a company per path alike when more of its hosts referred readers than the query lists (made-up subdomains)', async () => {
    const store = freshName('folio_ai_co_hosts');
    const engine = await open(store);
    try {
      const data = generate(18, 300);
      // 1,100 humans, each from a host of its own under chatgpt.com (OpenAI's), on the paths in turn.
      for (let i = 0; i < 1100; i++) {
        const e = { ts: START + (i % 5) * DAY + i, path: PATHS[i % PATHS.length], visitor: BigInt(1000 + (i % 700)), cls: 'human' as const, agent: null, company: 'OpenAI' };
        data.events.push({ projectId: P, ts: e.ts, path: e.path, visitor: e.visitor, cls: CLASS_CODE.human, agent: null, referrer: `s${i}.chatgpt.com`, source: SOURCE.api, importKey: null, notFound: false, group: 0 });
        data.ref.push(e);
      }
      await engine.write(data.events);
      await engine.compact();
      const all: Range = { from: null, to: null };
      const got = await engine.run(aiCompanies, { projectId: P, range: all, limit: 100, offset: 0, ownHosts: OWN, rules: RULES, company: 'OpenAI' });
      expect(got.rows).toEqual(expected(data.ref, all, 'OpenAI'));
      expect(got.rows.reduce((n, r) => n + r.referredHumans, 0)).toBeGreaterThan(700);
    } finally {
      await engine.close();
      await drop(store);
    }
  });
});
