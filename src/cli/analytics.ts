// `folio analytics import|visitors|views|not-found|referrers`: access logs in (analytics-import.ts does the work), unique
// visitors and page views out through the typed client.
import { Option, type Command } from 'commander';
import type { NotFoundPage, NotFoundPath, PathCounts, TrafficCounts } from '../client/types.ts';
import { DIRECT_BATCH, runImport, type ImportOptions, type ImportSummary } from './analytics-import.ts';
import { UsageError } from './errors.ts';
import { clientFor, intOption, projectOption, repeatable, required, withConnection, type ConnectionOptions } from './options.ts';
import { clean, count, csv, printResult, table, write, writeJson } from './output.ts';
import { fileProgress } from './progress.ts';

/**
 * Every kind of line read, in the summary's order, with its label for one line and for several:
 * each line read is in exactly one of them (the views by kind, then the lines that are no view).
 * Lines already imported are among the views; the Recorded line says how many.
 */
const LINE_KINDS: [(s: ImportSummary) => number, string, string][] = [
  [(s) => s.kinds.pageViews, 'page view by people and AI agents', 'page views by people and AI agents'],
  [(s) => s.kinds.notFound, 'not-found view (404, 410)', 'not-found views (404, 410)'],
  [(s) => s.crawlers, 'view by crawlers and bots (neither human nor AI)', 'views by crawlers and bots (neither human nor AI)'],
  [(s) => s.kinds.crawlerNotFound, 'not-found view by a crawler or bot (not kept)', 'not-found views by crawlers and bots (not kept)'],
  [(s) => s.skipped.asset, 'asset (not a document)', 'assets (not documents)'],
  [(s) => s.skipped.status, 'unsuccessful status', 'unsuccessful statuses'],
  [(s) => s.skipped.method, 'not GET/HEAD', 'not GET/HEAD'],
  [(s) => s.skipped.unparseable, 'unparseable', 'unparseable'],
  [(s) => s.skipped.empty, 'empty line', 'empty lines'],
  [(s) => s.skipped.rejected, 'rejected', 'rejected'],
];

/** The views among the lines read when a server (from before `kinds`) did not say their kinds. */
function unsplitViews(s: ImportSummary): number {
  return Math.max(0, s.linesRead - LINE_KINDS.reduce((sum, [of]) => sum + of(s), 0));
}

/** The import's summary for people: every line read once, by kind; what was recorded; how fast. */
export function summaryText(s: ImportSummary): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const row = (x: number, label: string) => `${n(x).padStart(16)}  ${label}`;
  const kinds = LINE_KINDS.map(([of, one, many]) => [of(s), one, many] as const).filter(([x]) => x > 0);
  const rest = unsplitViews(s);
  const again = s.skipped.duplicate > 0 ? `; ${n(s.skipped.duplicate)} already imported, not stored again` : '';
  const lines = [
    `Read:      ${count(s.files, 'file')}, ${count(s.linesRead, 'line')}`,
    ...(rest > 0 ? [row(rest, rest === 1 ? 'view' : 'views')] : []),
    ...kinds.map(([x, one, many]) => row(x, x === 1 ? one : many)),
    `Recorded:  ${count(s.viewsRecorded, 'view')}${again}`,
    `Time:      ${s.seconds.toFixed(1)} s (${count(Math.round(s.linesRead / Math.max(s.seconds, 0.001)), 'line')}/s)`,
  ];
  // Line errors quote the log and the server: cleaned for the terminal.
  for (const e of s.errors.slice(0, 5)) lines.push(clean(`  line ${e.line}: ${e.code}: ${e.error}`));
  return lines.join('\n');
}

function registerImport(analytics: Command): void {
  analytics
    .command('import')
    .description(
      'Import page views from access logs (nginx/Apache combined or JSON lines; "-" reads stdin; .gz is decompressed). Only successful GET/HEAD requests for documents count. Importing the same file twice changes nothing.',
    )
    .argument('<files...>', 'log files, or - for stdin')
    .addOption(required(projectOption('project the views belong to')))
    .addOption(new Option('--format <format>', 'log format').choices(['combined', 'json', 'auto']).default('auto'))
    .addOption(new Option('--url <url>', 'a running Folio server (otherwise the analytics store is written directly: ClickHouse when CLICKHOUSE_URL is set, else the DuckDB file in FOLIO_DATA_DIR)').env('FOLIO_URL'))
    .addOption(new Option('--key <key>', 'API key with the write scope, for --url').env('FOLIO_API_KEY'))
    .option('--map <name=field>', 'JSON lines: read NAME (time, ip, method, path, request, status, userAgent, referrer, accept) from FIELD (dots for nesting); repeatable', repeatable)
    .option('--batch <n>', `without --url: views per write into the store (default ${DIRECT_BATCH.toLocaleString('en-US')})`, (v: string) => Number(v))
    .option('--no-progress', 'no progress bar')
    .option('--json', 'print the summary as JSON')
    .action(async (files: string[], o: ImportOptions & { progress: boolean; json?: boolean }) => {
      if (o.batch !== undefined && (!Number.isInteger(o.batch) || o.batch < 1)) throw new UsageError('--batch must be a positive whole number.');
      if (o.batch !== undefined && o.url) throw new UsageError('--batch is for an import without --url (over HTTP the server chooses its writes).');
      const progress = fileProgress(process.stderr, o.progress);
      let summary: ImportSummary;
      try {
        summary = await runImport(files, o, progress);
      } finally {
        progress.stop();
      }
      printResult(o.json, summary, () => summaryText(summary));
    });
}

type Format = 'table' | 'json' | 'csv';

/** The options of a report read page by page: the date range, the page, every page, the output format. */
function pagedReport(command: Command): Command {
  return withConnection(command)
    .option('--from <date>', 'start, inclusive: YYYY-MM-DD (UTC) or ISO 8601')
    .option('--to <date>', 'end, exclusive: YYYY-MM-DD (UTC) or ISO 8601')
    .option('--limit <n>', 'rows per page (1-250); with --all, the page size', intOption(1, 250))
    .option('--offset <n>', 'rows to skip', intOption(0, Number.MAX_SAFE_INTEGER))
    .option('--all', 'every page from --offset on')
    .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']));
}

/** `visitors` and `views`: one page, or every page with --all, as a table, JSON or CSV. */
function registerQuery(analytics: Command, name: 'visitors' | 'views', description: string): void {
  pagedReport(analytics.command(name))
    .description(description)
    .action(async (o: ConnectionOptions & { from?: string; to?: string; limit?: number; offset?: number; all?: boolean; format?: Format }) => {
      const client = clientFor(o);
      const format: Format = o.format ?? (o.json ? 'json' : 'table');
      const query = { dateFrom: o.from, dateTo: o.to, limit: o.limit, offset: o.offset };
      let totals: TrafficCounts;
      let rows: PathCounts[];
      let hasMore: boolean;
      if (o.all) {
        rows = [];
        totals = { human: 0, ai: 0, total: 0 };
        const pages = name === 'visitors' ? client.allVisitors(query) : client.allViews(query);
        for await (const page of pages) {
          totals = page.totals;
          rows.push(...('visitors' in page ? page.visitors : page.views));
        }
        hasMore = false;
      } else {
        const page = name === 'visitors' ? await client.visitors(query) : await client.views(query);
        totals = page.totals;
        rows = 'visitors' in page ? page.visitors : page.views;
        hasMore = page.hasMore;
      }
      if (format === 'json') return writeJson(process.stdout, { totals, [name]: rows, hasMore });
      if (format === 'csv') {
        process.stdout.write(csv(['path', 'human', 'ai', 'total'], rows.map((r) => [r.path, r.human, r.ai, r.total])));
      } else {
        const label = name === 'visitors' ? 'Unique visitors' : 'Page views';
        write(process.stdout, `${label}: ${totals.total} total (${totals.human} human, ${totals.ai} AI)\n`);
        write(process.stdout, table(rows.map((r) => ({ PATH: r.path, HUMAN: String(r.human), AI: String(r.ai), TOTAL: String(r.total) })), ['HUMAN', 'AI', 'TOTAL']));
      }
      if (hasMore) {
        const next = (o.offset ?? 0) + (o.limit ?? rows.length);
        write(process.stderr, `More rows: --offset ${next}${o.limit ? ` --limit ${o.limit}` : ''}, or --all`);
      }
    });
}

/** `not-found`: paths that answered 404 or 410, one page or every page, as a table, JSON or CSV. */
function registerNotFound(analytics: Command): void {
  pagedReport(analytics.command('not-found'))
    .description('Pages not found (404 or 410) with their visitors, human and AI, and top referrers, for a date range.')
    .action(async (o: ConnectionOptions & { from?: string; to?: string; limit?: number; offset?: number; all?: boolean; format?: Format }) => {
      const client = clientFor(o);
      const format: Format = o.format ?? (o.json ? 'json' : 'table');
      const query = { dateFrom: o.from, dateTo: o.to, limit: o.limit, offset: o.offset };
      let page: NotFoundPage;
      if (o.all) {
        page = { totals: { human: 0, ai: 0, total: 0, derivedVisitors: 0, views: 0 }, paths: [], hasMore: false };
        for await (const p of client.allNotFound(query)) page = { totals: p.totals, paths: [...page.paths, ...p.paths], hasMore: false };
      } else page = await client.notFound(query);
      const referrers = (p: NotFoundPath) => p.referrers.map((r) => `${r.host ?? '(none)'} ${r.visitors}`).join(', ');
      if (format === 'json') return writeJson(process.stdout, page);
      if (format === 'csv') {
        const header = ['path', 'human', 'ai', 'total', 'views', 'first_seen', 'last_seen', 'referrers'];
        process.stdout.write(csv(header, page.paths.map((p) => [p.path, p.human, p.ai, p.total, p.views, p.firstSeen, p.lastSeen, referrers(p)])));
      } else {
        const t = page.totals;
        write(process.stdout, `Visitors who hit a missing page: ${t.total} total (${t.human} human, ${t.ai} AI), ${t.views} views\n`);
        const rows = page.paths.map((p) => ({ PATH: p.path, HUMAN: String(p.human), AI: String(p.ai), TOTAL: String(p.total), VIEWS: String(p.views), 'LAST SEEN': p.lastSeen.slice(0, 10), REFERRERS: referrers(p) }));
        write(process.stdout, table(rows, ['HUMAN', 'AI', 'TOTAL', 'VIEWS']));
      }
      if (page.hasMore) {
        const next = (o.offset ?? 0) + (o.limit ?? page.paths.length);
        write(process.stderr, `More rows: --offset ${next}${o.limit ? ` --limit ${o.limit}` : ''}, or --all`);
      }
    });
}

/** `referrers`: where readers come from, by class and by host, as a table, JSON or CSV (one page). */
function registerReferrers(analytics: Command): void {
  pagedReport(analytics.command('referrers'))
    .description('Referring hosts with their visitors, classed as AI assistants, search, social or other (JSON adds the humans sent by AI answers per day).')
    .action(async (o: ConnectionOptions & { from?: string; to?: string; limit?: number; offset?: number; all?: boolean; format?: Format }) => {
      if (o.all) throw new UsageError('folio analytics referrers reads one page: use --limit and --offset.');
      const page = await clientFor(o).referrers({ dateFrom: o.from, dateTo: o.to, limit: o.limit, offset: o.offset });
      const format: Format = o.format ?? (o.json ? 'json' : 'table');
      if (format === 'json') return writeJson(process.stdout, page);
      if (format === 'csv') return void process.stdout.write(csv(['host', 'source', 'human', 'ai', 'total'], page.referrers.map((r) => [r.host, r.source, r.human, r.ai, r.total])));
      for (const c of page.classes) write(process.stdout, `${c.source}: ${c.total} visitors (${c.human} human, ${c.ai} AI)\n`);
      write(process.stdout, table(page.referrers.map((r) => ({ HOST: r.host, SOURCE: r.source, HUMAN: String(r.human), AI: String(r.ai), TOTAL: String(r.total) })), ['HUMAN', 'AI', 'TOTAL']));
      if (page.hasMore) write(process.stderr, `More rows: --offset ${(o.offset ?? 0) + (o.limit ?? page.referrers.length)}`);
    });
}

export function register(analytics: Command): void {
  registerImport(analytics);
  registerQuery(analytics, 'visitors', 'Unique visitors per page, human and AI, for a date range.');
  registerQuery(analytics, 'views', 'Page views per page, human and AI, for a date range.');
  registerNotFound(analytics);
  registerReferrers(analytics);
}
