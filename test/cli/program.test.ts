// The `folio` program as a whole: every command group is listed and its commands are there when it
// runs (groups load on demand), and the output module every command prints with.
import { describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { ROOT, runCli } from '../helpers/process.ts';
import { count, csv, fields, table } from '../../src/cli/output.ts';
import { summaryText } from '../../src/cli/analytics.ts';
import type { ImportSummary } from '../../src/cli/analytics-import.ts';

describe('folio', () => {
  it('lists every command and group in its help', async () => {
    const r = await runCli(['--help'], {});
    expect(r.code).toBe(0);
    const names = [...r.stdout.split('Commands:')[1].matchAll(/^ {2}(\w+)/gm)].map((m) => m[1]);
    expect(names).toEqual(['serve', 'worker', 'migrate', 'healthcheck', 'project', 'key', 'user', 'jobs', 'analytics', 'suggestions', 'help']);
  });

  it('prints its version, the one of package.json', async () => {
    const r = await runCli(['--version'], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync(`${ROOT}/package.json`, 'utf8')).version);
  });

  it.each([
    [['jobs', '--help'], ['create', 'get', 'list', 'message', 'archive', 'wait', 'events', 'usage', 'messages', 'impact']],
    [['help', 'project'], ['create', 'update', 'list']],
    [['key', '--help'], ['create', 'list', 'revoke']],
    [['user', '--help'], ['create', 'set-password', 'list']],
    [['analytics', '--help'], ['import', 'visitors', 'views', 'not-found', 'referrers', 'ai-companies']],
  ])('loads a group when it runs: %j', async (args, commands) => {
    const r = await runCli(args, {});
    expect(r.code, r.stderr).toBe(0);
    const listed = [...r.stdout.split('Commands:')[1].matchAll(/^ {2}([\w-]+)/gm)].map((m) => m[1]);
    expect(listed).toEqual([...commands, 'help']);
  });

  it('says what is wrong with a command line, with exit code 1 and no stack trace', async () => {
    const unknown = await runCli(['jobz'], {});
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain("error: unknown command 'jobz'");
    expect(unknown.stderr).toContain('(Did you mean jobs?)');
    const missing = await runCli(['key', 'create', '--all-projects', '--projects', 'a'], {});
    expect(missing.code).toBe(1);
    expect(missing.stderr).toBe('folio: Say what the key covers: exactly one of --project <id>, --all-projects or --projects <ids>.\n');
    // A missing argument: commander's line and a pointer to the help, not the whole help.
    const argument = await runCli(['jobs', 'get'], {});
    expect(argument.code).toBe(1);
    expect(argument.stderr).toBe("error: missing required argument 'jobId'\n(add --help for usage)\n");
    const bool = await runCli(['project', 'update', 'prj_x', '--draft-prs', 'maybe'], {});
    expect(bool.code).toBe(1);
    expect(bool.stderr).toBe('folio: Expected true or false, got "maybe".\n');
  });
});

describe('output', () => {
  it('aligns table columns, numbers to the right, and cleans control characters from cells', () => {
    const out = table(
      [
        { PATH: '/a', TOTAL: '7' },
        { PATH: '/b\u001b]0;title\u0007', TOTAL: '1234' },
      ],
      ['TOTAL'],
    );
    expect(out.split('\n')).toEqual(['PATH          TOTAL', '/a                7', '/b ]0;title    1234']);
    expect(table([])).toBe('(none)');
  });

  it('prints one record as key and value lines', () => {
    expect(fields([['ID', 'job_1'], ['STATUS', 'done\r\n'], ['', 'more']])).toBe('ID      job_1\nSTATUS  done  \n        more');
  });

  it('writes RFC 4180 CSV', () => {
    expect(csv(['path', 'n'], [['/a,b', 1], ['say "hi"', 2], ['line\nbreak', 3]])).toBe('path,n\r\n"/a,b",1\r\n"say ""hi""",2\r\n"line\nbreak",3\r\n');
  });
});

describe('the import summary', () => {
  const summary = (over: Partial<ImportSummary>): ImportSummary => ({
    files: 1,
    linesRead: 0,
    viewsRecorded: 0,
    crawlers: 0,
    kinds: { pageViews: 0, notFound: 0, crawlerNotFound: 0 },
    skipped: { asset: 0, status: 0, method: 0, unparseable: 0, empty: 0, duplicate: 0, rejected: 0 },
    errors: [],
    seconds: 2,
    ...over,
  });

  it('counts with the noun in the right number', () => {
    expect(count(1, 'file')).toBe('1 file');
    expect(count(0, 'file')).toBe('0 files');
    expect(count(12_500, 'line')).toBe('12,500 lines');
    expect(count(2, 'status', 'statuses')).toBe('2 statuses');
    const one = summaryText(summary({ linesRead: 4, viewsRecorded: 1, kinds: { pageViews: 1, notFound: 0, crawlerNotFound: 0 }, skipped: { asset: 1, status: 1, method: 0, unparseable: 0, empty: 1, duplicate: 0, rejected: 0 } }));
    expect(one.split('\n')).toEqual([
      'Read:      1 file, 4 lines',
      '               1  page view by people and AI agents',
      '               1  asset (not a document)',
      '               1  unsuccessful status',
      '               1  empty line',
      'Recorded:  1 view',
      'Time:      2.0 s (2 lines/s)',
    ]);
    const kinds = { pageViews: 2_700, notFound: 40, crawlerNotFound: 10 };
    const many = summaryText(summary({ files: 2, linesRead: 4_000, viewsRecorded: 2_990, crawlers: 250, kinds, skipped: { asset: 600, status: 400, method: 0, unparseable: 0, empty: 0, duplicate: 0, rejected: 0 } }));
    expect(many).toContain('Read:      2 files, 4,000 lines\n');
    expect(many).toContain('           2,700  page views by people and AI agents\n');
    expect(many).toContain('              40  not-found views (404, 410)\n');
    expect(many).toContain('             250  views by crawlers and bots (neither human nor AI)\n');
    expect(many).toContain('              10  not-found views by crawlers and bots (not kept)\n');
    expect(many).toContain('             600  assets (not documents)\n');
    expect(many).toContain('             400  unsuccessful statuses\n');
    expect(many).toContain('Recorded:  2,990 views\n');
    expect(many).toContain('Time:      2.0 s (2,000 lines/s)');
  });

  it('says how many of the views were already imported; the lines under Read still add up', () => {
    const again = summaryText(summary({ linesRead: 300, crawlers: 25, kinds: { pageViews: 275, notFound: 0, crawlerNotFound: 0 }, skipped: { asset: 0, status: 0, method: 0, unparseable: 0, empty: 0, duplicate: 300, rejected: 0 } }));
    expect(again).toContain('Recorded:  0 views; 300 already imported, not stored again\n');
    const counted = [...again.matchAll(/^ +([\d,]+) {2}/gm)].reduce((sum, m) => sum + Number(m[1].replace(/,/g, '')), 0);
    expect(counted).toBe(300);
  });

  it('shows the views of a server that does not split them by kind as one line, so the summary still adds up', () => {
    const old = summaryText(summary({ linesRead: 10, viewsRecorded: 8, skipped: { asset: 2, status: 0, method: 0, unparseable: 0, empty: 0, duplicate: 0, rejected: 0 } }));
    expect(old).toContain('               8  views\n               2  assets (not documents)\n');
  });
});
