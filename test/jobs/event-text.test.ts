// Every declared job event type: a sample of its data that its schema accepts, and the sentence the
// dashboard and the CLI show for it.
import { readFileSync } from 'node:fs';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';
import { JOB_EVENT_DATA, JOB_EVENT_TYPES, JobEventSchema, type EmitJobEvent, type JobEventData, type JobEventType } from '../../src/contracts/job-events.ts';
import { byteSize, eventSentence, toolCallSentence } from '../../src/jobs/event-text.ts';

const problem = { check: 'links' as const, path: 'guides/a.mdx', line: 3, target: '/gone', message: 'Link "/gone" does not lead to a page.' };

/** One sample per type, with its sentence; a declared type without one does not compile. */
const SAMPLES: { [T in JobEventType]: [JobEventData<T>, string] } = {
  'job.created': [{ model: 'anthropic/claude-sonnet-4-5', ref: 'folio/job_1', baseRef: 'main' }, 'Job created: anthropic/claude-sonnet-4-5, on branch folio/job_1 from main'],
  'message.queued': [{ seq: 3 }, 'Follow-up 2 queued'],
  'run.started': [{ worker: 'host-1:42:0', resumed: true }, 'Worker host-1:42:0 resumed the run'],
  workspace: [
    { branch: 'folio/job_1', baseRef: 'main', startSha: '0123456789abcdef', resumed: false, recycled: true, ms: 1234 },
    'Workspace ready on folio/job_1 at 0123456789 (1,234 ms)',
  ],
  docs_profile: [{ framework: 'mintlify', configFile: 'docs.json', docsRoot: '' }, 'Docs site: mintlify (docs.json)'],
  instructions: [
    { files: [{ path: 'AGENTS.md', scope: '', cut: false }, { path: 'CLAUDE.md', scope: '', cut: true }], skipped: [{ path: 'docs/AGENTS.md', reason: 'a symbolic link' }] },
    "Following the team's instructions in AGENTS.md, CLAUDE.md (cut); skipped docs/AGENTS.md (a symbolic link)",
  ],
  budget_exceeded: [
    { inputTokens: 900, outputTokens: 100, costUsd: 0.36, maxCostUsd: 0.3, maxTokens: null, message: 'The job reached its limit of $0.30 ($0.36 spent).' },
    'The job reached its limit of $0.30 ($0.36 spent).',
  ],
  usage: [{ step: 2, inputTokens: 1500, outputTokens: 1, totalTokens: 1501 }, 'Model call 2: 1,500 input tokens + 1 output token'],
  model_retry: [{ attempt: 1, delayMs: 2400, error: 'Overloaded' }, 'Model call failed, retry 1 in 2 s: Overloaded'],
  model_message: [{ step: 1, text: 'I will fix the retry guide.' }, 'I will fix the retry guide.'],
  tool_call: [
    { step: 1, toolCallId: 'c1', tool: 'write_file', args: { path: 'guides/retries.mdx', content: 'x'.repeat(1229) } },
    'Wrote guides/retries.mdx (1.2 KB)',
  ],
  tool_result: [{ step: 1, toolCallId: 'c1', tool: 'read_file', result: '1: ---\n2: title: Retries\n3: ---' }, 'Result of read_file: 1: --- (3 lines)'],
  validation: [
    { round: 1, ok: false, issues: [{ path: 'docs.json', message: 'Unexpected token } at line 4' }] },
    'Round 1: 1 problem in the changed files, first: docs.json: Unexpected token } at line 4',
  ],
  checks: [
    {
      round: 2,
      mode: 'warn',
      framework: 'mintlify',
      ran: ['links', 'anchors', 'llms-txt'],
      pagesChecked: 4,
      ok: false,
      problemCount: 2,
      preExistingCount: 1,
      problems: [problem, problem],
      preExisting: [problem],
      truncated: false,
      build: { tool: 'mint', command: 'mint broken-links', status: 'passed', reason: null, setup: 'cached', ms: 800 },
    },
    'Docs checks (round 2, warn): links, anchors, llms-txt on 4 pages: 2 new problems, 1 already on the base branch; site build passed',
  ],
  agent_finished: [
    { title: 'Document retries', summary: 'Added a guide.', steps: 7, usage: { inputTokens: 900, outputTokens: 300, totalTokens: 1200 } },
    'Agent finished after 7 steps: Document retries (1,200 tokens)',
  ],
  commit: [
    { sha: 'abcdef0123456789', files: ['a.mdx', 'b.mdx', 'c.mdx', 'd.mdx', 'e.mdx', 'f.mdx'], fileCount: 6 },
    'Committed abcdef0123: 6 files (a.mdx, b.mdx, c.mdx, d.mdx, e.mdx, and 1 more)',
  ],
  push: [{ branch: 'folio/job_1', sha: 'abcdef0123456789' }, 'Pushed folio/job_1 at abcdef0123'],
  no_changes: [{ message: 'The agent changed no files in this turn.' }, 'The agent changed no files in this turn.'],
  changes: [{ baseSha: 'a1', headSha: 'b2', files: 2, additions: 1200, deletions: 3 }, '2 files changed against the base: +1,200 −3'],
  pull_request: [
    { url: 'https://github.com/acme/docs/pull/12', number: 12, created: true, updated: false },
    'Opened pull request #12: https://github.com/acme/docs/pull/12',
  ],
  'turn.completed': [{ seq: 1, title: 'Document retries', summary: 'Added a guide.', prLink: null }, 'Turn finished: Document retries'],
  error: [{ seq: 1, code: 'model_error', message: 'The model gave up.' }, 'Failed (model_error): The model gave up.'],
  'run.stopped': [{ reason: 'archived' }, 'Run stopped: the job was archived'],
  'job.archived': [{}, 'Job archived'],
};

const event = (type: string, data: unknown, id = 1) => ({ id, at: '2026-11-27T00:00:00.000Z', type, data });

describe('job event sentences', () => {
  it.each(JOB_EVENT_TYPES)('%s: its schema takes the sample, and it reads as a sentence', (type) => {
    const [data, sentence] = SAMPLES[type];
    expect(Value.Errors(JOB_EVENT_DATA[type], data)).toEqual([]);
    expect(Value.Check(JobEventSchema, event(type, data))).toBe(true);
    expect(eventSentence(event(type, data))).toBe(sentence);
  });

  it('refuses a sample of the wrong type in the OpenAPI schema', () => {
    expect(Value.Check(JobEventSchema, event('push', SAMPLES.commit[0]))).toBe(false);
    expect(Value.Check(JobEventSchema, event('no_such_type', {}))).toBe(false);
  });

  it('says each tool call as what it did, never its arguments as JSON', () => {
    expect(toolCallSentence('edit_file', { path: 'docs.json', old_string: '{"a":1}', new_string: '{"a":2}' })).toBe('Edited docs.json');
    expect(toolCallSentence('read_file', { path: 'docs.json' })).toBe('Read docs.json');
    expect(toolCallSentence('read_file', { path: 'a.md', start_line: 10, end_line: 20 })).toBe('Read a.md (lines 10–20)');
    expect(toolCallSentence('search', { pattern: 'retry', glob: '**/*.mdx' })).toBe('Searched for “retry” in files matching **/*.mdx');
    expect(toolCallSentence('list_files', { path: 'guides' })).toBe('Listed the files in guides');
    expect(toolCallSentence('delete_file', { path: 'old.md' })).toBe('Deleted old.md');
    expect(toolCallSentence('move_file', { from: 'a.md', to: 'b.md' })).toBe('Moved a.md to b.md');
    expect(toolCallSentence('finish', { title: 'Fix links', summary: 'x' })).toBe('Finished the turn: Fix links');
    expect(toolCallSentence('web_fetch', { url: 'https://x' })).toBe('Called the tool web_fetch');
    expect(byteSize(512)).toBe('512 B');
    expect(byteSize(3.5 * 1024 * 1024)).toBe('3.5 MB');
  });

  it('says where a job came from: a suggestion, the weekly run, a code change', () => {
    const created = (trigger: JobEventData<'job.created'>['trigger']) => eventSentence(event('job.created', { ...SAMPLES['job.created'][0], trigger }));
    expect(created({ kind: 'suggestion', suggestionId: 'sug_1', suggestionKind: 'broken_paths', automatic: false })).toBe(
      'Job created from a traffic suggestion (broken paths, sug_1): anthropic/claude-sonnet-4-5, on branch folio/job_1 from main',
    );
    expect(created({ kind: 'suggestion', suggestionId: 'sug_2', suggestionKind: 'agent_markdown', automatic: true })).toMatch(
      /^Job created from the weekly automatic run of a traffic suggestion \(Markdown for AI agents, sug_2\)/,
    );
    expect(created({ kind: 'pull_request_merged', host: 'github', repository: 'https://github.com/acme/app', url: 'https://github.com/acme/app/pull/3' })).toMatch(
      /^Job created for a code change \(Merged pull request on GitHub: https:\/\/github.com\/acme\/app\/pull\/3\)/,
    );
  });

  it('says a follow-up from a review comment with the reviewer and the link', () => {
    const origin = { kind: 'review' as const, reviewer: 'alice', url: 'https://github.com/acme/docs/pull/7#discussion_r1' };
    const e = { id: 4, at: '2026-11-26T10:00:00.000Z', type: 'message.queued' as const, data: { seq: 2, origin } };
    expect(eventSentence(e)).toBe('Follow-up 1 queued, from a review by @alice: https://github.com/acme/docs/pull/7#discussion_r1');
  });

  it('reads clipped data and types this version does not declare without failing', () => {
    const preview = JSON.stringify({ step: 1, toolCallId: 'c1', tool: 'write_file', args: { path: 'big.mdx', content: 'x'.repeat(200) } }).slice(0, 120);
    expect(eventSentence(event('tool_call', { clipped: true, preview }))).toBe('Wrote big.mdx (too large to store whole)');
    expect(eventSentence(event('checks', { clipped: true, preview: '{"round":1' }))).toBe('checks: too large to store whole');
    expect(eventSentence(event('review.follow_up', { message: 'Follow-up from a review' }))).toBe('Follow-up from a review');
    expect(eventSentence(event('step', { n: 1 }))).toBe('Event step');
    expect(eventSentence(event('step', null))).toBe('Event step');
    expect(eventSentence(event('run.stopped', { reason: 'lease_lost' }))).toMatch(/lost the job's lease/);
  });
});

describe('recording events', () => {
  it('takes only a declared type with its data shape (checked when compiling: tsc fails if an error below goes away)', async () => {
    const recorded: { type: string; data: unknown }[] = [];
    const emit: EmitJobEvent = async (type, data) => void recorded.push({ type, data });
    await emit('push', { branch: 'folio/job_1', sha: 'abc' });
    // @ts-expect-error a type nobody declared
    await emit('pushed', { branch: 'folio/job_1', sha: 'abc' });
    // @ts-expect-error the data of another type
    await emit('push', { url: 'https://example.com/pull/1', number: 1, created: true, updated: false });
    // @ts-expect-error a field of the wrong type
    await emit('usage', { step: 1, inputTokens: '12', outputTokens: 1, totalTokens: 13 });
    expect(recorded.map((r) => r.type)).toEqual(['push', 'pushed', 'push', 'usage']);
  });
});

describe('the documented events', () => {
  it('docs/agent.md lists exactly the declared event types', () => {
    const doc = readFileSync(new URL('../../docs/agent.md', import.meta.url), 'utf8');
    const section = doc.slice(doc.indexOf('## Events'), doc.indexOf('\n## ', doc.indexOf('## Events') + 3));
    const listed = [...section.matchAll(/^\| `([a-z_.]+)` \|/gm)].map((m) => m[1]);
    expect(listed).toEqual(JOB_EVENT_TYPES);
  });
});
