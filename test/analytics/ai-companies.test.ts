// GET /v1/analytics/{projectId}/ai-companies end to end: page views sent with real user agents and
// referrers are classified, credited to companies and counted exactly (against plain Sets), per
// company and per path of one; read access, refusals with their codes, the typed client and
// `folio analytics ai-companies`. On DuckDB, and on ClickHouse in the scale leg.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { parseSourceRules } from '../../src/analytics/referrer-sources.ts';
import { FolioClient, type AiCompaniesPage } from '../../src/client/index.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli } from '../client/fixtures/run-cli.ts';
import { rng, utf8Compare } from './helpers.ts';

const DAY = 86_400_000;
const D0 = Date.UTC(2025, 7, 4);
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const agent = (name: string) => ClassificationRules.load().agents.find((a) => a.name === name)!;
/** Who reads: a user agent, its class, its agent name and company (null: credited by referrer, or no one). */
const READERS: [string, 'human' | 'ai' | 'search' | 'training' | 'bot', string | null, string | null][] = [
  [HUMAN_UA, 'human', null, null],
  [HUMAN_UA, 'human', null, null],
  ...(['ChatGPT-User', 'Claude-User', 'Perplexity-User'] as const).map((n) => [agent(n).example, 'ai', n, agent(n).company] as [string, 'ai', string, string]),
  ...(['OAI-SearchBot', 'Googlebot', 'Claude-SearchBot'] as const).map((n) => [agent(n).example, 'search', n, agent(n).company] as [string, 'search', string, string]),
  ...(['GPTBot', 'ClaudeBot', 'CCBot'] as const).map((n) => [agent(n).example, 'training', n, agent(n).company] as [string, 'training', string, string]),
  ['curl/8.5.0', 'bot', null, null],
];
/** Referrers as sent, and the company a human so referred credits. */
const REFERRERS: [string | undefined, string | null][] = [
  [undefined, null],
  ['https://chatgpt.com/c/1?model=x', 'OpenAI'],
  ['https://www.perplexity.ai/search/a', 'Perplexity'],
  ['https://claude.ai/chat/2', 'Anthropic'],
  ['https://chat.deepseek.com/a/b', 'DeepSeek'],
  ['https://www.google.com/search?q=folio', null],
];

interface Ref {
  ts: number;
  path: string;
  visitor: string;
  cls: string;
  agent: string | null;
  company: string | null;
}

function generate(seed: number, n: number) {
  const r = rng(seed);
  const pick = <T>(list: readonly T[]) => list[Math.floor(r() * list.length)];
  const events: Record<string, unknown>[] = [];
  const ref: Ref[] = [];
  for (let i = 0; i < n; i++) {
    const ts = D0 + Math.floor(r() * 3 * DAY);
    const [ua, cls, name, company] = pick(READERS);
    const [referrer, referred] = pick(REFERRERS);
    const path = pick(['/a', '/b', '/docs/c', '/guide.md']);
    const visitor = `v${Math.floor(r() * 30)}`;
    events.push({ timestamp: new Date(ts).toISOString(), path, userAgent: ua, visitorId: visitor, ...(referrer ? { referrer } : {}) });
    // A human-looking client reading Markdown is an AI reader of no company.
    if (cls === 'human' && path.endsWith('.md')) ref.push({ ts, path, visitor, cls: 'ai', agent: 'Markdown client', company: null });
    else ref.push({ ts, path, visitor, cls, agent: name, company: cls === 'human' ? referred : company });
  }
  return { events, ref };
}

function expected(ref: Ref[], company?: string) {
  const scoped = ref.filter((e) => e.company !== null && (company === undefined || e.company === company));
  const keyOf = (e: Ref) => (company === undefined ? e.company! : e.path);
  const rows = [...new Set(scoped.map(keyOf))].map((key) => {
    const list = scoped.filter((e) => keyOf(e) === key);
    const of = (cls: string) => list.filter((e) => e.cls === cls);
    const trainingViews = of('training').length;
    const searchViews = of('search').length;
    const referredHumans = new Set(of('human').map((e) => e.visitor)).size;
    return {
      company: company ?? key,
      path: company === undefined ? null : key,
      trainingViews,
      searchViews,
      crawlers: new Set([...of('training'), ...of('search')].map((e) => e.agent)).size,
      assistantVisitors: new Set(of('ai').map((e) => e.visitor)).size,
      assistantViews: of('ai').length,
      referredHumans,
      crawlsPerReferredHuman: referredHumans === 0 ? null : (trainingViews + searchViews) / referredHumans,
    };
  });
  const taken = (x: (typeof rows)[number]) => x.trainingViews + x.searchViews + x.assistantViews;
  return rows.sort((a, b) => taken(b) - taken(a) || b.referredHumans - a.referredHumans || utf8Compare(a.company, b.company) || utf8Compare(a.path ?? '', b.path ?? ''));
}

describe('ai-companies', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  const data = generate(23, 900);

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId);
    const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events: data.events } });
    expect(res.body.rejected).toEqual([]);
  });
  afterAll(async () => server?.close());

  it('counts what each company takes and sends back exactly, page by page', async () => {
    const want = expected(data.ref);
    expect(want.map((r) => r.company).sort()).toEqual(['Anthropic', 'Common Crawl', 'DeepSeek', 'Google', 'OpenAI', 'Perplexity']);
    const rows: unknown[] = [];
    let body: AiCompaniesPage | undefined;
    for (let offset = 0; !body || body.hasMore; offset += 2) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/ai-companies?limit=2&offset=${offset}`, { key });
      expect(res.status).toBe(200);
      body = res.body;
      expect(body!.company).toBeNull();
      rows.push(...body!.companies);
    }
    expect(rows).toEqual(want);
  });

  it('gives one company’s rows per path with ?company=', async () => {
    for (const company of ['OpenAI', 'Anthropic', 'DeepSeek']) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/ai-companies?company=${company}&limit=250`, { key });
      expect(res.body).toEqual({ company, companies: expected(data.ref, company), hasMore: false });
    }
    // A company of the list that took and sent nothing here: no rows.
    expect((await server.api('GET', `/v1/analytics/${projectId}/ai-companies?company=Cohere`, { key })).body.companies).toEqual([]);
  });

  it('needs a key of the project, and refuses bad parameters with a code', async () => {
    expect((await server.api('GET', `/v1/analytics/${projectId}/ai-companies`)).status).toBe(401);
    const other = await server.createProject({ name: 'Other' });
    const otherKey = await server.createKey(other);
    expect((await server.api('GET', `/v1/analytics/${projectId}/ai-companies`, { key: otherKey })).status).toBe(403);
    for (const [query, code] of [
      ['company=Nobody%20Inc', 'unknown_company'],
      ['company=', 'invalid_request'],
      [`company=${'x'.repeat(1025)}`, 'invalid_request'],
      ['limit=0', 'invalid_request'],
      ['limit=251', 'invalid_request'],
      ['offset=-1', 'invalid_request'],
      ['dateFrom=soon', 'invalid_date'],
      ['dateFrom=2025-08-05&dateTo=2025-08-04', 'invalid_date_range'],
    ]) {
      const res = await server.api('GET', `/v1/analytics/${projectId}/ai-companies?${query}`, { key });
      expect([query, res.status, res.body.code]).toEqual([query, 400, code]);
      expect(res.body.error).toMatch(/\.$/);
    }
  });

  it('reads through the typed client (one page and every page) and the CLI', async () => {
    const client = new FolioClient({ baseUrl: server.url, apiKey: key, projectId });
    const dateFrom = new Date(D0 + DAY).toISOString();
    const dateTo = new Date(D0 + 2 * DAY).toISOString();
    const inRange = expected(data.ref.filter((e) => e.ts >= D0 + DAY && e.ts < D0 + 2 * DAY));
    expect((await client.aiCompanies({ dateFrom, dateTo })).companies).toEqual(inRange);
    const pages: AiCompaniesPage['companies'] = [];
    for await (const page of client.allAiCompanies({ limit: 1, company: 'OpenAI' })) pages.push(...page.companies);
    expect(pages).toEqual(expected(data.ref, 'OpenAI'));

    const env = { FOLIO_URL: server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId };
    const want = expected(data.ref);
    const table = await runCli(['analytics', 'ai-companies'], env);
    expect(table.code).toBe(0);
    const openai = want.find((r) => r.company === 'OpenAI')!;
    expect(table.stdout).toMatch(new RegExp(`OpenAI\\s+${openai.trainingViews}\\s+${openai.searchViews}\\s+${openai.crawlers}\\s+${openai.assistantVisitors}\\s+${openai.assistantViews}\\s+${openai.referredHumans}`));
    const csv = (await runCli(['analytics', 'ai-companies', '--format', 'csv', '--company', 'Anthropic'], env)).stdout.split('\r\n');
    expect(csv[0]).toBe('company,path,training_views,search_views,crawlers,assistant_visitors,assistant_views,referred_humans,crawls_per_referred_human');
    const first = expected(data.ref, 'Anthropic')[0];
    expect(csv[1]).toBe(
      ['Anthropic', first.path, first.trainingViews, first.searchViews, first.crawlers, first.assistantVisitors, first.assistantViews, first.referredHumans, first.crawlsPerReferredHuman?.toFixed(1) ?? ''].join(','),
    );
    const json = JSON.parse((await runCli(['analytics', 'ai-companies', '--json', '--all', '--limit', '2'], env)).stdout);
    expect(json.companies).toEqual(want);
    const bad = await runCli(['analytics', 'ai-companies', '--company', 'Nobody'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^folio: No company "Nobody".+\(400 unknown_company\)/);
  });
});

describe('the source list’s companies', () => {
  it('takes a company on a referring host, and refuses one that is not a name', () => {
    expect(parseSourceRules({ referrers: [{ host: 'chat.example.ai', category: 'ai_assistant', company: 'Example AI' }] }, 'the file')).toEqual([
      { host: 'chat.example.ai', category: 'ai_assistant', company: 'Example AI' },
    ]);
    expect(() => parseSourceRules({ referrers: [{ host: 'chat.example.ai', category: 'ai_assistant', company: 7 }] }, 'the file')).toThrow(
      'the file: referrers[0].company must be a non-empty string of at most 1,024 characters.',
    );
  });
});
