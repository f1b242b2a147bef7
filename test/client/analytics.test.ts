// Analytics through the client and the CLI: ingest, visitors, views, every page, CSV/JSON/table output.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toCsv } from '../../src/client/csv.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FolioClient, FolioError, type AnalyticsEvent, type PathCounts, type VisitorsPage } from '../../src/client/index.ts';
import { runCli } from './fixtures/run-cli.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

let server: TestServer;
let client: FolioClient;
let cliEnv: Record<string, string>;

// 12 paths; path i has i+1 human visitors and one AI visitor on even i. Day 1 is 2025-03-10,
// plus one human visitor of /p00 on 2025-03-12 (outside --to 2025-03-11).
const PATHS = Array.from({ length: 12 }, (_, i) => `/p${String(i).padStart(2, '0')}`);
function events(): AnalyticsEvent[] {
  const out: AnalyticsEvent[] = [];
  PATHS.forEach((path, i) => {
    for (let v = 0; v <= i; v++) out.push({ timestamp: '2025-03-10T12:00:00Z', path, userAgent: HUMAN_UA, visitorId: `human-${v}` });
    if (i % 2 === 0) out.push({ timestamp: new Date('2025-03-10T13:00:00Z'), path, userAgent: AI_UA, visitorId: `ai-${i}` });
  });
  out.push({ timestamp: '2025-03-12T09:00:00Z', path: '/p00', userAgent: HUMAN_UA, visitorId: 'late-visitor' });
  out.push({ timestamp: '2025-03-12T09:00:00Z', path: '/p,"quoted"', userAgent: HUMAN_UA, visitorId: 'late-visitor' });
  // Not found: counted in no other report (the numbers above stay).
  out[0].referrer = 'https://chatgpt.com/c/2?x=1'; // human-0 on /p00 came from an AI answer
  out.push({ timestamp: '2025-03-10T14:00:00Z', path: '/gone', userAgent: HUMAN_UA, visitorId: 'human-0', referrer: 'https://chatgpt.com/c/1', status: 404 });
  out.push({ timestamp: '2025-03-10T15:00:00Z', path: '/gone', userAgent: AI_UA, visitorId: 'ai-gone', status: 410 });
  out.push({ timestamp: '2025-03-10T16:00:00Z', path: '/old', userAgent: HUMAN_UA, visitorId: 'human-1', status: 404 });
  return out;
}

beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
  const projectId = await server.createProject();
  const key = await server.createKey(projectId, 'write');
  client = new FolioClient({ baseUrl: server.url, apiKey: key, projectId });
  cliEnv = { FOLIO_URL: server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId };
  const sent = events();
  // batchSize 25 sends several requests; a bad event is reported with its index in the whole input.
  const result = await client.ingestEvents([...sent, { path: '', userAgent: HUMAN_UA }], { batchSize: 25 });
  expect(result.accepted).toBe(sent.length);
  expect(result.rejected).toHaveLength(1);
  expect(result.rejected[0].index).toBe(sent.length);
  expect(result.rejected[0].code).toBeTruthy();
});

afterAll(async () => {
  await server?.close();
});

const RANGE = { dateFrom: '2025-03-10', dateTo: '2025-03-11' };

describe('client analytics', () => {
  it('gets one page of visitors and of views, ordered by total', async () => {
    const page = await client.visitors({ ...RANGE, limit: 5 });
    expect(page.totals).toEqual({ human: 12, ai: 6, total: 18 });
    expect(page.visitors.map((r) => r.path)).toEqual(['/p10', '/p11', '/p08', '/p09', '/p06']);
    expect(page.visitors[0]).toEqual({ path: '/p10', human: 11, ai: 1, total: 12 });
    expect(page.hasMore).toBe(true);

    const views = await client.views({ dateFrom: new Date('2025-03-10T00:00:00Z'), dateTo: '2025-03-11', limit: 250 });
    expect(views.totals).toEqual({ human: 78, ai: 6, total: 84 });
    expect(views.views).toHaveLength(12);
    expect(views.hasMore).toBe(false);
  });

  it('iterates every page with allVisitors, from an offset', async () => {
    const pages: VisitorsPage[] = [];
    for await (const page of client.allVisitors({ ...RANGE, limit: 5 })) pages.push(page);
    expect(pages.map((p) => p.visitors.length)).toEqual([5, 5, 2]);
    expect(pages.map((p) => p.hasMore)).toEqual([true, true, false]);
    const rows: PathCounts[] = pages.flatMap((p) => p.visitors);
    expect(new Set(rows.map((r) => r.path))).toEqual(new Set(PATHS));

    const fromOffset: PathCounts[] = [];
    for await (const page of client.allVisitors({ ...RANGE, limit: 4, offset: 8 })) fromOffset.push(...page.visitors);
    expect(fromOffset).toEqual(rows.slice(8));

    let viewRows = 0;
    for await (const page of client.allViews({ limit: 250 })) viewRows += page.views.length;
    expect(viewRows).toBe(13); // every day: the 12 paths and the quoted one
  });

  it('reports a bad date range as a FolioError with details', async () => {
    const err = (await client.visitors({ dateFrom: 'not a date' }).catch((e: unknown) => e)) as FolioError;
    expect(err).toBeInstanceOf(FolioError);
    expect(err.status).toBe(400);
    await expect(client.visitors({ limit: 500 })).rejects.toMatchObject({ status: 400 });
  });
});

describe('CSV (one writer for the CLI and the dashboard)', () => {
  it('quotes where needed and keeps a spreadsheet from running a visitor-sent path as a formula', () => {
    const rows: (string | number)[][] = [['/a', 1], ['/b,c', 2], ['/"q"', 3], ['=HYPERLINK("x")', 4], ['+1', 5], ['@SUM(1)', 6]];
    expect(toCsv(['path', 'n'], rows)).toBe(`path,n\r\n/a,1\r\n"/b,c",2\r\n"/""q""",3\r\n"'=HYPERLINK(""x"")",4\r\n'+1,5\r\n'@SUM(1),6\r\n`);
  });
});

describe('folio analytics visitors|views', () => {
  it('writes CSV with a header and every row, quoting where needed', async () => {
    const run = await runCli(['analytics', 'visitors', '--format', 'csv', '--all', '--limit', '5'], cliEnv);
    expect(run.code).toBe(0);
    const lines = run.stdout.split('\r\n');
    expect(lines[0]).toBe('path,human,ai,total');
    expect(lines.at(-1)).toBe('');
    expect(lines).toHaveLength(1 + 13 + 1);
    expect(lines).toContain('/p10,11,1,12');
    expect(lines).toContain('/p00,2,1,3'); // one human on day 1 and one on day 3
    expect(lines).toContain('"/p,""quoted""",1,0,1');

    const ranged = await runCli(['analytics', 'views', '--format', 'csv', '--from', '2025-03-10', '--to', '2025-03-11', '--limit', '2'], cliEnv);
    expect(ranged.stdout).toBe('path,human,ai,total\r\n/p10,11,1,12\r\n/p11,12,0,12\r\n');
    expect(ranged.stderr).toContain('More rows: --offset 2 --limit 2, or --all');
  });

  it('prints a table with totals, and JSON of one page or of all pages', async () => {
    const table = await runCli(['analytics', 'visitors', '--from', '2025-03-10', '--to', '2025-03-11'], cliEnv);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('Unique visitors: 18 total (12 human, 6 AI)');
    expect(table.stdout).toMatch(/^PATH\s+HUMAN\s+AI\s+TOTAL$/m);
    expect(table.stdout).toMatch(/^\/p10\s+11\s+1\s+12$/m);

    const page = JSON.parse((await runCli(['analytics', 'visitors', '--json', '--limit', '3', '--offset', '3'], cliEnv)).stdout);
    expect(page.visitors).toHaveLength(3);
    expect(page.hasMore).toBe(true);

    const all = JSON.parse((await runCli(['analytics', 'views', '--format', 'json', '--all', '--to', '2025-03-11'], cliEnv)).stdout);
    expect(all.views).toHaveLength(12);
    expect(all.totals).toEqual({ human: 78, ai: 6, total: 84 });
    expect(all.hasMore).toBe(false);
  });

  it('reads pages not found through the client and the CLI (table, JSON, CSV)', async () => {
    const page = await client.notFound(RANGE);
    // Sent without addresses: no server-derived identity.
    expect(page.totals).toEqual({ human: 2, ai: 1, total: 3, derivedVisitors: 0, views: 3 });
    expect(page.paths.map((p) => [p.path, p.human, p.ai, p.total, p.views])).toEqual([
      ['/gone', 1, 1, 2, 2],
      ['/old', 1, 0, 1, 1],
    ]);
    expect(page.paths[0].referrers).toEqual([
      { host: 'chatgpt.com', visitors: 1 },
      { host: null, visitors: 1 },
    ]);
    const pages = [];
    for await (const p of client.allNotFound({ ...RANGE, limit: 1 })) pages.push(p.paths.map((r) => r.path));
    expect(pages).toEqual([['/gone'], ['/old']]);
    const table = await runCli(['analytics', 'not-found', '--from', '2025-03-10', '--to', '2025-03-11'], cliEnv);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('Visitors who hit a missing page: 3 total (2 human, 1 AI), 3 views');
    expect(table.stdout).toMatch(/\/gone\s+1\s+1\s+2\s+2\s+2025-03-10\s+chatgpt\.com 1, \(none\) 1/);
    const json = JSON.parse((await runCli(['analytics', 'not-found', '--json', '--all', '--limit', '1', '--to', '2025-03-11'], cliEnv)).stdout);
    expect(json.paths.map((p: { path: string }) => p.path)).toEqual(['/gone', '/old']);
    const csv = (await runCli(['analytics', 'not-found', '--format', 'csv', '--to', '2025-03-11'], cliEnv)).stdout.split('\r\n');
    expect(csv[0]).toBe('path,human,ai,total,views,first_seen,last_seen,referrers');
    expect(csv[1]).toBe('/gone,1,1,2,2,2025-03-10T14:00:00.000Z,2025-03-10T15:00:00.000Z,"chatgpt.com 1, (none) 1"');
  });

  it('reads referrers through the client and the CLI', async () => {
    const page = await client.referrers(RANGE);
    expect(page.referrers).toEqual([{ host: 'chatgpt.com', source: 'ai_assistant', human: 1, ai: 0, total: 1 }]);
    expect(page.classes.find((c) => c.source === 'ai_assistant')).toEqual({ source: 'ai_assistant', human: 1, ai: 0, total: 1 });
    const table = await runCli(['analytics', 'referrers', '--from', '2025-03-10', '--to', '2025-03-11'], cliEnv);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain('ai_assistant: 1 visitors (1 human, 0 AI)');
    expect(table.stdout).toMatch(/chatgpt\.com\s+ai_assistant\s+1\s+0\s+1/);
    const csv = (await runCli(['analytics', 'referrers', '--format', 'csv', '--from', '2025-03-10', '--to', '2025-03-11'], cliEnv)).stdout.split('\r\n');
    expect(csv.slice(0, 2)).toEqual(['host,source,human,ai,total', 'chatgpt.com,ai_assistant,1,0,1']);
  });

  it('reports a server-side validation error on stderr', async () => {
    const run = await runCli(['analytics', 'visitors', '--from', 'yesterday-ish'], cliEnv);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^folio: .+\(400 \w+\)/);
  });
});
