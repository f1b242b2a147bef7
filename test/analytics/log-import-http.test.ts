// Raw access logs posted to the bulk endpoint (`Content-Type: text/plain`): read on the server by the
// same log reader as the direct import, counted exactly, deduplicated on re-import (plain or gzip),
// and every hostile body or parameter answered with a clear 4xx while the server keeps serving.
import { rmSync, writeFileSync } from 'node:fs';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { clf, reference, rng, type RefEvent } from './helpers.ts';
import { MAX_LINE_BYTES } from '../../src/analytics/import-worker.ts';
import { MAX_LOG_IMPORTS } from '../../src/analytics/index.ts';
import { DEFAULT_FIELDS } from '../../src/analytics/log-lines/json-lines.ts';
import { logPieces } from '../../src/analytics/log-pieces.ts';
import { FolioClient } from '../../src/client/index.ts';
import { tempDir } from '../helpers/server.ts';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; ChatGPT-User/1.0; +https://openai.com/bot)';

/** A combined log of page views, assets and errors, and the reference of what must be counted. */
function makeLog(n: number) {
  const r = rng(11);
  const base = Date.UTC(2025, 6, 1);
  const lines: string[] = [];
  const ref: RefEvent[] = [];
  let assets = 0;
  for (let i = 0; i < n; i++) {
    const ts = base + Math.floor((r() * 2 * 86_400_000) / 1000) * 1000;
    const ip = `203.0.113.${Math.floor(r() * 40)}`;
    const ua = r() < 0.3 ? AI : HUMAN;
    if (r() < 0.1) {
      lines.push(`${ip} - - [${clf(ts)}] "GET /assets/app.js HTTP/1.1" 200 10 "-" "${ua}"`);
      assets++;
      continue;
    }
    const p = ['/docs', '/docs/install', '/guide/start', '/'][Math.floor(r() * 4)];
    lines.push(`${ip} - - [${clf(ts)}] "GET ${p} HTTP/1.1" 200 10 "-" "${ua}"`);
    ref.push({ ts, path: p, visitor: `${ip}|${ua}`, cls: ua === AI ? 'ai' : 'human' });
  }
  return { text: lines.join('\n') + '\n', ref, assets, lines: lines.length };
}

/** Bursts: runs of identical lines in one second, so a careless cut would merge two of them into one key. */
function makeBursts(seconds: number) {
  const r = rng(5);
  const base = Date.UTC(2025, 7, 1);
  const lines: string[] = [];
  const ref: RefEvent[] = [];
  for (let sec = 0; sec < seconds; sec++) {
    const ts = base + sec * 1000;
    for (let k = 1 + Math.floor(r() * 6); k > 0; k--) {
      const ip = `203.0.113.${Math.floor(r() * 3)}`;
      const p = r() < 0.5 ? '/docs' : '/guide';
      if (r() < 0.2) lines.push(`${ip} - - [${clf(ts)}] "GET /logo.png HTTP/1.1" 200 10 "-" "${HUMAN}"`);
      lines.push(`${ip} - - [${clf(ts)}] "GET ${p} HTTP/1.1" 200 10 "-" "${HUMAN}"`);
      ref.push({ ts, path: p, visitor: `${ip}|${HUMAN}`, cls: 'human' });
    }
  }
  return { text: lines.join('\n') + '\n', ref, lines: lines.length };
}

describe('raw access logs on the bulk import endpoint', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  const log = makeLog(3000);

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId, 'write');
  });
  afterAll(async () => {
    await server?.close();
  });

  const importLog = (body: string | Uint8Array | ReadableStream<Uint8Array>, query = '', headers: Record<string, string> = {}) =>
    fetch(`${server.url}/v1/analytics/${projectId}/import${query}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain', ...headers },
      body,
      duplex: 'half',
    } as RequestInit).then(async (res) => ({ status: res.status, body: await res.json() }));

  it('reads a combined log, skips what is not a page view, and counts exactly', async () => {
    const res = await importLog(log.text);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: log.lines, recorded: log.ref.length, duplicates: 0, rejected: 0, errors: [] });
    expect(res.body.skipped).toEqual({ unparseable: 0, method: 0, status: 0, asset: log.assets, empty: 0 });
    for (const mode of ['visitors', 'views'] as const) {
      const got = await server.api('GET', `/v1/analytics/${projectId}/${mode}?limit=250`, { key });
      const want = reference(log.ref, null, null, mode);
      expect(got.body.totals, mode).toEqual(want.totals);
      expect(got.body[mode], mode).toEqual(want.rows);
    }
  });

  it('stores nothing again when the same log comes back gzipped or in pieces', async () => {
    const gz = await importLog(gzipSync(log.text), '', { 'content-encoding': 'gzip' });
    expect(gz.status).toBe(200);
    expect(gz.body).toMatchObject({ received: log.lines, recorded: 0, duplicates: log.ref.length });
    // A stream in small uneven pieces (lines split across chunks) reads the same lines.
    const bytes = new TextEncoder().encode(log.text);
    let at = 0;
    const pieces = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (at >= bytes.length) return controller.close();
        const n = 1 + ((at * 7919) % 997);
        controller.enqueue(bytes.subarray(at, at + n));
        at += n;
      },
    });
    const streamed = await importLog(pieces);
    expect(streamed.body).toMatchObject({ received: log.lines, recorded: 0, duplicates: log.ref.length });
  });

  it('reads JSON lines with a field map given once or repeated', async () => {
    const t = Date.UTC(2025, 6, 5, 12);
    const lines = [
      JSON.stringify({ when: new Date(t).toISOString(), req: { path: '/json/a' }, ua: HUMAN, ip: '203.0.113.200', status: 200, method: 'GET' }),
      JSON.stringify({ when: new Date(t + 1000).toISOString(), req: { path: '/json/b' }, ua: AI, ip: '203.0.113.201', status: 200, method: 'GET' }),
    ].join('\n');
    const once = await importLog(lines, '?format=json&map=time=when');
    expect(once.body).toMatchObject({ received: 2, recorded: 0, skipped: { unparseable: 2 } });
    const both = await importLog(lines, '?format=json&map=time=when&map=path=req.path');
    expect(both.status).toBe(200);
    expect(both.body).toMatchObject({ received: 2, recorded: 2, rejected: 0 });
    const views = await server.api('GET', `/v1/analytics/${projectId}/views?dateFrom=2025-07-05&dateTo=2025-07-06`, { key });
    expect(views.body.views).toEqual([
      { path: '/json/a', human: 1, ai: 0, total: 1 },
      { path: '/json/b', human: 0, ai: 1, total: 1 },
    ]);
  });

  it('answers hostile bodies and parameters with a clear 4xx and keeps serving', async () => {
    const cases: [Promise<{ status: number; body: { code: string; error: string } }>, number, string][] = [
      [importLog('x', '?format=xml'), 400, 'invalid_request'],
      [importLog('x', '?map=colour=x'), 400, 'invalid_field_map'],
      [importLog('x', '?map=time='), 400, 'invalid_field_map'],
      [importLog('x', `?${Array.from({ length: 21 }, () => 'map=time=a').join('&')}`), 400, 'invalid_request'],
      [importLog('x', '', { 'content-encoding': 'br' }), 415, 'unsupported_content_encoding'],
      [importLog('not gzip at all', '', { 'content-encoding': 'gzip' }), 400, 'invalid_log'],
      [importLog(gzipSync(log.text).subarray(0, 200), '', { 'content-encoding': 'gzip' }), 400, 'invalid_log'],
    ];
    for (const [pending, status, code] of cases) {
      const res = await pending;
      expect([res.status, res.body.code], JSON.stringify(res.body)).toEqual([status, code]);
      expect(res.body.error).toMatch(/\.$/);
    }
    // NUL bytes, control characters, invalid UTF-8 and prototype names in a map: lines are refused or skipped one by one.
    const odd = Buffer.concat([
      Buffer.from(`203.0.113.9 - - [${clf(Date.UTC(2025, 6, 9))}] "GET /nul\u0000x HTTP/1.1" 200 1 "-" "${HUMAN}"\n`),
      Buffer.from([0xff, 0xfe, 0x0a]),
      Buffer.from(`203.0.113.9 - - [${clf(Date.UTC(2025, 6, 9))}] "GET /ok HTTP/1.1" 200 1 "-" "\u0007"\n`),
    ]);
    const res = await importLog(odd);
    expect(res.status).toBe(200);
    expect(res.body.recorded).toBe(0);
    expect(res.body.received).toBe(3);
    const proto = await importLog('{"time":"2025-07-09T00:00:00Z","path":"/p"}\n', '?format=json&map=path=__proto__&map=time=constructor.prototype');
    expect(proto.status).toBe(200);
    expect(proto.body.recorded).toBe(0);
    const alive = await server.api('GET', '/healthz');
    expect(alive.status).toBe(200);
  });

  it('refuses, line by line, paths with line separators, C1 controls or text-direction marks, and keeps only valid referring hosts', async () => {
    const t = clf(Date.UTC(2025, 6, 11));
    const line = (p: string, ref = '-') => `203.0.113.60 - - [${t}] "GET ${p} HTTP/1.1" 200 1 "${ref}" "${HUMAN}"\n`;
    // The log reader takes U+2028 and U+2029 for white space, so a request line holding one is not one.
    const unparseable = ['/a\u2028IGNORE-ALL', '/b\u2029'];
    const refused = ['/c\u0085d', '/d\u009b', '/e\u202egnp', '/f\u2066x\u2069', '/g\u200e', '/h\u061c'];
    const body = [...unparseable, ...refused].map((p) => line(p)).join('') + line('/ok-idn', 'https://Bücher.example/x') + line('/ok-bidi-host', 'https://evil\u202e.example/');
    const res = await importLog(body);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 10, recorded: 2, rejected: refused.length, skipped: { unparseable: 2 } });
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(refused.map(() => 'invalid_path'));
    const report = await server.api('GET', `/v1/analytics/${projectId}/referrers?dateFrom=2025-07-11&dateTo=2025-07-12`, { key });
    expect(report.status).toBe(200);
    expect(report.body.referrers.map((r: { host: string }) => r.host)).toEqual(['xn--bcher-kva.example']);
  });

  it('drops a line longer than the limit without holding it in memory, and reads the lines around it', async () => {
    const t = clf(Date.UTC(2025, 6, 10));
    const good = (p: string) => `203.0.113.50 - - [${t}] "GET ${p} HTTP/1.1" 200 1 "-" "${HUMAN}"\n`;
    const long = 'a'.repeat(MAX_LINE_BYTES * 3);
    const res = await importLog(good('/before') + long + '\n' + good('/after') + long);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 4, recorded: 2, rejected: 2 });
    expect(res.body.errors.map((e: { code: string }) => e.code)).toEqual(['line_too_long', 'line_too_long']);
  });

  it(`runs at most ${MAX_LOG_IMPORTS} raw log imports at once and says so to the next one`, async () => {
    const held: ReadableStreamDefaultController<Uint8Array>[] = [];
    const open = Array.from({ length: MAX_LOG_IMPORTS }, () =>
      importLog(
        new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(log.text.slice(0, 200)));
            held.push(controller);
          },
        }),
      ),
    );
    // Wait until they all run on the server.
    for (let i = 0; i < 100 && server.services.analytics.logImportsRunning() < MAX_LOG_IMPORTS; i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    const refused = await importLog(log.text);
    expect([refused.status, refused.body.code]).toEqual([429, 'too_many_imports']);
    for (const c of held) c.close();
    for (const res of await Promise.all(open)) expect(res.status).toBe(200);
    const after = await importLog(log.text);
    expect(after.status).toBe(200);
  });

  it('takes a log in pieces cut only between seconds, through the typed client, with the counts of one import', async () => {
    const bursts = makeBursts(1500);
    const project = await server.createProject();
    const client = new FolioClient({ baseUrl: server.url, apiKey: await server.createKey(project, 'write'), projectId: project });
    const dir = tempDir('folio-pieces-');
    const file = `${dir}/bursts.log`;
    writeFileSync(file, bursts.text.slice(0, -1)); // no final line break: the last line still counts
    const pieces: Buffer[] = [];
    for await (const piece of logPieces([file], { format: 'auto', fields: DEFAULT_FIELDS, pieceBytes: 20_000 })) pieces.push(piece);
    rmSync(dir, { recursive: true, force: true });
    expect(pieces.length).toBeGreaterThan(10);
    expect(Buffer.concat(pieces).toString()).toBe(bursts.text);
    // Every cut falls between two seconds of page views (assets do not count).
    const time = (line: string) => /\[([^\]]+)\]/.exec(line)?.[1];
    for (let i = 1; i < pieces.length; i++) {
      const before = pieces[i - 1].toString().trimEnd().split('\n').findLast((l) => !l.includes('logo.png'))!;
      const after = pieces[i].toString().split('\n')[0];
      expect(time(before), `cut ${i}`).not.toBe(time(after));
    }
    let recorded = 0;
    for (const piece of pieces) recorded += (await client.importLog(new Uint8Array(piece))).recorded;
    expect(recorded).toBe(bursts.ref.length);
    const got = await client.views({ limit: 250 });
    expect(got.totals).toEqual(reference(bursts.ref, null, null, 'views').totals);
    const again = await client.importLog(bursts.text, { format: 'combined' });
    expect(again).toMatchObject({ received: bursts.lines, recorded: 0, duplicates: bursts.ref.length });
  }, 180_000); // ~17 s alone; several minutes of CPU shared with other suites on 2 cores came near the default minute
});
