import { mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { APICallError } from 'ai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AgentFailure, runAgent, type AgentLimits } from '../../src/agent/loop.ts';
import { conversation } from '../../src/agent/prompts.ts';
import { openWorkspace, type Workspace } from '../../src/agent/workspace.ts';
import { callTool, hang, say, scripted, type Step } from './mock-model.ts';

let dir: string;
let ws: Workspace;
let events: { type: string; data: Record<string, unknown> }[];

const limits: AgentLimits = {
  maxSteps: 20,
  maxWallClockMs: 60_000,
  maxTokens: 0,
  maxRepeatedCalls: 3,
  maxValidationRounds: 2,
  maxRetries: 3,
  retryBaseMs: 1,
};

beforeEach(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'folio-loop-'));
  mkdirSync(path.join(dir, 'docs'));
  writeFileSync(path.join(dir, 'docs/index.mdx'), '---\ntitle: Home\n---\n\n# Home\n\nWelcome.\n');
  ws = await openWorkspace(dir);
  events = [];
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

function run(steps: Step[], over: Partial<AgentLimits> = {}, signal = new AbortController().signal, prompt = 'Document the --dry-run flag') {
  const model = scripted(steps);
  const p = runAgent({
    model,
    workspace: ws,
    system: 'You are a test agent.',
    messages: conversation([], prompt),
    limits: { ...limits, ...over },
    signal,
    emit: (type, data) => {
      events.push({ type, data: data as Record<string, unknown> });
    },
  });
  return { model, p };
}

async function failure(p: Promise<unknown>): Promise<AgentFailure> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(AgentFailure);
  return err as AgentFailure;
}

describe('the tool loop', () => {
  it('runs tools, records events and returns the finish title and summary', async () => {
    const { p, model } = run([
      callTool('read_file', { path: 'docs/index.mdx' }),
      callTool('edit_file', { path: 'docs/index.mdx', old_string: 'Welcome.', new_string: 'Welcome. Use `--dry-run` to preview.' }),
      callTool('finish', { title: 'Document --dry-run', summary: 'Added a sentence on --dry-run.' }),
    ]);
    const r = await p;
    expect(r).toMatchObject({ title: 'Document --dry-run', summary: 'Added a sentence on --dry-run.', steps: 3, touched: ['docs/index.mdx'] });
    expect(r.usage).toEqual({ inputTokens: 30, outputTokens: 15, totalTokens: 45 });
    expect(readFileSync(path.join(dir, 'docs/index.mdx'), 'utf8')).toContain('Use `--dry-run` to preview.');
    const types = events.map((e) => e.type);
    expect(types.filter((t) => t === 'tool_call')).toHaveLength(3);
    expect(types.filter((t) => t === 'tool_result')).toHaveLength(3);
    expect(types.filter((t) => t === 'usage')).toHaveLength(3);
    expect(events.find((e) => e.type === 'tool_call')?.data).toMatchObject({ tool: 'read_file', args: { path: 'docs/index.mdx' } });
    expect(events.find((e) => e.type === 'validation')?.data).toMatchObject({ ok: true });
    // The second call saw the first tool's result.
    const second = JSON.stringify(model.doGenerateCalls[1].prompt);
    expect(second).toContain('Welcome.');
    expect(model.doGenerateCalls[0].tools?.map((t) => t.name).sort()).toEqual(
      ['delete_file', 'edit_file', 'finish', 'list_files', 'move_file', 'read_file', 'search', 'write_file'],
    );
  });

  it('hands tool errors back to the model instead of failing', async () => {
    const { p, model } = run([callTool('read_file', { path: '../../etc/passwd' }), callTool('finish', { title: 'T', summary: 'S' })]);
    await p;
    expect(JSON.stringify(model.doGenerateCalls[1].prompt)).toContain('Error: Path');
  });

  it('nudges a model that answers with text only', async () => {
    const { p, model } = run([say('I think I am done.'), callTool('finish', { title: 'T', summary: 'S' })]);
    await p;
    expect(events.find((e) => e.type === 'model_message')?.data.text).toBe('I think I am done.');
    expect(JSON.stringify(model.doGenerateCalls[1].prompt)).toContain('call the finish tool');
  });

  it('shows earlier prompts and summaries on a follow-up', async () => {
    const model = scripted([callTool('finish', { title: 'T2', summary: 'S2' })]);
    await runAgent({
      model,
      workspace: ws,
      system: 's',
      messages: conversation([{ prompt: 'First ask', title: 'First title', summary: 'First summary' }], 'Second ask'),
      limits,
      signal: new AbortController().signal,
      emit: () => {},
    });
    const prompt = JSON.stringify(model.doGenerateCalls[0].prompt);
    expect(prompt).toContain('First ask');
    expect(prompt).toContain('First summary');
    expect(prompt).toContain('Second ask');
    expect(prompt.indexOf('First ask')).toBeLessThan(prompt.indexOf('Second ask'));
  });
});

describe('guardrails', () => {
  it('step_limit', async () => {
    const { p } = run(Array.from({ length: 10 }, (_, i) => callTool('list_files', { glob: `*${i}` })), { maxSteps: 4 });
    const f = await failure(p);
    expect(f.code).toBe('step_limit');
    expect(f.message).toContain('4 steps');
  });

  it('no_progress on the same call repeated', async () => {
    const { p } = run(Array.from({ length: 10 }, () => callTool('read_file', { path: 'docs/index.mdx' })));
    const f = await failure(p);
    expect(f.code).toBe('no_progress');
    expect(f.message).toContain('read_file');
  });

  it('does not count different arguments as repeats', async () => {
    const { p } = run([
      callTool('read_file', { path: 'docs/index.mdx' }),
      callTool('read_file', { path: 'docs/index.mdx', start_line: 1 }),
      callTool('read_file', { path: 'docs/index.mdx' }),
      callTool('read_file', { start_line: 1, path: 'docs/index.mdx' }),
      callTool('finish', { title: 'T', summary: 'S' }),
    ]);
    expect((await p).title).toBe('T');
  });

  it('token_budget', async () => {
    const { p } = run([callTool('list_files', {}, [400, 100]), callTool('list_files', { glob: '*' }, [400, 200])], { maxTokens: 1000 });
    const f = await failure(p);
    expect(f.code).toBe('token_budget');
    expect(f.message).toContain('1100');
  });

  it('time_limit while the model hangs', async () => {
    const { p } = run([hang()], { maxWallClockMs: 150 });
    const f = await failure(p);
    expect(f.code).toBe('time_limit');
  });

  it('stops promptly when the run is aborted (archive)', async () => {
    const ac = new AbortController();
    const { p } = run([callTool('list_files', {}), hang()], {}, ac.signal);
    setTimeout(() => ac.abort('archived'), 50);
    const err = await p.catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    expect((err as Error).name).toBe('AbortError');
    expect((err as Error).message).toContain('archived');
  });
});

describe('provider errors', () => {
  const apiError = (status: number, message: string) =>
    new APICallError({ message, url: 'http://model/v1/chat/completions', requestBodyValues: {}, statusCode: status, isRetryable: status === 429 || status >= 500 });

  it('retries 429 and 5xx with backoff, then succeeds', async () => {
    let calls = 0;
    const flaky: Step = async () => {
      calls++;
      throw apiError(calls === 1 ? 429 : 503, 'Rate limit reached for requests');
    };
    const { p } = run([flaky, flaky, callTool('finish', { title: 'T', summary: 'S' })]);
    expect((await p).title).toBe('T');
    expect(events.filter((e) => e.type === 'model_retry').map((e) => e.data.attempt)).toEqual([1, 2]);
  });

  it('model_error with the provider message when retries run out', async () => {
    const down: Step = async () => {
      throw apiError(503, 'The server is overloaded');
    };
    const { p } = run([down, down, down], { maxRetries: 2 });
    const f = await failure(p);
    expect(f.code).toBe('model_error');
    expect(f.message).toContain('after 3 attempts');
    expect(f.message).toContain('The server is overloaded');
  });

  it('model_error at once on a non-retryable error', async () => {
    const bad: Step = async () => {
      throw apiError(401, 'Incorrect API key provided');
    };
    const { p } = run([bad, callTool('finish', { title: 'T', summary: 'S' })]);
    const f = await failure(p);
    expect(f.code).toBe('model_error');
    expect(f.message).toContain('HTTP 401');
    expect(f.message).toContain('Incorrect API key provided');
    expect(events.some((e) => e.type === 'model_retry')).toBe(false);
  });
});

describe('validation rounds', () => {
  it('hands parse errors back and finishes once fixed', async () => {
    const { p, model } = run([
      callTool('write_file', { path: 'docs/new.mdx', content: '---\ntitle: New\n---\n\n<Note>unclosed\n' }),
      callTool('write_file', { path: 'docs.json', content: '{"navigation": [' }),
      callTool('finish', { title: 'T', summary: 'S' }),
      callTool('write_file', { path: 'docs/new.mdx', content: '---\ntitle: New\n---\n\n<Note>closed</Note>\n' }),
      callTool('write_file', { path: 'docs.json', content: '{"navigation": []}' }),
      callTool('finish', { title: 'T fixed', summary: 'S fixed' }),
    ]);
    const r = await p;
    expect(r.title).toBe('T fixed');
    const v = events.filter((e) => e.type === 'validation');
    expect(v.map((e) => e.data.ok)).toEqual([false, true]);
    const issues = v[0].data.issues as { path: string }[];
    expect(issues.map((i) => i.path).sort()).toEqual(['docs.json', 'docs/new.mdx']);
    expect(JSON.stringify(model.doGenerateCalls[3].prompt)).toContain('do not parse');
  });

  it('validation_failed after the allowed rounds', async () => {
    const bad = callTool('write_file', { path: 'mkdocs.yml', content: 'nav: [a, b\n' });
    const { p } = run([bad, callTool('finish', { title: 'T', summary: 'S' }), callTool('finish', { title: 'T', summary: 'S2' })], {
      maxValidationRounds: 1,
    });
    const f = await failure(p);
    expect(f.code).toBe('validation_failed');
    expect(f.message).toContain('mkdocs.yml');
  });
});

describe('docs checks rounds', () => {
  const checksOn = (mode: 'strict' | 'warn', max = 2) => {
    const usage: number[][] = [];
    const model = scripted([
      callTool('write_file', { path: 'docs/a.mdx', content: '# A\n\n[gone](./nowhere)\n' }, [100, 7]),
      callTool('finish', { title: 'T', summary: 'S' }, [200, 9]),
      callTool('write_file', { path: 'docs/a.mdx', content: '# A\n\n[home](./index)\n' }, [300, 11]),
      callTool('finish', { title: 'T2', summary: 'S2' }),
    ]);
    const p = runAgent({
      model,
      workspace: ws,
      system: 's',
      messages: conversation([], 'p'),
      limits: { ...limits, maxValidationRounds: max },
      signal: new AbortController().signal,
      emit: (type, data) => {
        events.push({ type, data: data as Record<string, unknown> });
      },
      checks: {
        mode,
        run: async (w) => {
          const text = readFileSync(path.join(w.root, 'docs/a.mdx'), 'utf8');
          const broken = text.includes('nowhere');
          return {
            framework: 'markdown',
            ran: ['links'],
            pagesChecked: 1,
            problems: broken ? [{ check: 'links', path: 'docs/a.mdx', line: 3, target: './nowhere', message: 'Link "./nowhere" does not lead to a page.' }] : [],
            preExisting: [{ check: 'links', path: 'docs/a.mdx', line: 1, target: './old', message: 'old' }],
            truncated: false,
          };
        },
      },
      onUsage: (u) => {
        usage.push([u.inputTokens, u.outputTokens]);
      },
    });
    return { p, model, usage };
  };

  it('problems go back to the model with the pre-existing ones named apart; fixed, the run returns the report', async () => {
    const { p, model, usage } = checksOn('warn');
    const r = await p;
    expect(r.title).toBe('T2');
    expect(r.checks?.problems).toEqual([]);
    const told = JSON.stringify(model.doGenerateCalls[2].prompt);
    expect(told).toContain('docs/a.mdx:3 (links): Link \\"./nowhere\\" does not lead to a page.');
    expect(told).toContain('1 problem was already on the base branch');
    expect(events.filter((e) => e.type === 'checks').map((e) => [e.data.round, e.data.ok, e.data.ran])).toEqual([
      [1, false, ['links']],
      [2, true, ['links']],
    ]);
    expect(usage).toEqual([[100, 7], [200, 9], [300, 11], [10, 5]]);
    expect(r.usage.inputTokens).toBe(610);
  });

  it('after the last round: strict fails with checks_failed, warn returns what is left', async () => {
    const strict = checksOn('strict', 0);
    const f = await failure(strict.p);
    expect(f.code).toBe('checks_failed');
    expect(f.message).toContain('docs/a.mdx:3: Link "./nowhere" does not lead to a page.');
    expect(f.checks?.problems).toHaveLength(1);
    const warn = checksOn('warn', 0);
    const r = await warn.p;
    expect(r.title).toBe('T');
    expect(r.checks?.problems).toHaveLength(1);
  });
});
