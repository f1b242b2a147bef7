// The log import's summary adds up: a log with every kind of line, imported directly and over HTTP,
// and each line read is in exactly one line of the summary (the views by kind, then the lines that
// are no view, by reason); a second import of the same log records nothing and says so.
import { rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { runCli } from '../helpers/process.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import type { ImportSummary } from '../../src/cli/analytics-import.ts';

const HUMAN = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const AI = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko; compatible; Perplexity-User/1.0; +https://perplexity.ai/perplexity-user)';
const CRAWLER = 'Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)';
const line = (s: number, request: string, status: number, ua: string) => `198.51.100.7 - - [01/May/2026:10:00:${String(s).padStart(2, '0')} +0000] "${request}" ${status} 99 "-" "${ua}"`;

/** One or more lines of each kind, and the summary line each must land in. */
const LOG = [
  line(1, 'GET /docs/intro HTTP/1.1', 200, HUMAN),
  line(2, 'GET /docs/guide HTTP/1.1', 200, AI),
  line(3, 'HEAD /docs/guide HTTP/1.1', 200, HUMAN),
  line(4, 'GET /docs/intro HTTP/1.1', 200, CRAWLER),
  line(5, 'GET /docs/missing HTTP/1.1', 404, HUMAN),
  line(6, 'GET /docs/gone HTTP/1.1', 410, AI),
  line(7, 'GET /docs/missing HTTP/1.1', 404, CRAWLER),
  line(8, 'GET /assets/site.css HTTP/1.1', 200, HUMAN),
  line(9, 'GET /docs/broken HTTP/1.1', 500, HUMAN),
  line(10, 'POST /docs/intro HTTP/1.1', 200, HUMAN),
  'this is not a log line',
  '',
  '{"time":"yesterday","ip":"198.51.100.7","method":"GET","path":"/docs/x","status":200,"userAgent":"Mozilla/5.0"}',
].join('\n') + '\n';

const EXPECTED_LINES = [
  '               3  page views by people and AI agents',
  '               2  not-found views (404, 410)',
  '               1  view by crawlers and bots (neither human nor AI)',
  '               1  not-found view by a crawler or bot (not kept)',
  '               1  asset (not a document)',
  '               1  unsuccessful status',
  '               1  not GET/HEAD',
  '               1  unparseable',
  '               1  empty line',
  '               1  rejected',
];

/** The parts of the summary that are lines read: each line read is in exactly one. */
function parts(s: ImportSummary): number {
  const { duplicate: _recordedOrNot, ...skips } = s.skipped;
  return s.kinds.pageViews + s.kinds.notFound + s.crawlers + s.kinds.crawlerNotFound + Object.values(skips).reduce((a, b) => a + b, 0);
}

let server: TestServer;
let databases: BackendDatabases;
let dir: string;
let file: string;
beforeAll(async () => {
  dir = tempDir();
  databases = await backendDatabases();
  server = await startTestServer({ databases, dataDir: path.join(dir, 'data') });
  file = path.join(dir, 'access.log');
  writeFileSync(file, LOG);
});
afterAll(async () => {
  await server?.close();
  await databases?.drop();
  rmSync(dir, { recursive: true, force: true });
});

describe('the import summary', () => {
  it.each(['over HTTP', 'directly'])('adds up to the lines read (%s), and a second import records nothing', { timeout: 120_000 }, async (how) => {
    const project = await server.createProject({ name: how });
    const connection = how === 'over HTTP' ? ['--url', server.url, '--key', await server.createKey(project)] : [];
    const run = async (json: boolean) => {
      const r = await runCli(['analytics', 'import', '--project', project, '--no-progress', ...connection, ...(json ? ['--json'] : []), file], server.env);
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    // Directly, the analytics store must not be held by a server.
    if (how === 'directly') await server.close();
    const first = JSON.parse(await run(true)) as ImportSummary;
    expect(first.linesRead).toBe(LOG.split('\n').length - 1);
    expect(parts(first)).toBe(first.linesRead);
    expect(first.kinds).toEqual({ pageViews: 3, notFound: 2, crawlerNotFound: 1 });
    expect(first.viewsRecorded).toBe(6);
    const text = (await run(false)).split('\n');
    expect(text[0]).toBe('Read:      1 file, 13 lines');
    expect(text.slice(1, 1 + EXPECTED_LINES.length)).toEqual(EXPECTED_LINES);
    expect(text[1 + EXPECTED_LINES.length]).toBe('Recorded:  0 views; 6 already imported, not stored again');
    expect(EXPECTED_LINES.reduce((sum, l) => sum + Number(l.trim().split(' ')[0]), 0)).toBe(13);
  });
});
