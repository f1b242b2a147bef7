// The classifier: every agent-list entry with a real user-agent string, the category order, isbot for
// other bots, the Markdown rule, path normalisation and keyed visitor ids.
import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { ClassificationRules, isMarkdownPath, parseAgentList, prefersMarkdown } from '../../src/analytics/classify.ts';
import { normalizePath, VisitorIds } from '../../src/analytics/identity.ts';
import { parseClfTime } from '../../src/analytics/log-lines/clf-time.ts';
import { parseJsonLine } from '../../src/analytics/log-lines/json-lines.ts';
import { isDocumentPath } from '../../src/analytics/log-lines/page-views.ts';
import { parseInstant } from '../../src/analytics/dates.ts';
import { contentKeyHex, readCombined } from './helpers.ts';

// Folio's own lists, as a server without FOLIO_AGENTS_FILE builds them.
const RULES = ClassificationRules.load();
const AGENTS = RULES.agents;
const classifyUserAgent = (ua: string) => RULES.classifyUserAgent(ua);
const classify = (ua: string, path: string, accept?: string) => RULES.classify(ua, path, accept);

const HUMANS = [
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
  'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15',
  'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0',
  'Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Mobile/15E148 Safari/604.1',
];
const OTHER_BOTS = [
  'Mozilla/5.0 (compatible; AhrefsBot/7.0; +http://ahrefs.com/robot/)',
  'Mozilla/5.0 (compatible; SemrushBot/7~bl; +http://www.semrush.com/bot.html)',
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
  'curl/8.5.0',
  'python-requests/2.32.3',
  '',
];

describe('agent list', () => {
  it('covers the required companies and tools', () => {
    const companies = new Set(AGENTS.map((a) => a.company));
    for (const c of ['OpenAI', 'Anthropic', 'Perplexity', 'Google', 'Microsoft', 'Apple', 'Amazon', 'Meta', 'Mistral', 'Cohere', 'DuckDuckGo', 'ByteDance', 'Common Crawl']) {
      expect(companies, c).toContain(c);
    }
    const names = AGENTS.map((a) => a.name);
    for (const n of ['Cursor', 'GitHub Copilot', 'Claude Code']) expect(names).toContain(n);
    for (const cat of ['ai_answer', 'search', 'training']) expect(AGENTS.some((a) => a.category === cat)).toBe(true);
  });

  for (const agent of AGENTS) {
    it(`classifies ${agent.name} (${agent.category}) from a real user agent`, () => {
      const expected = { ai_answer: 'ai', search: 'search', training: 'training' }[agent.category];
      expect(classifyUserAgent(agent.example)).toEqual({ class: expected, agent: agent.name });
    });
  }

  it("lists the vendors' published user-triggered fetchers as AI answers and their crawlers as search or training", () => {
    const category = (name: string) => AGENTS.find((a) => a.name === name)?.category;
    // User-triggered (a person asked an assistant): OpenAI, Anthropic, Perplexity, Google, Mistral, Amazon, Meta, DuckDuckGo.
    for (const n of ['ChatGPT-User', 'ChatGPT Agent', 'Claude-User', 'Perplexity-User', 'Google-NotebookLM', 'Google-Agent', 'MistralAI-User', 'Amzn-User', 'meta-externalfetcher', 'DuckAssistBot']) {
      expect(category(n), n).toBe('ai_answer');
    }
    for (const n of ['OAI-SearchBot', 'Claude-SearchBot', 'PerplexityBot', 'Googlebot', 'Amzn-SearchBot', 'Meta-WebIndexer', 'MistralAI-Search']) expect(category(n), n).toBe('search');
    for (const n of ['GPTBot', 'ClaudeBot', 'Amazonbot', 'meta-externalagent', 'Google-CloudVertexBot']) expect(category(n), n).toBe('training');
  });

  it('lets the first category win: an assistant UA that also looks like a bot is AI', () => {
    expect(classifyUserAgent('Mozilla/5.0 (compatible; ChatGPT-User/1.0; bot; +https://openai.com/bot)').class).toBe('ai');
  });
});

describe('humans and other bots', () => {
  it.each(HUMANS)('human: %s', (ua) => expect(classifyUserAgent(ua)).toEqual({ class: 'human', agent: null }));
  it.each(OTHER_BOTS)('other bot: "%s"', (ua) => expect(classifyUserAgent(ua).class).toBe('bot'));
});

describe('Markdown views', () => {
  it('counts a human-looking client reading Markdown as AI, not crawlers', () => {
    expect(classify(HUMANS[0], '/docs/page.md').class).toBe('ai');
    expect(classify(HUMANS[0], '/llms.txt').class).toBe('ai');
    expect(classify(HUMANS[0], '/docs/llms-full.txt').class).toBe('ai');
    expect(classify(HUMANS[0], '/docs/page', 'text/markdown, text/html;q=0.9').class).toBe('ai');
    expect(classify(HUMANS[0], '/docs/page', 'text/html,application/xhtml+xml,*/*;q=0.8').class).toBe('human');
    expect(classify(HUMANS[0], '/docs/page.md').agent).toBe('Markdown client');
    expect(classify('Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)', '/llms.txt').class).toBe('search');
    expect(classify('curl/8.5.0', '/llms.txt').class).toBe('bot');
  });
  it('reads Accept preferences', () => {
    expect(prefersMarkdown('text/markdown')).toBe(true);
    expect(prefersMarkdown('text/html;q=0.5, text/markdown;q=0.6')).toBe(true);
    expect(prefersMarkdown('text/html, text/markdown')).toBe(false);
    expect(prefersMarkdown('text/markdown;q=0, text/plain')).toBe(false);
    expect(prefersMarkdown('*/*')).toBe(false);
    expect(prefersMarkdown(undefined)).toBe(false);
    expect(isMarkdownPath('/a/b.mdx')).toBe(true);
    expect(isMarkdownPath('/a/md')).toBe(false);
  });
});

describe('identity and paths', () => {
  it('normalises paths by stripping only the query and fragment', () => {
    expect(normalizePath('/docs/install?ref=nav#x')).toBe('/docs/install');
    expect(normalizePath('/docs/install#a?b')).toBe('/docs/install');
    expect(normalizePath('/docs/install/')).toBe('/docs/install/');
    expect(normalizePath('/Guide/Café')).toBe('/Guide/Café');
    expect(normalizePath('/a%20b')).toBe('/a%20b');
  });
  it('derives keyed, stable visitor ids that never contain the IP', () => {
    const a = new VisitorIds('secret-one-0123456789');
    const b = new VisitorIds('secret-two-0123456789');
    const id = a.fromIpAndAgent('203.0.113.5', 'UA');
    expect(a.fromIpAndAgent('203.0.113.5', 'UA')).toBe(id);
    expect(b.fromIpAndAgent('203.0.113.5', 'UA')).not.toBe(id);
    expect(a.fromIpAndAgent('203.0.113.6', 'UA')).not.toBe(id);
    expect(a.fromGiven('203.0.113.5')).not.toBe(id);
    expect(typeof id).toBe('bigint');
    const day = Date.UTC(2025, 0, 1);
    expect(a.daily('203.0.113.5', 'UA', day)).toBe(a.daily('203.0.113.5', 'UA', day + 3_600_000));
    expect(a.daily('203.0.113.5', 'UA', day)).not.toBe(a.daily('203.0.113.5', 'UA', day + 86_400_000));
  });
  it('keeps visitor ids identical to the keyed hash through cache turnovers (values stored before stay valid)', () => {
    // The HMAC-SHA256 construction and its input are fixed: stored ids of earlier imports must match.
    const hmac = (data: string) => createHmac('sha256', 'secret-one-0123456789').update(data).digest().readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
    const small = new VisitorIds('secret-one-0123456789', { cacheEntries: 7 });
    const uas = ['UA one', 'UA two', 'Mozilla/5.0 (X11) Firefox/133.0 — ü'];
    for (let round = 0; round < 3; round++) {
      for (let i = 0; i < 40; i++) {
        const ip = `198.51.100.${(i * 7 + round) % 23}`;
        const ua = uas[i % 3];
        expect(small.fromIpAndAgent(ip, ua), `${ip} ${ua}`).toBe(hmac(`ip\u0000${ip}\u0000${ua}`));
        expect(small.fromGiven(`v${i % 11}`)).toBe(hmac(`id\u0000v${i % 11}`));
      }
    }
  });
});

describe('dates and log lines', () => {
  it('parses YYYY-MM-DD as UTC midnight and honours offsets', () => {
    expect(parseInstant('2025-03-01')).toBe(Date.UTC(2025, 2, 1));
    expect(parseInstant('2025-03-01T02:00:00+02:00')).toBe(Date.UTC(2025, 2, 1));
    expect(parseInstant('2025-03-01T00:00:00')).toBe(Date.UTC(2025, 2, 1));
    expect(parseInstant('2025-02-29')).toBeNull();
    expect(parseInstant('2024-02-29')).toBe(Date.UTC(2024, 1, 29));
  });
  it('parses combined and JSON log lines', () => {
    const line = '203.0.113.7 - - [10/Mar/2025:13:55:36 -0700] "GET /docs/install?x=1 HTTP/1.1" 200 5120 "https://example.com/" "Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0"';
    expect(readCombined(line)).toEqual({
      ts: Date.UTC(2025, 2, 10, 20, 55, 36),
      ip: '203.0.113.7',
      method: 'GET',
      path: '/docs/install?x=1',
      status: 200,
      userAgent: 'Mozilla/5.0 (X11; Linux x86_64) Firefox/133.0',
      referrer: 'https://example.com/',
      accept: null,
    });
    expect(readCombined('garbage')).toBeNull();
    expect(parseJsonLine('{"time":"2025-03-10T20:55:36Z","remote_addr":"203.0.113.7","request":"GET /a HTTP/1.1","status":200,"http_user_agent":"UA"}')).toMatchObject({
      ts: Date.UTC(2025, 2, 10, 20, 55, 36),
      method: 'GET',
      path: '/a',
      ip: '203.0.113.7',
      userAgent: 'UA',
    });
    expect(parseJsonLine('{"req":{"uri":"/b"},"ts":1741640136}', { ...DEFAULTS(), path: ['req.uri'] })).toMatchObject({ path: '/b', ts: 1741640136000 });
  });
  it('tells documents from assets', () => {
    for (const p of ['/', '/docs', '/docs/', '/docs/page.html', '/docs/page.md', '/llms.txt', '/v1.2/guide']) expect(isDocumentPath(p), p).toBe(true);
    for (const p of ['/app.js', '/style.css', '/logo.svg', '/favicon.ico', '/robots.txt', '/sitemap.xml', '/fonts/a.woff2']) expect(isDocumentPath(p), p).toBe(false);
  });
  it('gives distinct lines distinct content keys', () => {
    const keys = new Set(Array.from({ length: 20_000 }, (_, i) => contentKeyHex(`line ${i}`)));
    expect(keys.size).toBe(20_000);
    expect(contentKeyHex('abc')).toMatch(/^[0-9a-f]{16}$/);
  });
});

function DEFAULTS() {
  return { time: ['ts'], ip: ['ip'], method: ['method'], path: ['path'], request: ['request'], status: ['status'], userAgent: ['ua'], referrer: ['referrer'], accept: ['accept'] };
}

describe('readLines', () => {
  it('splits chunks into lines across boundaries, CRLF and multi-byte characters', async () => {
    const { readLines } = await import('../../src/analytics/log-lines/split-lines.ts');
    const text = 'a\r\nbé\n\nc😀d\nlast';
    const bytes = Buffer.from(text, 'utf8');
    for (const size of [1, 2, 3, 5, 64]) {
      const chunks: Buffer[] = [];
      for (let i = 0; i < bytes.length; i += size) chunks.push(bytes.subarray(i, i + size));
      const out: string[] = [];
      for await (const l of readLines((async function* () { yield* chunks; })())) out.push(l);
      expect(out, `chunk size ${size}`).toEqual(['a', 'bé', '', 'c😀d', 'last']);
    }
  });
});

describe('CLF times', () => {
  it('gives the same instant through the minute cache as a full parse, across minutes, zones and bad seconds', () => {
    const base = Date.UTC(2025, 0, 31, 23, 58, 0);
    const months = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
    const p2 = (n: number) => String(n).padStart(2, '0');
    for (let s = 0; s < 200; s += 7) {
      for (const zone of ['+0000', '-0700', '+0530']) {
        const d = new Date(base + s * 1000);
        const clf = `${p2(d.getUTCDate())}/${months[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p2(d.getUTCHours())}:${p2(d.getUTCMinutes())}:${p2(d.getUTCSeconds())} ${zone}`;
        const line = `203.0.113.1 - - [${clf}] "GET /a HTTP/1.1" 200 1 "-" "UA"`;
        expect(readCombined(line)?.ts, clf).toBe(parseClfTime(clf));
      }
    }
    expect(readCombined('203.0.113.1 - - [31/Jan/2025:23:58:6x +0000] "GET /a HTTP/1.1" 200 1 "-" "UA"')).toBeNull();
  });
});

describe('operator agents (FOLIO_AGENTS_FILE)', () => {
  it('are checked before the built-in list, can reclassify a known agent, and a bad list is refused clearly', async () => {
    const extra = parseAgentList(
      {
        agents: [
          { name: 'AcmeAssistant', company: 'Acme', category: 'ai_answer', pattern: 'AcmeAssistant/\\d', example: 'Mozilla/5.0 (compatible; AcmeAssistant/2.1)' },
          { name: 'Internal crawler', company: 'Us', category: 'training', pattern: 'python-requests', example: 'python-requests/2.32.3' },
        ],
      },
      'test',
    );
    const withExtra = ClassificationRules.withExtra({ agents: extra });
    expect(withExtra.classifyUserAgent('Mozilla/5.0 (compatible; AcmeAssistant/2.1)')).toEqual({ class: 'ai', agent: 'AcmeAssistant' });
    expect(withExtra.classifyUserAgent('python-requests/2.32.3')).toEqual({ class: 'training', agent: 'Internal crawler' });
    expect(withExtra.classifyUserAgent(AGENTS[0].example).agent).toBe(AGENTS[0].name);
    expect(withExtra.agentCompanies.get('AcmeAssistant')).toBe('Acme');
    // The rules without the file are another value: nothing of the operator's list leaks into them.
    expect(classifyUserAgent('Mozilla/5.0 (compatible; AcmeAssistant/2.1)').class).toBe('bot'); // isbot's verdict without the entry
    expect(() => parseAgentList({ agents: [{ name: 'X', company: 'Y', category: 'ai', pattern: 'X', example: 'X' }] }, 'f')).toThrow(/category must be one of/);
    expect(() => parseAgentList({ agents: [{ name: 'X', company: 'Y', category: 'search', pattern: '(', example: 'X' }] }, 'f')).toThrow(/not a valid regular expression/);
    expect(() => parseAgentList({ agents: [{ name: 'X', company: 'Y', category: 'search', pattern: 'Z', example: 'X' }] }, 'f')).toThrow(/does not match its own example/);
    expect(() => parseAgentList([], 'f')).toThrow(/must hold/);
  });
});
