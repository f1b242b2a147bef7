// `folio analytics import|visitors|views|not-found|referrers`: access logs in (analytics-import.ts does
// the work), the reports out through the typed client (one registration line and one view each).
import { Option, type Command } from 'commander';
import type { FolioClient } from '../client/client.ts';
import type { AnalyticsQuery, NotFoundPage, NotFoundPath, PathCounts, ReferrersPage, TrafficCounts, ViewsPage, VisitorsPage } from '../client/types.ts';
import { DIRECT_BATCH, runImport, type ImportOptions, type ImportSummary } from './analytics-import.ts';
import { UsageError } from './errors.ts';
import { clientFor, intOption, projectOption, repeatable, required, withConnection, type ConnectionOptions } from './options.ts';
import { clean, count, csv, printResult, table, write, writeJson } from './output.ts';
import { fileProgress } from './progress.ts';

/** Why lines were skipped, in the summary's order: the label for one line and for several. */
const SKIP_LABELS: [keyof ImportSummary['skipped'], string, string][] = [
  ['asset', 'asset (not a document)', 'assets (not documents)'],
  ['status', 'unsuccessful status', 'unsuccessful statuses'],
  ['method', 'not GET/HEAD', 'not GET/HEAD'],
  ['unparseable', 'unparseable', 'unparseable'],
  ['empty', 'empty line', 'empty lines'],
  ['duplicate', 'already imported', 'already imported'],
  ['rejected', 'rejected by the server', 'rejected by the server'],
];

/** The import's summary for people: what was read, recorded and skipped (by reason), and how fast. */
export function summaryText(s: ImportSummary): string {
  const n = (x: number) => x.toLocaleString('en-US');
  const skipped = SKIP_LABELS.filter(([k]) => s.skipped[k] > 0).map(([k, one, many]) => `${n(s.skipped[k]).padStart(16)}  ${s.skipped[k] === 1 ? one : many}`);
  // Crawlers are counted among the views read: said only when those views are the ones recorded.
  const crawlers = s.crawlers > 0 && s.viewsRecorded > 0 && s.skipped.duplicate === 0;
  const lines = [
    `Read:      ${count(s.files, 'file')}, ${count(s.linesRead, 'line')}`,
    `Recorded:  ${count(s.viewsRecorded, 'view')}${crawlers ? ` (${n(s.crawlers)} from crawlers and bots, counted as neither human nor AI)` : ''}`,
    `Skipped:   ${count(Object.values(s.skipped).reduce((a, b) => a + b, 0), 'line')}`,
    ...skipped,
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

type ReportOptions = ConnectionOptions & { from?: string; to?: string; limit?: number; offset?: number; all?: boolean; format?: Format };

/**
 * How a report reads in the terminal: its client call (one page), the call for every page when
 * `--all` may read them, the page's field that holds the rows, CSV columns, table columns (numbers
 * right-aligned) and the heading above the table.
 */
interface ReportView<P extends { hasMore: boolean }, R> {
  description: string;
  page(client: FolioClient): (query: AnalyticsQuery) => Promise<P>;
  every?(client: FolioClient): (query: AnalyticsQuery) => AsyncGenerator<P, void, undefined>;
  rows: keyof P & string;
  csv: { header: string[]; row(r: R): (string | number)[] };
  table: { row(r: R): Record<string, string>; numbers: string[] };
  heading(page: P): string;
}

/** One page, or with --all every page as one (the last page's totals, every row). */
async function readReport<P extends { hasMore: boolean }, R>(view: ReportView<P, R>, client: FolioClient, o: ReportOptions): Promise<P> {
  const query = { dateFrom: o.from, dateTo: o.to, limit: o.limit, offset: o.offset };
  if (!o.all || !view.every) return view.page(client)(query);
  let last: P | undefined;
  const rows: R[] = [];
  for await (const page of view.every(client)(query)) {
    last = page;
    rows.push(...(page[view.rows] as R[]));
  }
  return { ...last!, [view.rows]: rows, hasMore: false };
}

/** `folio analytics <name>`: a report through the typed client, as JSON, CSV or a table. */
function registerReport<P extends { hasMore: boolean }, R>(analytics: Command, name: string, view: ReportView<P, R>): void {
  pagedReport(analytics.command(name))
    .description(view.description)
    .action(async (o: ReportOptions) => {
      if (o.all && !view.every) throw new UsageError(`folio analytics ${name} reads one page: use --limit and --offset.`);
      const page = await readReport(view, clientFor(o), o);
      const rows = page[view.rows] as R[];
      const format: Format = o.format ?? (o.json ? 'json' : 'table');
      if (format === 'json') return writeJson(process.stdout, page);
      if (format === 'csv') process.stdout.write(csv(view.csv.header, rows.map(view.csv.row)));
      else write(process.stdout, view.heading(page) + table(rows.map(view.table.row), view.table.numbers));
      if (page.hasMore) {
        const next = `--offset ${(o.offset ?? 0) + (o.limit ?? rows.length)}`;
        write(process.stderr, view.every ? `More rows: ${next}${o.limit ? ` --limit ${o.limit}` : ''}, or --all` : `More rows: ${next}`);
      }
    });
}

/** Visitors or views per path: the same columns. */
const pathCounts = (label: string) => ({
  csv: { header: ['path', 'human', 'ai', 'total'], row: (r: PathCounts) => [r.path, r.human, r.ai, r.total] },
  table: { row: (r: PathCounts) => ({ PATH: r.path, HUMAN: String(r.human), AI: String(r.ai), TOTAL: String(r.total) }), numbers: ['HUMAN', 'AI', 'TOTAL'] },
  heading: ({ totals: t }: { totals: TrafficCounts }) => `${label}: ${t.total} total (${t.human} human, ${t.ai} AI)\n`,
});

const VISITORS: ReportView<VisitorsPage, PathCounts> = {
  description: 'Unique visitors per page, human and AI, for a date range.',
  page: (c) => c.visitors,
  every: (c) => c.allVisitors,
  rows: 'visitors',
  ...pathCounts('Unique visitors'),
};

const VIEWS: ReportView<ViewsPage, PathCounts> = {
  description: 'Page views per page, human and AI, for a date range.',
  page: (c) => c.views,
  every: (c) => c.allViews,
  rows: 'views',
  ...pathCounts('Page views'),
};

const notFoundReferrers = (p: NotFoundPath) => p.referrers.map((r) => `${r.host ?? '(none)'} ${r.visitors}`).join(', ');

const NOT_FOUND: ReportView<NotFoundPage, NotFoundPath> = {
  description: 'Pages not found (404 or 410) with their visitors, human and AI, and top referrers, for a date range.',
  page: (c) => c.notFound,
  every: (c) => c.allNotFound,
  rows: 'paths',
  csv: {
    header: ['path', 'human', 'ai', 'total', 'views', 'first_seen', 'last_seen', 'referrers'],
    row: (p) => [p.path, p.human, p.ai, p.total, p.views, p.firstSeen, p.lastSeen, notFoundReferrers(p)],
  },
  table: {
    row: (p) => ({ PATH: p.path, HUMAN: String(p.human), AI: String(p.ai), TOTAL: String(p.total), VIEWS: String(p.views), 'LAST SEEN': p.lastSeen.slice(0, 10), REFERRERS: notFoundReferrers(p) }),
    numbers: ['HUMAN', 'AI', 'TOTAL', 'VIEWS'],
  },
  heading: ({ totals: t }) => `Visitors who hit a missing page: ${t.total} total (${t.human} human, ${t.ai} AI), ${t.views} views\n`,
};

const REFERRERS: ReportView<ReferrersPage, ReferrersPage['referrers'][number]> = {
  description: 'Referring hosts with their visitors, classed as AI assistants, search, social or other (JSON adds the humans sent by AI answers per day).',
  page: (c) => c.referrers,
  rows: 'referrers',
  csv: { header: ['host', 'source', 'human', 'ai', 'total'], row: (r) => [r.host, r.source, r.human, r.ai, r.total] },
  table: { row: (r) => ({ HOST: r.host, SOURCE: r.source, HUMAN: String(r.human), AI: String(r.ai), TOTAL: String(r.total) }), numbers: ['HUMAN', 'AI', 'TOTAL'] },
  heading: (p) => p.classes.map((c) => `${c.source}: ${c.total} visitors (${c.human} human, ${c.ai} AI)\n`).join(''),
};

export function register(analytics: Command): void {
  registerImport(analytics);
  registerReport(analytics, 'visitors', VISITORS);
  registerReport(analytics, 'views', VIEWS);
  registerReport(analytics, 'not-found', NOT_FOUND);
  registerReport(analytics, 'referrers', REFERRERS);
}
