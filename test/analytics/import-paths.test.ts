// The direct import's fast paths give exactly what the plain paths give: the combined-line reader
// vs the regex that specifies it, the byte path (log-bytes/reader.ts) vs the string path (LineConverter + builder), IPv4
// parsing vs net.isIPv4, repeats of identical lines, and visitor ids hashed on the writing thread.
import { isIPv4 } from 'node:net';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DeferredVisitors, VisitorResolver } from '../../src/analytics/deferred-visitors.ts';
import type { ImportColumns } from '../../src/analytics/engine.ts';
import { VisitorIds } from '../../src/analytics/identity.ts';
import { ByteLineImporter } from '../../src/analytics/log-bytes/reader.ts';
import { ipv4At } from '../../src/analytics/log-bytes/ipv4.ts';
import { ImportColumnsBuilder } from '../../src/analytics/import-columns.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { ClfClock } from '../../src/analytics/log-lines/clf-time.ts';
import { StringUnits } from '../../src/analytics/log-lines/code-units.ts';
import { CombinedReader } from '../../src/analytics/log-lines/combined-format.ts';
import { Repeats } from '../../src/analytics/log-lines/content-key.ts';
import { LineConverter } from '../../src/analytics/log-lines/line-converter.ts';
import { emptyRecord, type LogRecord } from '../../src/analytics/log-lines/log-record.ts';
import { contentKeyHex, rng } from './helpers.ts';
import { agents } from '../../src/analytics/reports/agents.ts';
import { views } from '../../src/analytics/reports/views.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

const SECRET = 'test-secret-0123456789abcdef';
const NOW = Date.UTC(2025, 5, 1);
const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Claude-User/1.0; +Claude-User@anthropic.com)';
const BOT = 'Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)';

/** Ordinary lines and every kind of odd one, in time order with repeats within seconds. */
function oddLines(n: number, seed: number): string[] {
  const r = rng(seed);
  const pick = <T>(xs: T[]) => xs[Math.floor(r() * xs.length)];
  /** Mostly the first (ordinary) value, sometimes an odd one. */
  const mostly = <T>(xs: T[]) => (r() < 0.85 ? xs[0] : pick(xs));
  const lines: string[] = [];
  let t = Date.UTC(2025, 4, 31, 23, 58, 0);
  for (let i = 0; i < n; i++) {
    if (r() < 0.6) t += Math.floor(r() * 3) * 1000;
    const d = new Date(t);
    const p = (x: number) => String(x).padStart(2, '0');
    const mon = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'][d.getUTCMonth()];
    const zone = pick(['+0000', '+0000', '-0700', '+0530']);
    const when = mostly([`${p(d.getUTCDate())}/${mon}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} ${zone}`, '31/Jan/2025:23:58:6x +0000', '01/Foo/2025:00:00:00 +0000', '1/Jun/2025:00:00:00']);
    const ip = mostly([`198.51.100.${Math.floor(r() * 40)}`, '10.0.0.1', '255.255.255.255', '0.0.0.0', '01.2.3.4', '256.1.1.1', '1.2.3', '2001:db8::1', '-', 'héllo', '198.51.100.7\t']);
    const method = mostly(['GET', 'GET', 'GET', 'HEAD', 'POST', 'get', 'G3T']);
    const path = mostly([pick(['/docs', '/guide', '/api/x.md', '/llms.txt', '/docs/']), '/docs/', '/docs/a?x=1', '/docs/a#f', '/guide/café', '/api/ref.md', '/llms.txt', '/app.js', '/img/x.PNG', 'docs', '/a"b', '/' + 'p'.repeat(2100), '/x y']);
    const proto = mostly([' HTTP/1.1', ' HTTP/1.1', '', ' HTTP/2.0 extra']);
    const status = mostly(['200', '200', '304', '404', '500', '2000', '20']);
    const bytes = mostly(['123', '-', '12"3']);
    const ref = mostly(['-', '-', '', 'https://example.com/', 'https://a.example/"q', 'https://ex.com/\\"x', 'x'.repeat(2100)]);
    const ua = mostly([pick([HUMAN, AI, BOT]), '', 'curl/8.0', 'Mozilla \\"quoted\\" agent', 'ü-agent', 'x'.repeat(1100)]);
    const shape = r();
    let line: string;
    if (shape < 0.8) line = `${ip} - - [${when}] "${method} ${path}${proto}" ${status} ${bytes} "${ref}" "${ua}"`;
    else if (shape < 0.85) line = `${ip} - - [${when}] "${method} ${path}${proto}" ${status} ${bytes}`;
    else if (shape < 0.88) line = `  ${ip} - - [${when}] "${method} ${path}${proto}" ${status} ${bytes} "${ref}" "${ua}"`;
    else if (shape < 0.9) line = '';
    else if (shape < 0.92) line = `{"time":"2025-05-31T23:59:00Z","ip":"${ip}","path":"/json","ua":"x"}`;
    else if (shape < 0.94) line = `${ip} - - [${when}] "${method} ${path}${proto}" ${status} ${bytes} "${ref}" "${ua}" trailing "stuff"`;
    else line = 'this is not a log line';
    lines.push(line);
    if (r() < 0.1) lines.push(line); // identical line, same second
  }
  return lines;
}

/** The specification of a combined line: this regex, its fields, and the time read by the same clock. */
const COMBINED = /^(\S+) \S+ \S+ \[([^\]]+)\] "([A-Z]+) (\S+)(?: [^"]*)?" (\d{3}) \S+(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?/;

function byRegex(line: string, clock: ClfClock): LogRecord | null {
  const m = COMBINED.exec(line);
  if (!m) return null;
  const units = new StringUnits();
  units.set(m[2]);
  const ts = clock.at(units, 0, m[2].length);
  if (ts === null) return null;
  const referrer = m[6] === undefined || m[6] === '-' || m[6] === '' ? null : m[6];
  return { ts, ip: m[1], method: m[3], path: m[4], status: Number(m[5]), userAgent: m[7] ?? '', referrer, accept: null };
}

function snapshot(c: ImportColumns) {
  return Array.from({ length: c.n }, (_, i) => ({
    ts: c.ts[i],
    path: c.paths[c.path[i]],
    visitor: c.visitor[i],
    cls: c.cls[i],
    agent: c.agent[i] < 0 ? null : c.agents[c.agent[i]],
    referrer: c.referrer?.[i] ?? null,
    key: c.key[i],
  }));
}

/** Imports `text` through the string path only, or the byte path first (as the worker does). */
function importText(text: string, mode: 'string' | 'bytes', batch = 64) {
  let viaBytes = 0;
  const conv = new LineConverter('auto');
  const ids = new VisitorIds(SECRET);
  const builder = new ImportColumnsBuilder('prj', ClassificationRules.load(), ids, NOW, batch);
  const deferred = new DeferredVisitors();
  const resolver = new VisitorResolver(new VisitorIds(SECRET), 5 * batch);
  const fast = new ByteLineImporter(conv, builder, ids, deferred);
  const rows: ReturnType<typeof snapshot> = [];
  const flush = () => {
    const cols = builder.take();
    const identities = deferred.take();
    const fresh = resolver.resolve(identities, cols.visitor, cols.n);
    deferred.settle(identities.first, fresh);
    rows.push(...snapshot(cols));
  };
  const buf = Buffer.from(text, 'utf8');
  let start = 0;
  for (let nl = buf.indexOf(10); nl !== -1; nl = buf.indexOf(10, start)) {
    const end = nl > start && buf[nl - 1] === 13 ? nl - 1 : nl;
    if (mode === 'bytes' && fast.line(buf, start, end)) viaBytes++;
    else if (conv.next(buf.toString('utf8', start, end))) builder.add(conv, conv.lines);
    start = nl + 1;
    if (builder.full) flush();
  }
  flush();
  return { viaBytes, rows, lines: conv.lines, skipped: conv.skipped, rejected: builder.rejected, errors: builder.errors, crawlers: builder.crawlers };
}

describe('the direct import fast paths', () => {
  it('finds the same fields with the combined-line reader as with the regex, on ordinary and odd lines', () => {
    const reader = new CombinedReader();
    const clock = new ClfClock();
    const units = new StringUnits();
    const out = emptyRecord();
    const lines = oddLines(3000, 11);
    fc.assert(
      fc.property(fc.constantFrom(...lines), fc.nat(400), fc.constantFrom('"', ' ', '\\', ']', '[', '\t', 'é', '-', '0'), (line, at, ch) => {
        for (const l of [line, line.slice(0, at) + ch + line.slice(at), line.slice(0, at)]) {
          const viaRegex = byRegex(l, clock);
          units.set(l);
          const ok = reader.read(units, 0, l.length, out);
          expect(ok ? { ...out } : null, l).toEqual(viaRegex);
        }
      }),
      { numRuns: 3000, seed: 7 },
    );
  });

  it('imports every line of an odd log exactly as the string path does: rows, keys, visitors, skips and rejections', () => {
    const text = oddLines(6000, 3).join('\n') + '\r\n' + oddLines(2000, 4).join('\r\n') + '\n';
    const plain = importText(text, 'string');
    const fast = importText(text, 'bytes');
    expect(fast.lines).toBe(plain.lines);
    expect(fast.skipped).toEqual(plain.skipped);
    expect(fast.rejected).toBe(plain.rejected);
    expect(fast.errors).toEqual(plain.errors);
    expect(fast.crawlers).toBe(plain.crawlers);
    expect(fast.rows).toEqual(plain.rows);
    // The log exercises every branch: accepted rows, each skip reason and rejections.
    expect(plain.rows.length).toBeGreaterThan(1000);
    expect(fast.viaBytes).toBeGreaterThan(plain.lines / 2);
    expect(fast.viaBytes).toBeLessThan(plain.lines);
    for (const reason of ['unparseable', 'method', 'status', 'asset', 'empty'] as const) expect(plain.skipped[reason], reason).toBeGreaterThan(0);
    expect(plain.rejected).toBeGreaterThan(plain.errors.length);
    expect(new Set(plain.errors.map((e) => e.code)).size).toBeGreaterThan(2);
  });

  it('keys a repeated line by its occurrence, the same way on both paths', () => {
    const line = `198.51.100.9 - - [01/Jun/2025:00:00:01 +0000] "GET /docs HTTP/1.1" 200 1 "-" "${HUMAN}"`;
    const other = line.replace(':01 +0000', ':02 +0000');
    const text = [line, line, other, line, line].join('\n') + '\n';
    for (const mode of ['string', 'bytes'] as const) {
      const { rows } = importText(text, mode);
      const hex = rows.map((r) => BigInt.asUintN(64, r.key).toString(16).padStart(16, '0'));
      expect(hex, mode).toEqual([contentKeyHex(line), contentKeyHex(`${line}\n#2`), contentKeyHex(other), contentKeyHex(line), contentKeyHex(`${line}\n#2`)]);
    }
  });

  it('counts repeats exactly per second, also after its tables are emptied', () => {
    const repeats = new Repeats();
    for (let second = 0; second < 3; second++) {
      for (let k = 0; k < 5000; k++) expect(repeats.occurrence(second, k % 7, k)).toBe(1);
      // Same high half, other low half: a separate key. Same key again: its second occurrence.
      expect(repeats.occurrence(second, 3, 999_999)).toBe(1);
      expect(repeats.occurrence(second, 3, 10)).toBe(2);
      expect(repeats.occurrence(second, 3, 10)).toBe(3);
    }
  });

  it('reads IPv4 addresses exactly as net.isIPv4 accepts them', () => {
    const cases = ['1.2.3.4', '0.0.0.0', '255.255.255.254', '255.255.255.255', '01.2.3.4', '1.2.3.04', '256.0.0.1', '1.2.3', '1.2.3.4.5', '1..2.3', '', '1.2.3.4 ', 'a.b.c.d', '2001:db8::1', '1.2.3.4x'];
    fc.assert(
      fc.property(fc.oneof(fc.constantFrom(...cases), fc.ipV4(), fc.ipV4Extended(), fc.string({ maxLength: 16 })), (ip) => {
        const b = Buffer.from(ip, 'latin1');
        const n = ipv4At(b, 0, b.length);
        // -1 is "not an address" (and 255.255.255.255, which the string path then handles).
        if (n !== -1) {
          expect(isIPv4(ip), ip).toBe(true);
          expect(n >>> 0, ip).toBe(ip.split('.').reduce((a, o) => a * 256 + Number(o), 0));
        } else expect(isIPv4(ip) && ip !== '255.255.255.255', ip).toBe(false);
      }),
      { numRuns: 2000, seed: 3 },
    );
  });

  it('resolves visitor placeholders to the ids VisitorIds gives, and refuses a reference it no longer holds', () => {
    const ids = new VisitorIds(SECRET);
    const deferred = new DeferredVisitors();
    const resolver = new VisitorResolver(new VisitorIds(SECRET), 4);
    const settled: bigint[] = [];
    const a = deferred.defer('198.51.100.1', HUMAN, (id) => settled.push(id));
    const b = deferred.defer('198.51.100.2', AI, (id) => settled.push(id));
    const visitor = new BigInt64Array([a, 5n, b, a]);
    const batch = deferred.take();
    const fresh = resolver.resolve(batch, visitor, 4);
    deferred.settle(batch.first, fresh);
    const ia = ids.fromIpAndAgent('198.51.100.1', HUMAN);
    const ib = ids.fromIpAndAgent('198.51.100.2', AI);
    expect([...visitor]).toEqual([ia, 5n, ib, ia]);
    expect(settled).toEqual([ia, ib]);
    for (let i = 0; i < 5; i++) deferred.defer(`10.0.0.${i}`, HUMAN, () => {});
    resolver.resolve(deferred.take(), new BigInt64Array(0), 0);
    expect(() => resolver.resolve(deferred.take(), new BigInt64Array([a]), 1)).toThrow(/no longer known/);
  });
});

describe('DuckDbEngine.writeImport', () => {
  it('stores a column batch, drops keys seen before or twice in a batch, and counts them', async () => {
    const { DuckDbEngine } = await import('../../src/analytics/engines/duckdb/index.ts');
    const engine = await DuckDbEngine.open({ file: ':memory:', readConnections: 1 });
    try {
      const day = Date.UTC(2025, 4, 1);
      const batch = (keys: bigint[], ts: number[], distinctKeys: boolean): ImportColumns => ({
        projectId: 'prj',
        n: keys.length,
        ts: Float64Array.from(ts),
        path: Int32Array.from(keys.map((_, i) => i % 2)),
        paths: ['/a', '/b'],
        visitor: BigInt64Array.from(keys.map((_, i) => BigInt(i % 3))),
        cls: Uint8Array.from(keys.map((_, i) => (i % 4 === 3 ? 2 : 1))),
        agent: Int16Array.from(keys.map((_, i) => (i % 4 === 3 ? 0 : -1))),
        agents: ['Claude-User'],
        referrer: null,
        key: BigInt64Array.from(keys),
        distinctKeys,
      });
      const keys = [1n, 2n, -3n, 4n, 5n, 6n];
      const ts = keys.map((_, i) => day + i * 1000);
      expect(await engine.writeImport(batch(keys, ts, true))).toEqual({ duplicates: 0 });
      expect(await engine.writeImport(batch(keys, ts, true))).toEqual({ duplicates: 6 });
      // Out of order, with a key twice in the batch: the in-batch check keeps one.
      expect(await engine.writeImport(batch([9n, 8n, 9n], [day + 5000, day, day + 5000], false))).toEqual({ duplicates: 1 });
      const range = { from: day, to: day + 86_400_000 };
      const viewCounts = await engine.run(views, { projectId: 'prj', range, limit: 10, offset: 0 });
      expect(viewCounts.totals).toEqual({ human: 7, ai: 1, total: 8 });
      const visitorCounts = await engine.run(visitors, { projectId: 'prj', range, limit: 10, offset: 0 });
      expect(visitorCounts.totals).toEqual({ human: 3, ai: 1, total: 3 });
      expect(await engine.run(agents, { projectId: 'prj', range })).toEqual([{ agent: 'Claude-User', category: 'ai', visitors: 1, views: 1 }]);
    } finally {
      await engine.close();
    }
  });
});
