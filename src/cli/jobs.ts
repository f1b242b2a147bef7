// `folio jobs create|get|list|message|archive|wait|events|impact`: agent jobs on a Folio server, through the
// typed client. Waiting shows the live status on stderr; the outcome is on stdout and in the exit code.
import { InvalidArgumentError, Option, type Command } from 'commander';
import type { FolioClient } from '../client/client.ts';
import type { ImpactCounts, Job, JobEvent, JobImpact, JobMessage, JobStatus, UsageReport } from '../client/types.ts';
import { messageOrigin, startedBy } from '../jobs/started-by.ts';
import { eventSentence } from '../jobs/event-text.ts';
import { JOB_STATUSES } from '../contracts/jobs.ts';
import { clientFor, durationOption, intOption, withConnection, type ConnectionOptions } from './options.ts';
import { clean, csv, fields, table, write, writeJson } from './output.ts';
import { statusLine } from './progress.ts';

/** Exit codes of `jobs create --wait`, `jobs message --wait` and `jobs wait`. */
const JOB_EXIT_CODES: Record<Exclude<JobStatus, 'active'>, number> = { completed: 0, failed: 1, archived: 2 };

function jobView(job: Job): string {
  const rows: [string, string][] = [
    ['ID', job.id],
    ['STATUS', job.status],
    ['MODEL', job.model],
    ['REPOSITORY', job.source.repository],
    // `ref` may be null and `baseRef` absent on servers other than Folio.
    ['BRANCH', `${job.source.ref ?? '—'}${job.source.baseRef ? ` (from ${job.source.baseRef})` : ''}`],
    ['PR', job.prLink ?? '—'],
  ];
  // `mergedAt` is Folio's (when the code host says the pull request was merged).
  if (job.mergedAt) rows.push(['MERGED', `${job.mergedAt} (folio jobs impact ${job.id})`]);
  // `trigger` is Folio's (null for jobs made through the API); other servers may not send it.
  if (job.trigger) {
    const { label, url } = startedBy(job.trigger);
    rows.push(['TRIGGER', url ? `${label}: ${url}` : label]);
  }
  rows.push(['CREATED', job.createdAt]);
  if (job.updatedAt) rows.push(['UPDATED', job.updatedAt]);
  if (job.archivedAt) rows.push(['ARCHIVED', job.archivedAt]);
  if (job.error) rows.push(['ERROR', `${job.error.code}: ${job.error.message}`]);
  // `usage` and `files` are Folio's; other servers may not send them.
  if (job.usage) rows.push(['USAGE', usageText(job.usage)]);
  if (job.limit) rows.push(['LIMIT', limitText(job.limit)]);
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
  return fields(rows);
}

function usageText(u: Job['usage']): string {
  const cost = u.estimatedCostUsd === null ? 'no price for this model' : `~$${u.estimatedCostUsd.toFixed(u.estimatedCostUsd < 1 ? 4 : 2)}`;
  return `${u.inputTokens} input + ${u.outputTokens} output tokens (${cost})`;
}

/** The job's spending limits (Folio's): dollars, tokens, or none. */
function limitText(l: NonNullable<Job['limit']>): string {
  const parts = [l.maxCostUsd !== null ? `$${l.maxCostUsd}` : '', l.maxTokens !== null ? `${l.maxTokens} tokens` : ''].filter(Boolean);
  return parts.length ? parts.join(' or ') : 'none';
}

function jobsTable(jobs: Job[]): string {
  // `title` is Folio's; other servers may not send it.
  return table(jobs.map((j) => ({ ID: j.id, TITLE: j.title ?? '', STATUS: j.status, MODEL: j.model, CREATED: j.createdAt, TOKENS: j.usage ? String(j.usage.totalTokens) : '', PR: j.prLink ?? '' })));
}

/** The event's sentence (jobs/event-text.ts) on one line, cleaned for the terminal and clipped. */
function eventSummary(e: JobEvent, max = 160): string {
  const text = clean(eventSentence(e)).replace(/\s+/g, ' ').trim();
  return text.length > max ? text.slice(0, max - 1) + '…' : text;
}

function eventLine(e: JobEvent): string {
  const time = e.at.length >= 19 ? e.at.slice(11, 19) : e.at;
  const summary = eventSummary(e);
  return `#${e.id} ${clean(time)} ${clean(e.type)}${summary ? `  ${summary}` : ''}`;
}

/**
 * A job being waited for, on stderr: on a terminal a spinner line with the status, the time waited
 * and the latest event; otherwise (CI logs) a plain line per status change and per event.
 */
function watchJob(jobId: string) {
  const id = clean(jobId);
  let status: JobStatus | undefined;
  let latest = '';
  const line = statusLine(process.stderr, (elapsed) => [id, status ?? 'starting', elapsed, latest].filter(Boolean).join(' · '));
  return {
    update(job: Job) {
      if (job.status === status) return;
      status = job.status;
      if (!line.live) line.log(`${id}: ${job.status}`);
    },
    event(e: JobEvent) {
      const summary = eventSummary(e, 80);
      latest = `${clean(e.type)}${summary ? `: ${summary}` : ''}`;
      if (!line.live) line.log(`${id}: ${eventLine(e)}`);
    },
    note: (text: string) => line.log(clean(text)),
    stop: () => line.stop(),
  };
}

/**
 * The id of the job's last event so far: a wait for the turn a message starts shows the events after
 * it, not the job's history again. 0 (everything) when the server has no events operation.
 */
async function lastEventId(client: FolioClient, jobId: string): Promise<number> {
  let after = 0;
  try {
    for (;;) {
      const page = await client.jobEventsPage(jobId, { after, limit: 500 });
      if (page.events.length === 0) return after;
      after = page.events.at(-1)!.id;
      if (!page.hasMore) return after;
    }
  } catch {
    return 0;
  }
}

/**
 * Waits for the job with live progress (its events after `after`, else all of them) and reports the
 * outcome; sets the exit code 0/1/2.
 */
export async function waitAndReport(client: FolioClient, jobId: string, o: { timeout?: number; json?: boolean; after?: number }): Promise<void> {
  const watch = watchJob(jobId);
  const stopEvents = new AbortController();
  // Events are a bonus: a server without the events operation still gets a plain wait.
  const events = (async () => {
    try {
      for await (const e of client.jobEvents(jobId, { follow: true, after: o.after, signal: stopEvents.signal })) watch.event(e);
    } catch (err) {
      if (!stopEvents.signal.aborted) watch.note(`(live events unavailable: ${err instanceof Error ? err.message : String(err)})`);
    }
  })();
  const interrupt = () => stopEvents.abort();
  let job: Job;
  try {
    process.once('SIGINT', interrupt);
    job = await client.waitForJob(jobId, { timeoutMs: o.timeout, signal: stopEvents.signal, onUpdate: (j) => watch.update(j) });
    // The event stream ends by itself once it has shown everything up to the job's end.
    let grace: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([events, new Promise((resolve) => (grace = setTimeout(resolve, 5_000)))]);
    clearTimeout(grace);
  } finally {
    process.off('SIGINT', interrupt);
    stopEvents.abort();
    await events;
    watch.stop();
  }
  if (o.json) writeJson(process.stdout, job);
  else if (job.status === 'completed') write(process.stdout, job.prLink ? `Completed: ${clean(job.prLink)}` : 'Completed: no files changed, so no pull request.');
  else if (job.status === 'failed') write(process.stdout, `Failed: ${job.error ? clean(`${job.error.message} (${job.error.code})`) : 'no reason given.'}`);
  else write(process.stdout, `Archived${job.prLink ? `: ${clean(job.prLink)}` : '.'}`);
  process.exitCode = JOB_EXIT_CODES[job.status as keyof typeof JOB_EXIT_CODES] ?? 1;
}

export function printJob(job: Job, json: boolean | undefined): void {
  if (json) writeJson(process.stdout, job);
  else write(process.stdout, jobView(job));
}

export function register(jobs: Command): void {
  registerCreate(jobs);
  registerGet(jobs);
  registerList(jobs);
  registerMessage(jobs);
  registerArchive(jobs);
  registerWait(jobs);
  registerEvents(jobs);
  registerUsage(jobs);
  registerMessages(jobs);
  registerImpact(jobs);
}

function registerImpact(jobs: Command): void {
  withConnection(jobs.command('impact <jobId>'))
    .description("Show the effect of a merged job on the pages it touched: visitors before and after the merge (equal windows of whole UTC days, the day of the merge in neither).")
    .addOption(new Option('--days <n>', 'length of each window in days (1-90, default 14)').argParser(intOption(1, 90)))
    .option('--csv', 'CSV: a row per page and window side by side, the total last')
    .action(async (id: string, o: ConnectionOptions & { days?: number; csv?: boolean }) => {
      const impact = await clientFor(o).getJobImpact(id, { days: o.days });
      if (o.json) return writeJson(process.stdout, impact);
      if (o.csv) return void process.stdout.write(impactCsv(impact));
      write(process.stdout, impactText(impact));
    });
}

const IMPACT_FIELDS = ['humans', 'ai', 'views', 'fromAiAnswers', 'notFound'] as const;

/** The page's change for people: a moved page names its old address, a redirect its destination. */
function changeText(p: JobImpact['pages'][number]): string {
  if (p.change === 'moved' && p.previousPath) return `moved from ${p.previousPath}`;
  if (p.change === 'redirect' && p.redirectTo) return `redirect to ${p.redirectTo}`;
  return p.change;
}

/** The impact as CSV: a row per page, then the total (change `total`), each count before and after. */
function impactCsv(impact: JobImpact): string {
  const header = ['path', 'change', 'previous_path', 'redirect_to', ...IMPACT_FIELDS.flatMap((f) => [`${f}_before`, `${f}_after`])];
  const counts = (b: ImpactCounts, a: ImpactCounts) => IMPACT_FIELDS.flatMap((f) => [b[f], a[f]]);
  const rows = impact.pages.map((p) => [p.path, p.change, p.previousPath ?? '', p.redirectTo ?? '', ...counts(p.before, p.after)]);
  rows.push(['', 'total', '', '', ...counts(impact.total.before, impact.total.after)]);
  return csv(header, rows);
}

/** The impact for people: the windows, then a row per page and the total, "before→after" per count. */
function impactText(impact: JobImpact): string {
  const arrow = (b: ImpactCounts, a: ImpactCounts, f: (typeof IMPACT_FIELDS)[number]) => `${b[f]}→${a[f]}`;
  const row = (page: string, change: string, b: ImpactCounts, a: ImpactCounts) => ({
    PAGE: page,
    CHANGE: change,
    HUMANS: arrow(b, a, 'humans'),
    AI: arrow(b, a, 'ai'),
    VIEWS: arrow(b, a, 'views'),
    'FROM AI ANSWERS': arrow(b, a, 'fromAiAnswers'),
    'NOT FOUND': arrow(b, a, 'notFound'),
  });
  const rows = impact.pages.map((p) => row(p.path, changeText(p), p.before, p.after));
  rows.push(row('Total', '', impact.total.before, impact.total.after));
  const head = [
    `Merged ${impact.pullRequest.mergedAt}${impact.pullRequest.url ? ` (${impact.pullRequest.url})` : ''}.`,
    `Before: ${impact.before.from} to ${impact.before.to}; after: ${impact.after.from} to ${impact.after.to} (${impact.windowDays === 1 ? '1 whole day' : `${impact.windowDays} whole days`} each, UTC; the day of the merge in neither).`,
    ...(impact.clipped ? [impact.clipped] : []),
    ...(impact.pages.length === 0 ? ['The job touched no page of the site.'] : []),
    '',
  ];
  return [...head, table(rows, ['HUMANS', 'AI', 'VIEWS', 'FROM AI ANSWERS', 'NOT FOUND'])].join('\n');
}

/** --timeout of the commands that wait for a job. */
const timeoutOption = () => new Option('--timeout <duration>', 'with waiting: give up after this long (e.g. 30m), exit code 1').argParser(durationOption);

function registerCreate(jobs: Command): void {
  withConnection(jobs.command('create <prompt>'))
    .description('Create a job. With --wait, follow it and exit 0 completed, 1 failed, 2 archived.')
    .option('--model <model>', 'provider/model-id (one of the server\'s allowed models)')
    .addOption(new Option('--max-cost <usd>', "the job's spending limit in US dollars (the model needs a price); the project's default otherwise").argParser(positiveNumber))
    .addOption(new Option('--max-tokens <n>', "the job's limit in tokens (input + output); the project's default otherwise").argParser(intOption(1, 2_000_000_000)))
    .option('--wait', 'wait until the job is completed, failed or archived and print the pull request link')
    .addOption(timeoutOption())
    .option('--idempotency-key <key>', 'makes re-running the same command (e.g. a retried CI step) return the same job')
    .action(async (prompt: string, o: ConnectionOptions & { model?: string; maxCost?: number; maxTokens?: number; wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
      const client = clientFor(o);
      const job = await client.createJob({ prompt, model: o.model, maxCostUsd: o.maxCost, maxTokens: o.maxTokens }, { idempotencyKey: o.idempotencyKey });
      if (!o.wait) return printJob(job, o.json);
      write(process.stderr, `Created ${clean(job.id)} (${clean(job.model)})${job.source.ref ? ` on ${clean(job.source.ref)}` : ''}.`);
      await waitAndReport(client, job.id, o);
    });
}

/** A number above 0, e.g. a limit in dollars. */
function positiveNumber(value: string): number {
  const n = Number(value);
  if (!/^\d+(\.\d+)?$/.test(value.trim()) || !(n > 0)) throw new InvalidArgumentError('Give a number above 0, e.g. 0.5.');
  return n;
}

function registerUsage(jobs: Command): void {
  withConnection(jobs.command('usage'))
    .description("Show the project's token usage and cost per day, and this month against its budgets.")
    .addOption(new Option('--days <n>', 'days back from today (UTC), today included (default 30)').argParser(intOption(1, 366)))
    .action(async (o: ConnectionOptions & { days?: number }) => {
      const report = await clientFor(o).usage({ days: o.days });
      if (o.json) return writeJson(process.stdout, report);
      write(process.stdout, usageReportText(report));
    });
}

/** The usage report for people: a line for the month and its budgets, then a row per day. */
function usageReportText(report: UsageReport): string {
  const m = report.month;
  const budget = (spent: string, limit: string | null) => (limit === null ? spent : `${spent} of ${limit}`);
  const lines = m
    ? [
        `This month (${m.from} to ${m.resetsOn}, UTC): ${budget(`$${m.costUsd.toFixed(2)}`, m.budgetUsd === null ? null : `$${m.budgetUsd.toFixed(2)}`)}, ${budget(`${m.totalTokens} tokens`, m.tokenBudget === null ? null : `${m.tokenBudget} tokens`)}${m.budgetUsd === null && m.tokenBudget === null ? ' (no monthly budget)' : ''}.`,
        '',
      ]
    : [];
  const cost = (c: number | null) => (c === null ? '—' : `$${c.toFixed(4)}`);
  const days = table(report.days.map((d) => ({ DATE: d.date, JOBS: String(d.jobs), TOKENS: String(d.totalTokens), COST: cost(d.estimatedCostUsd) })));
  return [...lines, days, '', `Total: ${report.totals.totalTokens} tokens, ${cost(report.totals.estimatedCostUsd)}.`].join('\n');
}

function registerGet(jobs: Command): void {
  withConnection(jobs.command('get <jobId>'))
    .description('Show a job.')
    .action(async (id: string, o: ConnectionOptions) => {
      printJob(await clientFor(o).getJob(id), o.json);
    });
}

type ListOptions = ConnectionOptions & { status?: JobStatus; limit: number; cursor?: string; all?: boolean };

function registerList(jobs: Command): void {
  withConnection(jobs.command('list'))
    .description('List jobs, newest first.')
    .addOption(new Option('--status <status>', 'only jobs in this status').choices(JOB_STATUSES))
    .option('--limit <n>', 'jobs per page (1-100)', intOption(1, 100), 20)
    .option('--cursor <cursor>', 'continue from a previous page\'s nextCursor')
    .option('--all', 'every page')
    .action(async (o: ListOptions) => {
      const page = await listedJobs(clientFor(o), o);
      if (o.json) return writeJson(process.stdout, page);
      write(process.stdout, jobsTable(page.jobs));
      if (page.hasMore) write(process.stderr, `More jobs: --cursor ${clean(page.nextCursor ?? '')} or --all`);
    });
}

/** One page of jobs, or with --all every page as one. */
async function listedJobs(client: FolioClient, o: ListOptions): Promise<{ jobs: Job[]; nextCursor: string | null; hasMore: boolean }> {
  const query = { status: o.status, limit: o.limit, cursor: o.cursor };
  if (!o.all) return client.listJobsPage(query);
  const all: Job[] = [];
  for await (const job of client.listJobs(query)) all.push(job);
  return { jobs: all, nextCursor: null, hasMore: false };
}

function registerMessage(jobs: Command): void {
  withConnection(jobs.command('message <jobId> <prompt>'))
    .description('Send a follow-up instruction (the job becomes active again).')
    .option('--wait', 'wait until the job is done again; exit 0 completed, 1 failed, 2 archived')
    .addOption(timeoutOption())
    .option('--idempotency-key <key>', 'makes re-running the same command send the message once')
    .action(async (id: string, prompt: string, o: ConnectionOptions & { wait?: boolean; timeout?: number; idempotencyKey?: string }) => {
      const client = clientFor(o);
      // Read before sending: the new turn's events (from its message.queued on) come after this one.
      const after = o.wait ? await lastEventId(client, id) : undefined;
      const job = await client.sendMessage(id, prompt, { idempotencyKey: o.idempotencyKey });
      if (!o.wait) return printJob(job, o.json);
      await waitAndReport(client, job.id, { ...o, after });
    });
}

/** The prompt and each follow-up: who sent it (the API, or a review by @name with its link) and the agent's answer. */
function messagesTable(messages: JobMessage[]): string {
  return table(
    messages.map((m) => {
      const from = m.origin ? messageOrigin(m.origin) : null;
      return { SEQ: String(m.seq), FROM: from ? `${from.label.replace(/^from /, '')} ${from.url}` : m.seq === 1 ? 'prompt' : 'API', OUTCOME: m.outcome ?? 'waiting', TITLE: m.title ?? '', PROMPT: m.prompt.split('\n')[0].slice(0, 80) };
    }),
  );
}

function registerMessages(jobs: Command): void {
  withConnection(jobs.command('messages <jobId>'))
    .description("List a job's prompt and follow-ups (a follow-up from a review comment names the reviewer and links it).")
    .action(async (id: string, o: ConnectionOptions) => {
      const messages = await clientFor(o).jobMessages(id);
      if (o.json) return writeJson(process.stdout, { messages });
      write(process.stdout, messagesTable(messages));
    });
}

function registerArchive(jobs: Command): void {
  withConnection(jobs.command('archive <jobId>'))
    .description('Archive a job (final); stops it if it is running.')
    .action(async (id: string, o: ConnectionOptions) => {
      const job = await clientFor(o).archiveJob(id);
      if (o.json) writeJson(process.stdout, job);
      else write(process.stdout, `Archived ${clean(job.id)}.`);
    });
}

function registerWait(jobs: Command): void {
  withConnection(jobs.command('wait <jobId>'))
    .description('Wait until a job is completed, failed or archived; exit 0, 1 or 2.')
    .addOption(timeoutOption())
    .action(async (id: string, o: ConnectionOptions & { timeout?: number }) => {
      const client = clientFor(o);
      // Only what happens from now on: the job's history is `folio jobs events`.
      await waitAndReport(client, id, { ...o, after: await lastEventId(client, id) });
    });
}

function registerEvents(jobs: Command): void {
  withConnection(jobs.command('events <jobId>'), 'one JSON event per line (NDJSON)')
    .description('Print a job\'s events; --follow streams them live until the job is done.')
    .option('--follow', 'keep streaming new events until the job leaves active (resumes after dropped connections)')
    .option('--after <id>', 'only events after this event id', intOption(0, Number.MAX_SAFE_INTEGER))
    .action(async (id: string, o: ConnectionOptions & { follow?: boolean; after?: number }) => {
      const client = clientFor(o);
      const stop = new AbortController();
      const interrupt = () => stop.abort();
      process.once('SIGINT', interrupt);
      try {
        for await (const e of client.jobEvents(id, { follow: !!o.follow, after: o.after, signal: stop.signal })) {
          write(process.stdout, o.json ? JSON.stringify(e) : eventLine(e));
        }
      } catch (err) {
        if (!stop.signal.aborted) throw err;
      } finally {
        process.off('SIGINT', interrupt);
      }
    });
}
