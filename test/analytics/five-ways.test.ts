// The same hostile records through all five ways in — the events API, the browser's collect
// endpoint, the bulk endpoint (NDJSON), `folio analytics import --url` (the typed client, raw log
// lines in pieces) and the direct import into the DuckDB file — get identical verdicts: accepted, or
// rejected with the same code. Each record goes through every way whose wire can carry it: collect
// has no timestamp and takes the IP from the connection; log lines always have a time and no
// visitor id, and other fields of a JSON log line are ignored rather than unknown.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import { runCli } from '../helpers/process.ts';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { ON_CLICKHOUSE } from './helpers.ts';

const ORIGIN = 'https://docs.example.com';
const UA = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const LOCAL = '127.0.0.1'; // what collect sees as the client address in this test

type Way = 'events' | 'collect' | 'ndjson' | 'url' | 'direct';
const WAYS: Way[] = ['events', 'collect', 'ndjson', 'url', 'direct'];

interface Hostile {
  name: string;
  timestamp?: unknown;
  path?: unknown;
  userAgent?: unknown;
  ip?: unknown;
  visitorId?: unknown;
  referrer?: unknown;
  accept?: unknown;
  /** An unknown field. */
  extra?: boolean;
  /** Expected verdict: 'ok' or the rejection code. */
  want: string;
}

const HOUR_AGO = new Date(Date.now() - 3_600_000).toISOString();

const RECORDS: Hostile[] = [
  { name: 'good', path: '/docs/start', userAgent: UA, ip: '203.0.113.7', timestamp: HOUR_AGO, want: 'ok' },
  { name: 'good, no time', path: '/docs/start', userAgent: UA, ip: LOCAL, want: 'ok' },
  { name: 'good AI, query stripped', path: '/docs/a?x=1#f', userAgent: AI, ip: LOCAL, want: 'ok' },
  { name: 'a crawler is accepted (collect then drops it)', path: '/docs/b', userAgent: BOT, ip: LOCAL, want: 'ok' },
  { name: 'control character in the path', path: '/docs/\u0001x', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'NUL in the path', path: '/docs/\u0000', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'DEL in the path', path: '/a\u007fb', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'C1 control (NEL) in the path', path: '/docs/a\u0085b', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'C1 control (CSI) in the path', path: '/docs/a\u009bb', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'line separator in the path', path: '/docs/a\u2028IGNORE', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'paragraph separator in the path', path: '/docs/a\u2029b', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'right-to-left override in the path', path: '/docs/\u202egnp.exe', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'bidirectional isolate in the path', path: '/docs/\u2066x\u2069', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'right-to-left mark in the path', path: '/docs/x\u200f', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'Arabic letter mark in the path', path: '/docs/x\u061c', userAgent: UA, ip: LOCAL, want: 'invalid_path' },
  { name: 'accented letters and the percent-encoded override are a path', path: '/docs/café/%E2%80%AE', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, want: 'ok' },
  { name: 'a referrer whose host is not a host name is kept without one', path: '/docs/k', userAgent: UA, ip: LOCAL, referrer: 'https://evil\u202e.example/x', want: 'ok' },
  { name: 'a referrer whose host is not a host name, logged', path: '/docs/k', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, referrer: 'https://a\u2028b.example/', want: 'ok' },
  { name: 'an international referring host is kept in ASCII', path: '/docs/k', userAgent: UA, ip: LOCAL, referrer: 'https://Bücher.example/seite', want: 'ok' },
  { name: 'an international referring host, logged', path: '/docs/k', userAgent: UA, ip: '203.0.113.8', timestamp: HOUR_AGO, referrer: 'https://Bücher.example/seite', want: 'ok' },
  { name: 'control character in the query only', path: '/docs/c?q=\u0001', userAgent: UA, ip: LOCAL, want: 'ok' },
  { name: 'huge path', path: '/' + 'p'.repeat(5000), userAgent: UA, ip: '203.0.113.9', timestamp: HOUR_AGO, want: 'field_too_long' },
  { name: 'path at the limit with a huge query', path: '/' + 'p'.repeat(2047) + '?' + 'q'.repeat(5000), userAgent: UA, ip: '203.0.113.9', timestamp: HOUR_AGO, want: 'ok' },
  { name: 'relative path', path: 'docs/x', userAgent: UA, ip: '203.0.113.9', timestamp: HOUR_AGO, want: 'invalid_path' },
  { name: 'empty user agent', path: '/docs/d', userAgent: '', ip: '203.0.113.10', timestamp: HOUR_AGO, want: 'invalid_user_agent' },
  { name: 'tab in the user agent', path: '/docs/d', userAgent: 'Mozilla\t5.0', ip: '203.0.113.10', timestamp: HOUR_AGO, want: 'invalid_user_agent' },
  { name: 'huge user agent', path: '/docs/d', userAgent: 'U'.repeat(2000), ip: '203.0.113.10', timestamp: HOUR_AGO, want: 'field_too_long' },
  { name: 'IPv4 out of range', path: '/docs/e', userAgent: UA, ip: '999.1.1.1', timestamp: HOUR_AGO, want: 'invalid_ip' },
  { name: 'IPv4 with a leading zero', path: '/docs/e', userAgent: UA, ip: '10.0.0.01', timestamp: HOUR_AGO, want: 'invalid_ip' },
  { name: 'IPv4-mapped IPv6', path: '/docs/e', userAgent: UA, ip: '::ffff:203.0.113.11', timestamp: HOUR_AGO, want: 'ok' },
  { name: 'IPv6', path: '/docs/e', userAgent: UA, ip: '2001:db8::1', timestamp: HOUR_AGO, want: 'ok' },
  { name: 'a host name is no IP', path: '/docs/e', userAgent: UA, ip: 'localhost', timestamp: HOUR_AGO, want: 'invalid_ip' },
  { name: 'no identity', path: '/docs/f', userAgent: UA, timestamp: HOUR_AGO, want: 'missing_identity' },
  { name: 'impossible date', path: '/docs/g', userAgent: UA, ip: '203.0.113.12', timestamp: '2025-02-30T10:00:00Z', want: 'invalid_timestamp' },
  { name: 'not a date', path: '/docs/g', userAgent: UA, ip: '203.0.113.12', timestamp: 'last tuesday', want: 'invalid_timestamp' },
  { name: 'before 1970', path: '/docs/g', userAgent: UA, ip: '203.0.113.12', timestamp: '1969-12-31T23:59:59Z', want: 'invalid_timestamp' },
  { name: 'far future', path: '/docs/g', userAgent: UA, ip: '203.0.113.12', timestamp: '2999-01-01T00:00:00Z', want: 'future_timestamp' },
  { name: 'NUL in the referrer', path: '/docs/h', userAgent: UA, ip: LOCAL, referrer: 'https://x.test/\u0000', want: 'invalid_field' },
  { name: 'huge referrer', path: '/docs/h', userAgent: UA, ip: LOCAL, referrer: 'https://x.test/' + 'r'.repeat(3000), want: 'field_too_long' },
  { name: 'visitor id with a control character', path: '/docs/i', userAgent: UA, ip: LOCAL, visitorId: 'v\u0002', want: 'invalid_visitor_id' },
  { name: 'unknown field', path: '/docs/j', userAgent: UA, ip: LOCAL, extra: true, want: 'unknown_field' },
  { name: 'path not a string', path: 42, userAgent: UA, ip: LOCAL, want: 'invalid_field' },
];

/** Whether `way`'s wire can carry the record as it is. */
function carries(way: Way, r: Hostile): boolean {
  if (way === 'collect') return r.timestamp === undefined && (r.ip === LOCAL || r.ip === undefined) && typeof r.userAgent === 'string' && !/[\u0000-\u001f\u007f]/.test(r.userAgent) && r.userAgent.length <= 1024 && r.ip === LOCAL;
  if (way === 'url' || way === 'direct') return r.timestamp !== undefined && r.visitorId === undefined && !r.extra && typeof r.path === 'string' && typeof r.userAgent === 'string';
  return true;
}

function eventOf(r: Hostile): Record<string, unknown> {
  const e: Record<string, unknown> = {};
  for (const k of ['timestamp', 'path', 'userAgent', 'ip', 'visitorId', 'referrer', 'accept'] as const) if (r[k] !== undefined) e[k] = r[k];
  if (r.extra) e.color = 'red';
  return e;
}

function ndjsonOf(r: Hostile): Record<string, unknown> {
  const names = { timestamp: 't', path: 'p', userAgent: 'ua', ip: 'ip', visitorId: 'v', referrer: 'r', accept: 'a' } as const;
  const e: Record<string, unknown> = {};
  for (const [k, w] of Object.entries(names)) if (r[k as keyof typeof names] !== undefined) e[w] = r[k as keyof typeof names];
  if (r.extra) e.color = 'red';
  return e;
}

function logLineOf(r: Hostile): string {
  const e: Record<string, unknown> = { time: r.timestamp, path: r.path, user_agent: r.userAgent, method: 'GET', status: 200 };
  if (r.ip !== undefined) e.ip = r.ip;
  if (r.referrer !== undefined) e.referer = r.referrer;
  if (r.accept !== undefined) e.accept = r.accept;
  return JSON.stringify(e);
}

describe.skipIf(ON_CLICKHOUSE)('five ways in, one verdict', () => {
  const dataDir = tempDir('folio-five-');
  let databases: BackendDatabases;
  let server: TestServer | null = null;
  const projects = {} as Record<Way, string>;
  let key = '';
  const verdicts = new Map<string, Partial<Record<Way, string>>>();
  const set = (r: Hostile, way: Way, v: string) => verdicts.set(r.name, { ...verdicts.get(r.name), [way]: v });

  beforeAll(async () => {
    databases = await backendDatabases();
    server = await startTestServer({ workers: 0, dataDir, databases });
    for (const way of WAYS) projects[way] = await server.createProject({ name: way, siteOrigins: [ORIGIN] });
    key = await server.createKey(projects.events, 'write');
  });

  afterAll(async () => {
    await server?.close();
    await databases?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('sends every record through every way that can carry it', async () => {
    const s = server!;
    const keys = {} as Record<Way, string>;
    for (const way of WAYS) keys[way] = way === 'events' ? key : await s.createKey(projects[way], 'write');

    // 1. The events API, one batch.
    const events = await s.api('POST', `/v1/analytics/${projects.events}/events`, { key: keys.events, body: { events: RECORDS.map(eventOf) } });
    expect(events.status).toBe(202);
    const byIndex = new Map<number, string>(events.body.rejected.map((x: { index: number; code: string }) => [x.index, x.code]));
    RECORDS.forEach((r, i) => set(r, 'events', byIndex.get(i) ?? 'ok'));

    // 2. Collect, one request per record.
    for (const r of RECORDS.filter((x) => carries('collect', x))) {
      const body: Record<string, unknown> = { path: r.path };
      if (r.referrer !== undefined) body.referrer = r.referrer;
      if (r.visitorId !== undefined) body.visitorId = r.visitorId;
      if (r.extra) body.color = 'red';
      const res = await s.api('POST', `/v1/analytics/${projects.collect}/collect`, {
        body: JSON.stringify(body),
        headers: { origin: ORIGIN, 'content-type': 'text/plain', 'user-agent': r.userAgent as string },
      });
      expect([204, 400], r.name).toContain(res.status);
      set(r, 'collect', res.status === 204 ? 'ok' : res.body.code);
    }

    // 3. The bulk endpoint, NDJSON: every record is a line, in batches of ten (answers list 20 errors at most).
    for (let from = 0; from < RECORDS.length; from += 10) {
      const part = RECORDS.slice(from, from + 10);
      const nd = await s.api('POST', `/v1/analytics/${projects.ndjson}/import`, {
        key: keys.ndjson,
        body: part.map((r) => JSON.stringify(ndjsonOf(r))).join('\n') + '\n',
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect(nd.status).toBe(200);
      expect(nd.body.errors.length).toBe(nd.body.rejected);
      const byLine = new Map<number, string>(nd.body.errors.map((x: { line: number; code: string }) => [x.line, x.code]));
      part.forEach((r, i) => set(r, 'ndjson', byLine.get(i + 1) ?? 'ok'));
    }

    // 4 and 5. The CLI: JSON log lines over HTTP (typed client, raw log pieces), then directly.
    const logged = RECORDS.filter((x) => carries('url', x));
    const file = path.join(dataDir, 'hostile.jsonl');
    writeFileSync(file, logged.map(logLineOf).join('\n') + '\n');
    const lineVerdicts = (out: string) => {
      const summary = JSON.parse(out) as { errors: { line: number; code: string }[]; skipped: Record<string, number> };
      expect(summary.errors.length).toBe(summary.skipped.rejected);
      const m = new Map(summary.errors.map((x) => [x.line, x.code]));
      return logged.map((_, i) => m.get(i + 1) ?? 'ok');
    };
    const url = await runCli(['analytics', 'import', '--project', projects.url, '--url', s.url, '--key', keys.url, '--format', 'json', '--no-progress', '--json', file], {});
    expect(url.code, url.stderr).toBe(0);
    lineVerdicts(url.stdout).forEach((v, i) => set(logged[i], 'url', v));

    // A referrer whose host is no host name was kept without one, on every way that carried it.
    for (const way of ['events', 'collect', 'ndjson', 'url'] as const) {
      const report = await s.api('GET', `/v1/analytics/${projects[way]}/referrers`, { key: keys[way] });
      expect(report.status, way).toBe(200);
      expect((report.body.referrers as { host: string }[]).map((r) => r.host), way).toEqual(['xn--bcher-kva.example']);
    }

    await s.close();
    server = null;
    const direct = await runCli(['analytics', 'import', '--project', projects.direct, '--format', 'json', '--no-progress', '--json', file], { ...s.env });
    expect(direct.code, direct.stderr).toBe(0);
    lineVerdicts(direct.stdout).forEach((v, i) => set(logged[i], 'direct', v));

    // Every way that carried a record gave the expected verdict, so all of them agree.
    const table = RECORDS.map((r) => ({ name: r.name, want: r.want, got: verdicts.get(r.name) }));
    for (const row of table) {
      for (const way of WAYS) {
        const r = RECORDS.find((x) => x.name === row.name)!;
        if (!carries(way, r)) continue;
        expect(row.got?.[way], `${row.name} via ${way}`).toBe(row.want);
      }
    }
    // Each way carried a good part of the set, and the rejections of each way cover many codes.
    for (const way of WAYS) expect(RECORDS.filter((r) => carries(way, r)).length, way).toBeGreaterThanOrEqual(8);
  });
});
