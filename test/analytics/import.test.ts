// Log import through the CLI: combined and JSON lines, stdin and .gz, filters and skip reasons,
// idempotency (importing twice changes no count), over HTTP and directly into the DuckDB file.
import { spawn } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { ROOT, runCli } from '../helpers/process.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import { clf, ON_CLICKHOUSE, reference, rng, type RefEvent } from './helpers.ts';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)';
const CRAWLER = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';

/** A combined log with every kind of line, and the reference of what must be counted. */
function makeLog(n: number) {
  const r = rng(7);
  const base = Date.UTC(2025, 4, 1);
  const lines: string[] = [];
  const ref: RefEvent[] = [];
  /** Lines that answered 404 for a page, by humans and AI: not-found views, counted in no other report. */
  const notFound: RefEvent[] = [];
  const skipped = { asset: 0, status: 0, method: 0, unparseable: 0, empty: 0 };
  let crawlers = 0;
  for (let i = 0; i < n; i++) {
    const ts = base + Math.floor(r() * 3 * 86_400_000 / 1000) * 1000;
    const ip = `198.51.100.${Math.floor(r() * 60)}`;
    const x = r();
    const ua = x < 0.25 ? AI : x < 0.32 ? CRAWLER : HUMAN;
    const y = r();
    let pathRaw = ['/docs', '/docs/', '/docs/install?x=1', '/guide/café', '/api/ref.md', '/llms.txt', '/'][Math.floor(r() * 7)];
    let method = 'GET';
    let status = 200;
    if (y < 0.1) pathRaw = ['/assets/app.js', '/style.css', '/img/logo.svg', '/favicon.ico', '/robots.txt'][Math.floor(r() * 5)];
    else if (y < 0.15) status = [404, 500, 301][Math.floor(r() * 3)];
    else if (y < 0.18) method = 'POST';
    else if (y < 0.2) {
      lines.push('this is not a log line');
      skipped.unparseable++;
      continue;
    } else if (y < 0.22) method = 'HEAD';
    else if (y < 0.24) status = 304;
    lines.push(`${ip} - - [${clf(ts)}] "${method} ${pathRaw} HTTP/1.1" ${status} 1234 "-" "${ua}"`);
    if (y < 0.1) skipped.asset++;
    else if (y < 0.15 && status === 404) {
      const p = pathRaw.replace(/\?.*$/, '');
      if (ua !== CRAWLER) notFound.push({ ts, path: p, visitor: `${ip}|${ua}`, cls: ua === AI || /\.md$|llms\.txt$/.test(p) ? 'ai' : 'human' });
    } else if (y < 0.15) skipped.status++;
    else if (y < 0.18) skipped.method++;
    else {
      const p = pathRaw.replace(/\?.*$/, '');
      const cls = ua === CRAWLER ? 'none' : ua === AI || /\.md$|llms\.txt$/.test(p) ? 'ai' : 'human';
      if (cls === 'none') crawlers++;
      ref.push({ ts, path: p, visitor: `${ip}|${ua}`, cls });
    }
  }
  // Identical lines in the same second are separate views.
  const dup = `198.51.100.200 - - [${clf(base)}] "GET /docs HTTP/1.1" 200 10 "-" "${HUMAN}"`;
  lines.push(dup, dup, '');
  skipped.empty++;
  ref.push({ ts: base, path: '/docs', visitor: 'dup', cls: 'human' }, { ts: base, path: '/docs', visitor: 'dup', cls: 'human' });
  return { text: lines.join('\n') + '\n', ref, notFound, skipped, crawlers, lines: lines.length };
}

describe('analytics import over HTTP', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  const dir = tempDir('folio-import-');
  const log = makeLog(4000);
  const file = path.join(dir, 'access.log');

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId, 'write');
    writeFileSync(file, log.text);
    writeFileSync(file + '.gz', gzipSync(log.text));
  });
  afterAll(async () => {
    await server?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function views() {
    const res = await server.api('GET', `/v1/analytics/${projectId}/views?limit=250`, { key });
    return res.body;
  }

  it('imports a combined log, skips by reason, and counts exactly', async () => {
    const res = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, '--json', file], {});
    expect(res.stderr).toBe('');
    expect(res.code).toBe(0);
    const s = JSON.parse(res.stdout);
    expect(s.linesRead).toBe(log.lines);
    expect(s.skipped).toEqual({ ...log.skipped, duplicate: 0, rejected: 0 });
    // Not-found views are recorded too (apart from page views).
    expect(s.viewsRecorded).toBe(log.ref.length + log.notFound.length);
    expect(s.crawlers).toBe(log.crawlers);
    const expected = reference(log.ref, null, null, 'views');
    const got = await views();
    expect(got.totals).toEqual(expected.totals);
    expect(got.views).toEqual(expected.rows);
    const vis = await server.api('GET', `/v1/analytics/${projectId}/visitors?limit=250`, { key });
    const expectedVisitors = reference(log.ref, null, null, 'visitors');
    expect(vis.body.totals).toEqual(expectedVisitors.totals);
    expect(vis.body.visitors).toEqual(expectedVisitors.rows);
    const missing = await server.api('GET', `/v1/analytics/${projectId}/not-found?limit=250`, { key });
    const expectedMissing = reference(log.notFound, null, null, 'visitors');
    // Log lines name no visitorId: each visitor is the server-derived identity of its address and agent.
    expect(missing.body.totals).toEqual({ ...expectedMissing.totals, derivedVisitors: expectedMissing.totals.total, views: log.notFound.length });
    expect(missing.body.paths.map((p: { path: string; human: number; ai: number; total: number }) => ({ path: p.path, human: p.human, ai: p.ai, total: p.total }))).toEqual(expectedMissing.rows);
  });

  it('changes no count when the same file is imported again, plain, gzipped or from stdin', async () => {
    const before = await views();
    const again = await runCli(['analytics', 'import', '--project', projectId, '--json', file + '.gz'], { FOLIO_URL: server.url, FOLIO_API_KEY: key });
    expect(again.code).toBe(0);
    const s = JSON.parse(again.stdout);
    expect(s.viewsRecorded).toBe(0);
    expect(s.skipped.duplicate).toBe(log.ref.length + log.notFound.length);
    // The project from FOLIO_PROJECT, like every command that takes --project.
    const stdin = await runCli(['analytics', 'import', '--format', 'combined', '--json', '-'], { FOLIO_URL: server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId }, log.text);
    expect(stdin.code, stdin.stderr).toBe(0);
    expect(JSON.parse(stdin.stdout).viewsRecorded).toBe(0);
    await server.services.analytics.compact();
    const third = await runCli(['analytics', 'import', '--project', projectId, '--json', file], { FOLIO_URL: server.url, FOLIO_API_KEY: key });
    expect(JSON.parse(third.stdout).viewsRecorded).toBe(0);
    expect(await views()).toEqual(before);
  });

  it('imports JSON lines with a field mapping and prints a readable summary', async () => {
    const lines = [
      { ts: '2025-05-02T10:00:00Z', client: { ip: '203.0.113.1' }, request: 'GET /json/a HTTP/1.1', status: 200, ua: HUMAN },
      { ts: '2025-05-02T10:00:01Z', client: { ip: '203.0.113.2' }, request: 'GET /json/a?q=1 HTTP/2.0', status: 200, ua: AI },
      { ts: '2025-05-02T10:00:02Z', client: { ip: '203.0.113.2' }, request: 'GET /json/a.png HTTP/2.0', status: 200, ua: AI },
      { ts: 1746180003, client: { ip: '203.0.113.3' }, request: 'DELETE /json/a HTTP/1.1', status: 200, ua: HUMAN },
    ];
    const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n{broken\n';
    const res = await runCli(
      ['analytics', 'import', '--project', projectId, '--format', 'json', '--map', 'ip=client.ip', '--map', 'userAgent=ua', '-'],
      { FOLIO_URL: server.url, FOLIO_API_KEY: key },
      text,
    );
    expect(res.code).toBe(0);
    expect(res.stdout).toMatch(/^Read: {6}1 file, 5 lines$/m);
    // No crawler among them: the summary does not mention crawlers at all.
    expect(res.stdout).toMatch(/^ +2 {2}page views by people and AI agents$/m);
    expect(res.stdout).toMatch(/^Recorded: {2}2 views$/m);
    expect(res.stdout).not.toContain('crawler');
    expect(res.stdout).toMatch(/^ +1 {2}asset \(not a document\)$/m);
    expect(res.stdout).toMatch(/^ +1 {2}not GET\/HEAD$/m);
    expect(res.stdout).toMatch(/^ +1 {2}unparseable$/m);
    const v = await server.api('GET', `/v1/analytics/${projectId}/visitors?dateFrom=2025-05-02T10:00:00Z&dateTo=2025-05-02T11:00:00Z`, { key });
    expect(v.body.visitors.find((r: { path: string }) => r.path === '/json/a')).toEqual({ path: '/json/a', human: 1, ai: 1, total: 2 });
  });

  it('draws a progress bar on a terminal, and none with --no-progress', async () => {
    // util-linux `script` runs the command on a pseudo-terminal, as a user's shell would.
    const onTerminal = (extra: string[]) =>
      new Promise<string>((resolve, reject) => {
        const args = ['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, ...extra, file];
        const child = spawn('script', ['-qec', [process.execPath, path.join(ROOT, 'bin/folio.mjs'), ...args].join(' '), '/dev/null'], {
          env: { PATH: process.env.PATH ?? '', TERM: 'xterm' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        child.stdout.on('data', (d: Buffer) => (out += d.toString()));
        child.on('error', reject);
        child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`exit ${code}: ${out}`))));
      });
    const drawn = await onTerminal([]);
    expect(drawn).toContain(`importing ${file} [`);
    expect(drawn).toContain(`] 100% | ${log.lines} lines | `);
    expect(drawn).toContain(`Read:      1 file, ${log.lines.toLocaleString('en-US')} lines`);
    const plain = await onTerminal(['--no-progress']);
    expect(plain).not.toContain('importing');
    expect(plain).toMatch(/^Read: {6}1 file, /m);
  });

  it('fails clearly on a bad key, a missing file and a bad --map', async () => {
    const bad = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', 'folio_nope', file], {});
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/refused the import \(401 malformed_api_key\): The API key is malformed/);
    const missing = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, path.join(dir, 'nope.log')], {});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/File not found/);
    const map = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, '--map', 'colour=x', file], {});
    expect(map.code).toBe(1);
    expect(map.stderr).toMatch(/field map is NAME=FIELD with NAME one of time, ip/);
  });

  it('rejects bad NDJSON records on the bulk endpoint one by one', async () => {
    const body = [
      JSON.stringify({ t: Date.UTC(2025, 4, 3), p: '/bulk', ua: HUMAN, ip: '203.0.113.9', k: '00000000000000aa' }),
      '{oops',
      JSON.stringify({ t: 'x', p: '/bulk', ua: HUMAN, ip: '203.0.113.9' }),
      JSON.stringify({ t: Date.UTC(2025, 4, 3), p: 'bulk', ua: HUMAN, ip: '203.0.113.9' }),
      JSON.stringify({ t: Date.UTC(2025, 4, 3), p: '/bulk', ua: HUMAN }),
      JSON.stringify({ t: Date.UTC(2025, 4, 3), p: '/bulk', ua: HUMAN, ip: '203.0.113.9', k: 'XYZ' }),
    ].join('\n');
    const res = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body, headers: { 'content-type': 'application/x-ndjson' } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ received: 6, recorded: 1, duplicates: 0, rejected: 5 });
    expect(res.body.errors.map((e: { line: number; code: string }) => [e.line, e.code])).toEqual([
      [2, 'invalid_json'],
      [3, 'invalid_timestamp'],
      [4, 'invalid_path'],
      [5, 'missing_identity'],
      [6, 'invalid_key'],
    ]);
    const json = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body: { events: [] } });
    expect(json.status).toBe(415);
    const long = [JSON.stringify({ t: Date.UTC(2025, 4, 4), p: '/before-long', ua: HUMAN, ip: '203.0.113.9' }), JSON.stringify({ t: 1, p: '/' + 'x'.repeat(20_000), ua: HUMAN, ip: '203.0.113.9' })].join('\n');
    const tooLong = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body: long, headers: { 'content-type': 'application/x-ndjson' } });
    expect(tooLong.status).toBe(413);
    expect(tooLong.body.code).toBe('line_too_long');
    const after = await server.api('GET', `/v1/analytics/${projectId}/views?dateFrom=2025-05-04&dateTo=2025-05-05`, { key });
    expect(after.body.views).toEqual([{ path: '/before-long', human: 1, ai: 0, total: 1 }]);
  });
});

describe('analytics import directly into the analytics store (no --url)', () => {
  const dataDir = tempDir('folio-direct-');
  // The CLI and the server share this leg's backend: SQLite + the DuckDB file, or PostgreSQL + ClickHouse.
  let databases: BackendDatabases;
  let env: Record<string, string>;
  let projectId: string;
  let server: TestServer | undefined;
  const log = makeLog(500);
  const file = path.join(dataDir, 'a.log');

  beforeAll(async () => {
    databases = await backendDatabases();
    env = { ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'silent' };
    const created = await runCli(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs', '--json'], env);
    expect(created.code, created.stderr).toBe(0);
    projectId = JSON.parse(created.stdout).id as string;
    writeFileSync(file, log.text);
  });
  afterAll(async () => {
    await server?.close();
    await databases?.drop();
    rmSync(dataDir, { recursive: true, force: true });
  });

  async function views(): Promise<any> {
    const key = await server!.createKey(projectId, 'read');
    return (await server!.api('GET', `/v1/analytics/${projectId}/views?limit=250`, { key })).body;
  }

  it(`writes ${ON_CLICKHOUSE ? 'ClickHouse (CLICKHOUSE_URL)' : 'the DuckDB file'} when no server runs, twice without double counting, and a server then reads it`, async () => {
    const first = await runCli(['analytics', 'import', '--project', projectId, '--json', file], env);
    expect(first.code, first.stderr).toBe(0);
    expect(JSON.parse(first.stdout).viewsRecorded).toBe(log.ref.length + log.notFound.length);
    const second = await runCli(['analytics', 'import', '--project', projectId, '--json', file], env);
    expect(second.code, second.stderr).toBe(0);
    expect(JSON.parse(second.stdout)).toMatchObject({ viewsRecorded: 0, skipped: { duplicate: log.ref.length + log.notFound.length } });
    // Gzipped, from stdin, and in small batches (visitor ids settled across batches): still nothing new.
    writeFileSync(file + '.gz', gzipSync(log.text));
    const gz = await runCli(['analytics', 'import', '--project', projectId, '--json', '--batch', '7', file + '.gz'], env);
    expect(gz.code, gz.stderr).toBe(0);
    expect(JSON.parse(gz.stdout)).toMatchObject({ linesRead: log.lines, viewsRecorded: 0, skipped: { ...log.skipped, duplicate: log.ref.length + log.notFound.length } });
    const stdin = await runCli(['analytics', 'import', '--project', projectId, '--json', '-'], env, log.text);
    expect(stdin.code, stdin.stderr).toBe(0);
    expect(JSON.parse(stdin.stdout)).toMatchObject({ viewsRecorded: 0, skipped: { duplicate: log.ref.length + log.notFound.length } });
    writeFileSync(file + '.bad.gz', 'not gzip at all');
    const badGz = await runCli(['analytics', 'import', '--project', projectId, file + '.bad.gz'], env);
    expect(badGz.code).toBe(1);
    expect(badGz.stderr).toMatch(/^folio: .*\.bad\.gz is not a valid gzip file\.$/m);
    const unknown = await runCli(['analytics', 'import', '--project', 'prj_nope', file], env);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toMatch(/Project "prj_nope" does not exist/);

    server = await startTestServer({ workers: 0, dataDir, databases, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    const got = await views();
    const expected = reference(log.ref, null, null, 'views');
    expect(got.totals).toEqual(expected.totals);
    expect(got.views).toEqual(expected.rows);
    const missing = (await server.api('GET', `/v1/analytics/${projectId}/not-found?limit=250`, { key: await server.createKey(projectId, 'read') })).body;
    const missingRef = reference(log.notFound, null, null).totals;
    expect(missing.totals).toEqual({ ...missingRef, derivedVisitors: missingRef.total, views: log.notFound.length });

    // The server's importer (string path, over HTTP) keys lines and visitors as the direct import did:
    // the same file again is all duplicates, and new lines of the same visitors are not new visitors.
    const key = await server.createKey(projectId, 'write');
    const again = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, '--json', file], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ viewsRecorded: 0, skipped: { duplicate: log.ref.length + log.notFound.length } });
    const later = log.text.replaceAll('/2025:', '/2026:');
    const laterFile = path.join(dataDir, 'later.log');
    writeFileSync(laterFile, later);
    const more = await runCli(['analytics', 'import', '--project', projectId, '--url', server.url, '--key', key, '--json', laterFile], env);
    expect(more.code, more.stderr).toBe(0);
    expect(JSON.parse(more.stdout).viewsRecorded).toBe(log.ref.length + log.notFound.length);
    const readKey = await server.createKey(projectId, 'read');
    const visitors = (await server.api('GET', `/v1/analytics/${projectId}/visitors?limit=250`, { key: readKey })).body;
    const shifted = log.ref.map((e) => ({ ...e, ts: e.ts + 365 * 86_400_000 }));
    expect(visitors.totals).toEqual(reference([...log.ref, ...shifted], null, null).totals);
  });

  it.skipIf(ON_CLICKHOUSE)('says so clearly while a server holds the DuckDB file (DuckDB only: ClickHouse has no file lock)', async () => {
    expect(server).toBeDefined();
    const locked = await runCli(['analytics', 'import', '--project', projectId, file], env);
    expect(locked.code).toBe(1);
    expect(locked.stderr).toMatch(/locked by another process.*--url/);
  });

  it.skipIf(!ON_CLICKHOUSE)('imports into ClickHouse while a server runs, exactly once (ClickHouse only: a running server locks the DuckDB file)', async () => {
    expect(server).toBeDefined();
    const before = await views();
    const again = await runCli(['analytics', 'import', '--project', projectId, '--json', file], env);
    expect(again.code, again.stderr).toBe(0);
    expect(JSON.parse(again.stdout)).toMatchObject({ viewsRecorded: 0, skipped: { duplicate: log.ref.length + log.notFound.length } });
    expect(await views()).toEqual(before);
    const extra = `203.0.113.77 - - [${clf(Date.UTC(2025, 4, 2, 9))}] "GET /direct/new HTTP/1.1" 200 10 "-" "${HUMAN}"\n`;
    const more = await runCli(['analytics', 'import', '--project', projectId, '--format', 'combined', '--json', '-'], env, extra);
    expect(more.code, more.stderr).toBe(0);
    expect(JSON.parse(more.stdout).viewsRecorded).toBe(1);
    const after = await views();
    expect(after.totals).toEqual({ ...before.totals, human: before.totals.human + 1, total: before.totals.total + 1 });
    expect(after.views).toContainEqual({ path: '/direct/new', human: 1, ai: 0, total: 1 });
  });

  it.skipIf(!ON_CLICKHOUSE)('fails clearly when ClickHouse cannot be reached (ClickHouse only: CLICKHOUSE_URL)', async () => {
    const res = await runCli(['analytics', 'import', '--project', projectId, file], { ...env, CLICKHOUSE_URL: 'http://127.0.0.1:9/folio_nowhere' });
    expect(res.code).toBe(1);
    expect(res.stderr).toMatch(/^folio: ClickHouse at http:\/\/127\.0\.0\.1:9 \(database folio_nowhere\) is not usable/m);
  });
});
