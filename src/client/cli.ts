// `folio jobs …` and `folio analytics visitors|views`: the command-line client, built on FolioClient.
// Connection from --url/--key/--project or FOLIO_URL/FOLIO_API_KEY/FOLIO_PROJECT. Tables on a terminal,
// JSON with --json, errors on stderr with a non-zero exit code.
import { Command, InvalidArgumentError, Option } from 'commander';
import { FolioClient } from './client.ts';
import { FolioError } from './errors.ts';
import type { Job, JobEvent, JobStatus, PathCounts, TrafficCounts } from './types.ts';

/** Exit codes of `jobs create --wait`, `jobs message --wait` and `jobs wait`. */
export const JOB_EXIT_CODES: Record<'completed' | 'failed' | 'archived', number> = { completed: 0, failed: 1, archived: 2 };

export interface CliIo {
  stdout: NodeJS.WriteStream;
  stderr: NodeJS.WriteStream;
  env: Record<string, string | undefined>;
}

const defaultIo = (): CliIo => ({ stdout: process.stdout, stderr: process.stderr, env: process.env });

/** A problem the user can fix; printed as one line. */
class CliError extends Error {}

interface ConnectionOptions {
  url?: string;
  key?: string;
  project?: string;
  json?: boolean;
}

function withConnection(cmd: Command, jsonHelp = 'machine-readable JSON output'): Command {
  return cmd
    .option('--url <url>', 'Folio base URL (default: $FOLIO_URL)')
    .option('--key <key>', 'admin API key (default: $FOLIO_API_KEY)')
    .option('--project <id>', 'project id (default: $FOLIO_PROJECT)')
    .option('--json', jsonHelp);
}

function clientFor(o: ConnectionOptions, io: CliIo): FolioClient {
  const baseUrl = o.url ?? io.env.FOLIO_URL;
  const apiKey = o.key ?? io.env.FOLIO_API_KEY;
  const projectId = o.project ?? io.env.FOLIO_PROJECT;
  if (!baseUrl) throw new CliError('No server: pass --url or set FOLIO_URL (e.g. https://folio.example.com).');
  if (!apiKey) throw new CliError('No API key: pass --key or set FOLIO_API_KEY.');
  if (!projectId) throw new CliError('No project: pass --project or set FOLIO_PROJECT.');
  try {
    return new FolioClient({ baseUrl, apiKey, projectId });
  } catch (err) {
    throw new CliError((err as Error).message.replace(/^FolioClient: /, ''));
  }
}

/** Runs an action, turning every error into one clear stderr message and exit code 1. */
function action<A extends unknown[]>(io: () => CliIo, fn: (io: CliIo, ...args: A) => Promise<void>): (...args: A) => Promise<void> {
  return async (...args: A) => {
    const streams = io();
    try {
      await fn(streams, ...args);
    } catch (err) {
      streams.stderr.write(describeError(err) + '\n');
      process.exitCode = err instanceof Error && err.name === 'AbortError' ? 130 : 1;
    }
  };
}

function describeError(err: unknown): string {
  if (err instanceof FolioError) {
    const where = err.status ? `${err.status} ${err.code}` : err.code;
    const lines = [`folio: ${clean(err.message)} (${clean(where)})`];
    for (const d of err.details ?? []) lines.push(clean(`  - ${d.path ? `${d.path}: ` : ''}${d.message}`));
    if (err.requestId) lines.push(`  request id: ${clean(err.requestId)}`);
    return lines.join('\n');
  }
  if (err instanceof CliError) return `folio: ${err.message}`;
  if (err instanceof Error && err.name === 'AbortError') return 'folio: stopped.';
  return `folio: ${err instanceof Error ? err.message : String(err)}`;
}

// ---- Parsing -----------------------------------------------------------------------------

function intOption(min: number, max: number) {
  return (value: string): number => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`expected a whole number from ${min} to ${max}.`);
    return n;
  };
}

/** "90" (seconds), "90s", "15m", "2h", "1d" → milliseconds. */
export function parseDurationMs(value: string): number {
  const m = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)?$/.exec(value.trim());
  if (!m) throw new InvalidArgumentError('expected a duration such as 90s, 15m or 2h.');
  const unit = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 's') as 'ms' | 's' | 'm' | 'h' | 'd'];
  const ms = Number(m[1]) * unit;
  if (!(ms > 0)) throw new InvalidArgumentError('expected a duration greater than zero.');
  return ms;
}

// ---- Output ------------------------------------------------------------------------------

function write(stream: NodeJS.WriteStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : text + '\n');
}

function json(stream: NodeJS.WriteStream, value: unknown): void {
  write(stream, JSON.stringify(value, null, 2));
}

/**
 * Server-provided text made safe for a terminal: control characters (escape sequences that could
 * move the cursor or retitle the window, stray line breaks) become spaces.
 */
export function clean(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

export function formatTable(rows: Record<string, string>[], rightAligned: string[] = []): string {
  if (rows.length === 0) return '(none)';
  rows = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, clean(v)])));
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (rightAligned.includes(cols[i]) ? cell.padStart(width[i]) : cell.padEnd(width[i])))
      .join('  ')
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => r[c] ?? '')))].join('\n');
}

/** RFC 4180 CSV: fields with a comma, quote or line break are quoted, quotes doubled. */
export function toCsv(header: string[], rows: (string | number)[][]): string {
  const cell = (v: string | number) => {
    const s = String(v);
    return /[",\r\n]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
  };
  return [header, ...rows].map((r) => r.map(cell).join(',')).join('\r\n') + '\r\n';
}

function jobView(job: Job): string {
  const rows: [string, string][] = [
    ['ID', job.id],
    ['STATUS', job.status],
    ['MODEL', job.model],
    ['REPOSITORY', job.source.repository],
    // `ref` may be null and `baseRef` absent on servers other than Folio.
    ['BRANCH', `${job.source.ref ?? '—'}${job.source.baseRef ? ` (from ${job.source.baseRef})` : ''}`],
    ['PR', job.prLink ?? '—'],
    ['CREATED', job.createdAt],
  ];
  if (job.updatedAt) rows.push(['UPDATED', job.updatedAt]);
  if (job.archivedAt) rows.push(['ARCHIVED', job.archivedAt]);
  if (job.error) rows.push(['ERROR', `${job.error.code}: ${job.error.message}`]);
  // `usage` and `files` are Folio's; other servers may not send them.
  if (job.usage) rows.push(['USAGE', usageText(job.usage)]);
  if (Array.isArray(job.files)) {
    const adds = job.files.reduce((n, f) => n + f.additions, 0);
    const dels = job.files.reduce((n, f) => n + f.deletions, 0);
    rows.push(['FILES', job.files.length ? `${job.files.length} changed, +${adds} -${dels}` : 'none']);
    for (const f of job.files.slice(0, 50)) {
      const label = f.status === 'renamed' && f.previousPath ? `renamed from ${f.previousPath}` : f.status;
      rows.push(['', `${f.path}  ${label}  ${f.binary ? 'binary' : `+${f.additions} -${f.deletions}`}`]);
    }
    if (job.files.length > 50) rows.push(['', `… and ${job.files.length - 50} more`]);
  }
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${clean(v)}`).join('\n');
}

function usageText(u: Job['usage']): string {
  const cost = u.estimatedCostUsd === null ? 'no price for this model' : `~$${u.estimatedCostUsd.toFixed(u.estimatedCostUsd < 1 ? 4 : 2)}`;
  return `${u.inputTokens} input + ${u.outputTokens} output tokens (${cost})`;
}

function jobsTable(jobs: Job[]): string {
  return formatTable(
    jobs.map((j) => ({ ID: j.id, STATUS: j.status, MODEL: j.model, CREATED: j.createdAt, TOKENS: j.usage ? String(j.usage.totalTokens) : '', PR: j.prLink ?? '' })),
  );
}

/** A short, one-line description of an event's data. */
function eventSummary(e: JobEvent, max = 160): string {
  const d = (e.data ?? {}) as Record<string, unknown>;
  const str = (v: unknown) => (typeof v === 'string' ? v : typeof v === 'number' || typeof v === 'boolean' ? String(v) : '');
  const args = (d.args && typeof d.args === 'object' ? d.args : {}) as Record<string, unknown>;
  let text: string;
  switch (e.type) {
    case 'model_message':
      text = str(d.text);
      break;
    case 'tool_call':
      text = `${str(d.tool)} ${str(args.path) || str(args.pattern) || str(args.query) || JSON.stringify(args)}`;
      break;
    case 'tool_result':
      text = `${str(d.tool)} → ${str(d.result)}`;
      break;
    case 'usage':
      text = d.totalTokens !== undefined ? `${str(d.totalTokens)} tokens` : '';
      break;
    case 'commit':
      text = `${str(d.sha).slice(0, 7)} (${str(d.fileCount)} files)`;
      break;
    case 'validation':
      text = d.ok === true ? 'ok' : `${Array.isArray(d.issues) ? d.issues.length : '?'} issues`;
      break;
    case 'error':
      text = `${str(d.message)}${d.code ? ` (${str(d.code)})` : ''}`;
      break;
    case 'turn.completed':
      text = [str(d.title), str(d.prLink)].filter(Boolean).join(' ');
      break;
    default: {
      const pick = ['message', 'summary', 'title', 'url', 'tool', 'name', 'branch', 'reason', 'code'].find((k) => str(d[k]) !== '');
      text = pick ? str(d[pick]) : Object.keys(d).length ? JSON.stringify(d) : '';
    }
  }
  text = clean(text).replace(/\s+/g, ' ').trim();
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

function eventLine(e: JobEvent): string {
  const time = e.at.length >= 19 ? e.at.slice(11, 19) : e.at;
  const summary = eventSummary(e);
  return `#${e.id} ${clean(time)} ${clean(e.type)}${summary ? `  ${summary}` : ''}`;
}

/** Live status on stderr: a spinner line on a terminal, plain lines otherwise (CI logs). */
class Progress {
  private readonly tty: boolean;
  private frame = 0;
  private timer: ReturnType<typeof setInterval> | undefined;
  private status: JobStatus | undefined;
  private latest = '';
  private readonly started = Date.now();
  private readonly out: NodeJS.WriteStream;
  private readonly jobId: string;

  constructor(out: NodeJS.WriteStream, jobId: string) {
    this.out = out;
    this.jobId = clean(jobId);
    this.tty = !!out.isTTY;
    if (this.tty) this.timer = setInterval(() => this.render(), 80);
  }

  update(job: Job): void {
    if (job.status === this.status) return;
    this.status = job.status;
    if (this.tty) this.render();
    else write(this.out, `${this.jobId}: ${job.status}`);
  }

  event(e: JobEvent): void {
    this.latest = `${clean(e.type)}${eventSummary(e, 80) ? `: ${eventSummary(e, 80)}` : ''}`;
    if (this.tty) this.render();
    else write(this.out, `${this.jobId}: ${eventLine(e)}`);
  }

  note(text: string): void {
    text = clean(text);
    if (this.tty) {
      this.out.write('\r\x1b[2K');
      write(this.out, text);
      this.render();
    } else write(this.out, text);
  }

  stop(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    if (this.tty) this.out.write('\r\x1b[2K');
  }

  private render(): void {
    if (!this.timer) return;
    const frames = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
    this.frame = (this.frame + 1) % frames.length;
    const secs = Math.floor((Date.now() - this.started) / 1000);
    const elapsed = `${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`;
    let line = `${frames[this.frame]} ${this.jobId} · ${this.status ?? 'starting'} · ${elapsed}${this.latest ? ` · ${this.latest}` : ''}`;
    const cols = this.out.columns || 100;
    if (line.length > cols - 1) line = line.slice(0, cols - 2) + '…';
    this.out.write(`\r\x1b[2K${line}`);
  }
}

/** Waits for the job with live progress and reports the outcome; sets the exit code 0/1/2. */
async function waitAndReport(client: FolioClient, jobId: string, o: { timeout?: number; json?: boolean }, io: CliIo): Promise<void> {
  const progress = new Progress(io.stderr, jobId);
  const stopEvents = new AbortController();
  // Events are a bonus: a server without the events operation still gets a plain wait.
  const events = (async () => {
    try {
      for await (const e of client.jobEvents(jobId, { follow: true, signal: stopEvents.signal })) progress.event(e);
    } catch (err) {
      if (!stopEvents.signal.aborted) progress.note(`(live events unavailable: ${err instanceof Error ? err.message : String(err)})`);
    }
  })();
  const interrupt = () => stopEvents.abort();
  let job: Job;
  try {
    process.once('SIGINT', interrupt);
    job = await client.waitForJob(jobId, { timeoutMs: o.timeout, signal: stopEvents.signal, onUpdate: (j) => progress.update(j) });
    // The event stream ends by itself once it has shown everything up to the job's end.
    let grace: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([events, new Promise((resolve) => (grace = setTimeout(resolve, 5_000)))]);
    clearTimeout(grace);
  } finally {
    process.off('SIGINT', interrupt);
    stopEvents.abort();
    await events;
    progress.stop();
  }
  if (o.json) json(io.stdout, job);
  else if (job.status === 'completed') write(io.stdout, job.prLink ? `Completed: ${clean(job.prLink)}` : 'Completed: no files changed, so no pull request.');
  else if (job.status === 'failed') write(io.stdout, `Failed: ${job.error ? clean(`${job.error.message} (${job.error.code})`) : 'no reason given.'}`);
  else write(io.stdout, `Archived${job.prLink ? `: ${clean(job.prLink)}` : '.'}`);
  process.exitCode = JOB_EXIT_CODES[job.status as keyof typeof JOB_EXIT_CODES] ?? 1;
}

// ---- Commands ----------------------------------------------------------------------------

/** Adds `jobs create|get|list|message|archive|wait|events` to the program. */
export function registerJobCommands(program: Command, ioFactory: () => CliIo = defaultIo): void {
  const jobs = program.command('jobs').description('Run and follow agent jobs on a Folio server (FOLIO_URL, FOLIO_API_KEY, FOLIO_PROJECT).');
  const timeoutOption = () => new Option('--timeout <duration>', 'with waiting: give up after this long (e.g. 30m), exit code 1').argParser(parseDurationMs);

  withConnection(jobs.command('create <prompt>'))
    .description('Create a job. With --wait, follow it and exit 0 completed, 1 failed, 2 archived.')
    .option('--model <model>', 'provider/model-id (one of the server\'s allowed models)')
    .option('--wait', 'wait until the job is completed, failed or archived and print the pull request link')
    .addOption(timeoutOption())
    .option('--idempotency-key <key>', 'makes re-running the same command (e.g. a retried CI step) return the same job')
    .action(
      action(ioFactory, async (io, prompt: string, o: ConnectionOptions & { model?: string; wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
        const client = clientFor(o, io);
        const job = await client.createJob({ prompt, model: o.model }, { idempotencyKey: o.idempotencyKey });
        if (!o.wait) {
          if (o.json) json(io.stdout, job);
          else write(io.stdout, jobView(job));
          return;
        }
        write(io.stderr, `Created ${job.id} (${job.model})${job.source.ref ? ` on ${job.source.ref}` : ''}.`);
        await waitAndReport(client, job.id, o, io);
      }),
    );

  withConnection(jobs.command('get <jobId>'))
    .description('Show a job.')
    .action(
      action(ioFactory, async (io, id: string, o: ConnectionOptions) => {
        const job = await clientFor(o, io).getJob(id);
        if (o.json) json(io.stdout, job);
        else write(io.stdout, jobView(job));
      }),
    );

  withConnection(jobs.command('list'))
    .description('List jobs, newest first.')
    .addOption(new Option('--status <status>', 'only jobs in this status').choices(['active', 'completed', 'failed', 'archived']))
    .option('--limit <n>', 'jobs per page (1-100)', intOption(1, 100), 20)
    .option('--cursor <cursor>', 'continue from a previous page\'s nextCursor')
    .option('--all', 'every page')
    .action(
      action(ioFactory, async (io, o: ConnectionOptions & { status?: JobStatus; limit: number; cursor?: string; all?: boolean }) => {
        const client = clientFor(o, io);
        const query = { status: o.status, limit: o.limit, cursor: o.cursor };
        let page: { jobs: Job[]; nextCursor: string | null; hasMore: boolean };
        if (o.all) {
          const all: Job[] = [];
          for await (const job of client.listJobs(query)) all.push(job);
          page = { jobs: all, nextCursor: null, hasMore: false };
        } else {
          page = await client.listJobsPage(query);
        }
        if (o.json) return json(io.stdout, page);
        write(io.stdout, jobsTable(page.jobs));
        if (page.hasMore) write(io.stderr, `More jobs: --cursor ${page.nextCursor} or --all`);
      }),
    );

  withConnection(jobs.command('message <jobId> <prompt>'))
    .description('Send a follow-up instruction (the job becomes active again).')
    .option('--wait', 'wait until the job is done again; exit 0 completed, 1 failed, 2 archived')
    .addOption(timeoutOption())
    .option('--idempotency-key <key>', 'makes re-running the same command send the message once')
    .action(
      action(ioFactory, async (io, id: string, prompt: string, o: ConnectionOptions & { wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
        const client = clientFor(o, io);
        const job = await client.sendMessage(id, prompt, { idempotencyKey: o.idempotencyKey });
        if (!o.wait) {
          if (o.json) json(io.stdout, job);
          else write(io.stdout, jobView(job));
          return;
        }
        await waitAndReport(client, job.id, o, io);
      }),
    );

  withConnection(jobs.command('archive <jobId>'))
    .description('Archive a job (final); stops it if it is running.')
    .action(
      action(ioFactory, async (io, id: string, o: ConnectionOptions) => {
        const job = await clientFor(o, io).archiveJob(id);
        if (o.json) json(io.stdout, job);
        else write(io.stdout, `Archived ${job.id}.`);
      }),
    );

  withConnection(jobs.command('wait <jobId>'))
    .description('Wait until a job is completed, failed or archived; exit 0, 1 or 2.')
    .addOption(timeoutOption())
    .action(
      action(ioFactory, async (io, id: string, o: ConnectionOptions & { timeout?: number }) => {
        await waitAndReport(clientFor(o, io), id, o, io);
      }),
    );

  withConnection(jobs.command('events <jobId>'), 'one JSON event per line (NDJSON)')
    .description('Print a job\'s events; --follow streams them live until the job is done.')
    .option('--follow', 'keep streaming new events until the job leaves active (resumes after dropped connections)')
    .option('--after <id>', 'only events after this event id', intOption(0, Number.MAX_SAFE_INTEGER))
    .action(
      action(ioFactory, async (io, id: string, o: ConnectionOptions & { follow?: boolean; after?: number }) => {
        const client = clientFor(o, io);
        const stop = new AbortController();
        const interrupt = () => stop.abort();
        process.once('SIGINT', interrupt);
        try {
          for await (const e of client.jobEvents(id, { follow: !!o.follow, after: o.after, signal: stop.signal })) {
            write(io.stdout, o.json ? JSON.stringify(e) : eventLine(e));
          }
        } catch (err) {
          if (!stop.signal.aborted) throw err;
        } finally {
          process.off('SIGINT', interrupt);
        }
      }),
    );
}

type Format = 'table' | 'json' | 'csv';

/** Adds `visitors` and `views` under an existing `analytics` command. */
export function registerAnalyticsQueryCommands(analytics: Command, ioFactory: () => CliIo = defaultIo): void {
  const define = (name: 'visitors' | 'views', description: string) =>
    withConnection(analytics.command(name))
      .description(description)
      .option('--from <date>', 'start, inclusive: YYYY-MM-DD (UTC) or ISO 8601')
      .option('--to <date>', 'end, exclusive: YYYY-MM-DD (UTC) or ISO 8601')
      .option('--limit <n>', 'rows per page (1-250); with --all, the page size', intOption(1, 250))
      .option('--offset <n>', 'rows to skip', intOption(0, Number.MAX_SAFE_INTEGER))
      .option('--all', 'every page from --offset on')
      .addOption(new Option('--format <format>', 'output format').choices(['table', 'json', 'csv']))
      .action(
        action(ioFactory, async (io, o: ConnectionOptions & { from?: string; to?: string; limit?: number; offset?: number; all?: boolean; format?: Format }) => {
          const client = clientFor(o, io);
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
          if (format === 'json') return json(io.stdout, { totals, [name]: rows, hasMore });
          if (format === 'csv') {
            io.stdout.write(toCsv(['path', 'human', 'ai', 'total'], rows.map((r) => [r.path, r.human, r.ai, r.total])));
          } else {
            const label = name === 'visitors' ? 'Unique visitors' : 'Page views';
            write(io.stdout, `${label}: ${totals.total} total (${totals.human} human, ${totals.ai} AI)\n`);
            write(
              io.stdout,
              formatTable(
                rows.map((r) => ({ PATH: r.path, HUMAN: String(r.human), AI: String(r.ai), TOTAL: String(r.total) })),
                ['HUMAN', 'AI', 'TOTAL'],
              ),
            );
          }
          if (hasMore) {
            const next = (o.offset ?? 0) + (o.limit ?? rows.length);
            write(io.stderr, `More rows: --offset ${next}${o.limit ? ` --limit ${o.limit}` : ''}, or --all`);
          }
        }),
      );

  define('visitors', 'Unique visitors per page, human and AI, for a date range.');
  define('views', 'Page views per page, human and AI, for a date range.');
}
