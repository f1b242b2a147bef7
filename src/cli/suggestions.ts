// `folio suggestions list|start`: what the project's traffic proposes to the agent, and starting the
// job of a suggestion, through the typed client.
import type { Command } from 'commander';
import type { FolioClient } from '../client/client.ts';
import type { StartedSuggestion, Suggestion, SuggestionList, SuggestionsQuery } from '../client/types.ts';
import { printJob, waitAndReport } from './jobs.ts';
import { clientFor, durationOption, intOption, withConnection, type ConnectionOptions } from './options.ts';
import { clean, count, table, write, writeJson } from './output.ts';

type RangeOptions = ConnectionOptions & { from?: string; to?: string; minVisitors?: number };

function withRange(cmd: Command): Command {
  return withConnection(cmd)
    .option('--from <date>', 'start (inclusive): YYYY-MM-DD or ISO 8601 (default: 30 days before --to)')
    .option('--to <date>', 'end (exclusive; default: the end of today, UTC)')
    .option('--min-visitors <n>', 'visitors a not-found path needs to be proposed (server default 3)', intOption(1, 1_000_000));
}

const queryOf = (o: RangeOptions): SuggestionsQuery => ({ dateFrom: o.from, dateTo: o.to, minVisitors: o.minVisitors });

function suggestionText(s: Suggestion): string {
  const rows = s.paths.map((p) => ({
    PATH: p.path,
    VISITORS: String(p.visitors.total),
    HUMAN: String(p.visitors.human),
    AI: String(p.visitors.ai),
    'LIKELY PAGE': p.candidates.map((c) => `${c.url} (${c.score.toFixed(2)})`).join(', ') || '—',
  }));
  return `${clean(s.id)}  ${clean(s.title)}\n${table(rows, ['VISITORS', 'HUMAN', 'AI'])}`;
}

/** Paths listed for people only: shown percent-encoded (`escaped`), with why they are not proposed. */
function notProposedText(paths: SuggestionList['notProposed']): string {
  const rows = paths.map((p) => ({ PATH: p.escaped, VISITORS: String(p.visitors.total), WHY: p.message }));
  return `Not proposed (not shaped like a path of the site; never given to the agent):\n${table(rows, ['VISITORS'])}`;
}

function startedText(s: StartedSuggestion): string {
  const from = s.measuredFrom === 'merge' ? 'merge' : 'job completed';
  const since = !s.measuredSince
    ? `after: not measured (${s.job.status === 'active' ? 'the job is still running' : `the job ${s.job.status} without a fix`})`
    : s.afterReady
      ? `after: since the ${from} on ${s.measuredSince.slice(0, 10)} (${s.afterDays} days)`
      : `after: not yet (the ${from} on ${s.measuredSince.slice(0, 16).replace('T', ' ')} UTC; counted once a day has passed)`;
  const pr = s.pullRequest ? `pull request ${s.pullRequest.state}` : 'no pull request state yet';
  const rows = s.paths.map((p) => ({ PATH: p.path, BEFORE: String(p.before.total), AFTER: p.after ? String(p.after.total) : '—' }));
  return `${clean(s.job.id)}  ${s.job.status}, ${pr}${s.automatic ? ', weekly automatic run' : ''}  ${clean(s.title)}\n  before: ${s.beforeDays} days; ${since}\n${table(rows, ['BEFORE', 'AFTER'])}`;
}

function listText(l: SuggestionList): string {
  const out: string[] = [];
  const site = l.site.read ? `${l.site.framework} site, ${count(l.site.pages, 'page')} at ${l.site.commit?.slice(0, 10)}` : `the repository could not be read (${clean(l.site.error ?? '')}): no likely pages`;
  out.push(`Not-found traffic ${l.dateFrom.slice(0, 10)} – ${l.dateTo.slice(0, 10)}, paths with at least ${count(l.minVisitors, 'visitor')}; ${site}.`);
  for (const note of l.site.notes) out.push(`Note: ${clean(note)}`);
  if (l.suggestions.length === 0) out.push('\nNothing to propose.');
  for (const s of l.suggestions) out.push('', suggestionText(s));
  if (l.suggestions.length > 0) out.push(`\nStart one: folio suggestions start <id>`);
  if (l.notProposed.length > 0) out.push('', notProposedText(l.notProposed));
  if (l.started.length > 0) out.push('\nStarted from suggestions:');
  for (const s of l.started) out.push('', startedText(s));
  return out.join('\n');
}

function registerList(group: Command): void {
  withRange(group.command('list'))
    .description('What the traffic proposes: broken paths with the pages likely to replace them, Markdown AI agents asked for; and the jobs started from suggestions with their before/after counts.')
    .option('--prompt', 'also print each suggestion\'s prompt')
    .action(async (o: RangeOptions & { prompt?: boolean }) => {
      const list = await clientFor(o).suggestions(queryOf(o));
      if (o.json) return writeJson(process.stdout, list);
      write(process.stdout, listText(list));
      // Cleaned line by line: the prompt's lines stay lines.
      if (o.prompt) for (const s of list.suggestions) write(process.stdout, `\n--- prompt of ${clean(s.id)}\n${s.prompt.split('\n').map(clean).join('\n')}`);
    });
}

function registerStart(group: Command): void {
  withRange(group.command('start <suggestionId>'))
    .description('Start the agent job of a suggestion (listed with the same --from/--to/--min-visitors). With --wait, follow it like `folio jobs create --wait`.')
    .option('--wait', 'wait until the job is completed, failed or archived and print the pull request link')
    .option('--timeout <duration>', 'with --wait: give up after this long (e.g. 30m), exit code 1', durationOption)
    .action(async (id: string, o: RangeOptions & { wait?: boolean; timeout?: number }) => {
      const client: FolioClient = clientFor(o);
      const { job, suggestion } = await client.startSuggestion(id, queryOf(o));
      if (!o.wait) return printJob(job, o.json);
      write(process.stderr, `Started ${clean(job.id)} from "${clean(suggestion.title)}" (${count(suggestion.paths.length, 'path')}).`);
      await waitAndReport(client, job.id, o);
    });
}

export function register(group: Command): void {
  registerList(group);
  registerStart(group);
}
