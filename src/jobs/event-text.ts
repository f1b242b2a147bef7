// A job event as one sentence, the one way the dashboard and the CLI say it: "Wrote guides/retries.mdx
// (1.2 KB)", never the raw JSON of a tool's arguments (that stays behind the dashboard's disclosure
// and the CLI's --json). Every declared type has its sentence here, or this does not compile.
import { isClipped, type JobEventData, type JobEventType } from '../contracts/job-events.ts';
import { messageOrigin, startedBy } from './started-by.ts';

/** What this reads of an event: a declared one, or one of a type this version does not know. */
export interface EventLike {
  type: string;
  data: unknown;
}

const num = (n: unknown) => (typeof n === 'number' && Number.isFinite(n) ? n : 0);
const str = (s: unknown) => (typeof s === 'string' ? s : '');
const nf = (n: unknown) => num(n).toLocaleString('en-US');
const plural = (n: unknown, one: string, many = `${one}s`) => `${nf(n)} ${num(n) === 1 ? one : many}`;
const short = (sha: unknown) => str(sha).slice(0, 10);
const firstLine = (s: string, max = 120) => {
  const line = s.split('\n', 1)[0].trim();
  return line.length > max ? `${line.slice(0, max - 1)}…` : line;
};

/** A size as people read it: 512 B, 1.2 KB, 3.4 MB. */
export function byteSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

const utf8Bytes = (s: string) => new TextEncoder().encode(s).length;

/** What a tool call did, by the tool and its arguments. */
export function toolCallSentence(tool: string, args: Record<string, unknown>): string {
  const path = str(args.path);
  switch (tool) {
    case 'read_file': {
      const lines = args.start_line || args.end_line ? ` (lines ${num(args.start_line) || 1}–${num(args.end_line) || 'end'})` : '';
      return `Read ${path}${lines}`;
    }
    case 'write_file':
      return `Wrote ${path}${typeof args.content === 'string' ? ` (${byteSize(utf8Bytes(args.content))})` : ''}`;
    case 'edit_file':
      return `Edited ${path}${args.replace_all === true ? ' (every match)' : ''}`;
    case 'delete_file':
      return `Deleted ${path}`;
    case 'move_file':
      return `Moved ${str(args.from)} to ${str(args.to)}`;
    case 'search': {
      const where = [path && `in ${path}`, str(args.glob) && `in files matching ${str(args.glob)}`].filter(Boolean).join(' ');
      return `Searched for “${str(args.pattern)}”${where ? ` ${where}` : ''}`;
    }
    case 'list_files': {
      const where = [path && ` in ${path}`, str(args.glob) && ` matching ${str(args.glob)}`].join('');
      return `Listed the files${where}`;
    }
    case 'finish':
      return `Finished the turn${str(args.title) ? `: ${str(args.title)}` : ''}`;
    default:
      return `Called the tool ${tool}`;
  }
}

type Sentences = { [T in JobEventType]: (d: JobEventData<T>) => string };

const SENTENCES: Sentences = {
  'job.created': (d) => {
    const origin = !d.trigger
      ? 'Job created'
      : d.trigger.kind === 'suggestion'
        ? `Job created from ${startedBy(d.trigger).label.replace(/^(A|The)\b/, (w) => w.toLowerCase())}`
        : `Job created for a code change (${startedBy(d.trigger).label}: ${d.trigger.url})`;
    return `${origin}: ${d.model}, on branch ${d.ref} from ${d.baseRef}`;
  },
  'message.queued': (d) => {
    const queued = num(d.seq) > 1 ? `Follow-up ${nf(num(d.seq) - 1)} queued` : 'Instruction queued';
    if (!d.origin) return queued;
    const from = messageOrigin(d.origin);
    return `${queued}, ${from.label}: ${from.url}`;
  },
  'run.started': (d) => `Worker ${d.worker} ${d.resumed ? 'resumed' : 'started'} the run`,
  workspace: (d) => `Workspace ready on ${d.branch} at ${short(d.startSha)}${d.resumed ? ', resuming earlier work' : ''} (${nf(d.ms)} ms)`,
  docs_profile: (d) => `Docs site: ${d.framework}${d.configFile ? ` (${d.configFile})` : ''}${d.docsRoot ? `, in ${d.docsRoot}/` : ''}`,
  instructions: (d) => {
    const given = d.files.map((f) => (f.cut ? `${f.path} (cut)` : f.path));
    const skipped = d.skipped.length ? `; skipped ${d.skipped.map((f) => `${f.path} (${f.reason})`).join(', ')}` : '';
    return given.length ? `Following the team's instructions in ${given.join(', ')}${skipped}` : `No team instruction files${skipped}`;
  },
  budget_exceeded: (d) => str(d.message) || 'The job reached its spending limit',
  usage: (d) => `Model call ${nf(d.step)}: ${plural(d.inputTokens, 'input token')} + ${plural(d.outputTokens, 'output token')}`,
  model_retry: (d) => `Model call failed, retry ${nf(d.attempt)} in ${Math.round(num(d.delayMs) / 1000)} s: ${d.error}`,
  model_message: (d) => str(d.text),
  tool_call: (d) => toolCallSentence(str(d.tool), d.args && typeof d.args === 'object' ? d.args : {}),
  tool_result: (d) => {
    const text = str(d.result);
    const lines = text.split('\n').length;
    return `Result of ${d.tool}: ${firstLine(text) || '(empty)'}${lines > 1 ? ` (${plural(lines, 'line')})` : ''}`;
  },
  validation: (d) => {
    const issues = Array.isArray(d.issues) ? d.issues : [];
    if (d.ok || issues.length === 0) return `Changed files parse (round ${nf(d.round)})`;
    return `Round ${nf(d.round)}: ${plural(issues.length, 'problem')} in the changed files, first: ${issues[0].path}: ${issues[0].message}`;
  },
  checks: (d) => {
    const outcome = d.ok ? 'no new problems' : `${plural(d.problemCount, 'new problem')}`;
    const before = d.preExistingCount ? `, ${nf(d.preExistingCount)} already on the base branch` : '';
    const build = d.build ? `; site build ${d.build.status}` : '';
    const ran = Array.isArray(d.ran) && d.ran.length ? d.ran.join(', ') : 'nothing';
    return `Docs checks (round ${nf(d.round)}, ${d.mode}): ${ran} on ${plural(d.pagesChecked, 'page')}: ${outcome}${before}${build}`;
  },
  agent_finished: (d) => `Agent finished after ${plural(d.steps, 'step')}${d.title ? `: ${d.title}` : ''}${d.usage ? ` (${plural(d.usage.totalTokens, 'token')})` : ''}`,
  commit: (d) => {
    const files = Array.isArray(d.files) ? d.files : [];
    const more = num(d.fileCount) > 5 ? `, and ${nf(num(d.fileCount) - 5)} more` : '';
    return `Committed ${short(d.sha)}: ${plural(d.fileCount ?? files.length, 'file')}${files.length ? ` (${files.slice(0, 5).join(', ')}${more})` : ''}`;
  },
  push: (d) => `Pushed ${d.branch} at ${short(d.sha)}`,
  no_changes: (d) => str(d.message) || 'The agent changed no files in this turn.',
  changes: (d) => `${plural(d.files, 'file')} changed against the base: +${nf(d.additions)} −${nf(d.deletions)}`,
  pull_request: (d) => {
    const verb = d.created ? 'Opened' : 'Updated';
    return d.url ? `${verb} pull request #${d.number}: ${d.url}` : `${verb} pull request #${d.number} (no link: ${d.linkRefused ?? 'none given'})`;
  },
  'turn.completed': (d) => (d.title ? `Turn finished: ${d.title}` : 'Turn finished'),
  error: (d) => `Failed (${d.code}): ${d.message ?? 'no reason given'}`,
  'run.stopped': (d) =>
    d.reason === 'archived' ? 'Run stopped: the job was archived' : "Run stopped: this worker lost the job's lease; another one resumes it",
  'job.archived': () => 'Job archived',
};

const isDeclared = (type: string): type is JobEventType => Object.hasOwn(SENTENCES, type);

/** A clipped tool call still says what it did: its tool and path lead the stored preview. */
function clippedSentence(type: string, preview: string): string {
  if (type === 'tool_call') {
    const tool = /"tool":"([^"\\]*)"/.exec(preview)?.[1] ?? '';
    const path = /"path":"([^"\\]*)"/.exec(preview)?.[1];
    if (tool) return `${toolCallSentence(tool, path ? { path } : {})} (too large to store whole)`;
  }
  return `${type}: too large to store whole`;
}

/** An event of a type this version does not declare: its message, title or summary if it has one, else its type. */
function undeclaredSentence(e: EventLike): string {
  const d = (e.data && typeof e.data === 'object' ? e.data : {}) as Record<string, unknown>;
  const said = ['message', 'summary', 'title', 'text', 'reason'].map((k) => str(d[k])).find(Boolean);
  return said ?? `Event ${e.type}`;
}

/** The event as one sentence (model messages may run over several lines). */
export function eventSentence(e: EventLike): string {
  if (!isDeclared(e.type)) return undeclaredSentence(e);
  const data = (e.data && typeof e.data === 'object' ? e.data : {}) as object;
  if (isClipped(data)) return clippedSentence(e.type, data.preview);
  return (SENTENCES[e.type] as (d: object) => string)(data);
}

/** Whether the sentence already is the event's data, so a raw view would only repeat it. */
export const sentenceIsWhole = (type: string) => type === 'model_message' || type === 'job.archived' || type === 'message.queued';
