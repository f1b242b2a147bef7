// The tool loop: one model call per step through the AI SDK, tools executed by the SDK, with
// guardrails checked between steps (step limit, wall clock, token budget, repeated calls), retries with
// backoff on provider rate limits and transient errors, and validation rounds before finishing.
import { APICallError, generateText, stepCountIs, type LanguageModel, type ModelMessage } from 'ai';
import { describeForModel, type ChecksReport } from './checks/index.ts';
import { createTools, type FinishState } from './tools.ts';
import { validateChanged, type ValidationIssue } from './validate.ts';
import { clip, type Workspace } from './workspace.ts';

/** Ends the run with a machine code: step_limit, time_limit, token_budget, no_progress, model_error, validation_failed, checks_failed. */
export class AgentFailure extends Error {
  readonly code: string;
  /** The last docs checks report, when checks ran (e.g. the one a `checks_failed` run ended on). */
  readonly checks: ChecksReport | null;
  constructor(code: string, message: string, checks: ChecksReport | null = null) {
    super(message);
    this.name = 'AgentFailure';
    this.code = code;
    this.checks = checks;
  }
}

/** Docs-aware checks run with the parse validation when the model finishes. */
export interface AgentChecks {
  /** `strict`: problems left after the fix rounds fail the run (`checks_failed`); `warn`: they are returned. */
  mode: 'strict' | 'warn';
  run(workspace: Workspace): Promise<ChecksReport>;
}

export interface StepUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface AgentLimits {
  maxSteps: number;
  maxWallClockMs: number;
  /** Input + output tokens for the run; 0 means unlimited. */
  maxTokens: number;
  maxRepeatedCalls: number;
  maxValidationRounds: number;
  /** Retries of one model call on 429/5xx/network errors. */
  maxRetries: number;
  /** First backoff delay; doubles each retry (with jitter), capped at 30 s. */
  retryBaseMs?: number;
}

export type AgentEmit = (type: string, data: Record<string, unknown>) => void | Promise<void>;

export interface AgentRunInput {
  model: LanguageModel;
  workspace: Workspace;
  system: string;
  messages: ModelMessage[];
  limits: AgentLimits;
  signal: AbortSignal;
  emit: AgentEmit;
  /** How `.md` files are validated (the docs framework decides). */
  mdFormat?: 'mdx' | 'md';
  /** Whether the framework reads `## Title {#id}` as a heading id (DocsProfile.headingIds). */
  headingIds?: boolean;
  /** Characters of a tool result recorded in events. */
  eventClipChars?: number;
  /** Resolves when the workspace folder is checked out; tools wait for it (the first model call does not). */
  workspaceReady?: Promise<unknown>;
  /** Docs-aware checks (links, navigation, redirects); none when the project turned them off. */
  checks?: AgentChecks;
  /** Called with each model call's tokens as they are reported (also for runs that fail later). */
  onUsage?: (usage: StepUsage) => void | Promise<void>;
}

export interface AgentRunResult {
  title: string;
  summary: string;
  steps: number;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number };
  /** Files written, moved or deleted during the run (relative paths). */
  touched: string[];
  /** The docs checks of the last round (null when checks are off); new problems left are for the PR. */
  checks: ChecksReport | null;
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  const err = new Error(`Run aborted: ${typeof reason === 'string' ? reason : 'aborted'}`);
  err.name = 'AbortError';
  return err;
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) return reject(abortError(signal));
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(abortError(signal));
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

function retryAfterMs(err: APICallError): number | null {
  const h = err.responseHeaders ?? {};
  const ms = h['retry-after-ms'] ?? h['Retry-After-Ms'];
  if (ms && /^\d+(\.\d+)?$/.test(ms)) return Number(ms);
  const s = h['retry-after'] ?? h['Retry-After'];
  if (s && /^\d+(\.\d+)?$/.test(s)) return Number(s) * 1000;
  return null;
}

function providerMessage(err: unknown): string {
  if (APICallError.isInstance(err)) {
    return `${err.statusCode ? `HTTP ${err.statusCode}: ` : ''}${err.message}`;
  }
  return (err as Error)?.message ?? String(err);
}

function isRetryable(err: unknown): boolean {
  if (APICallError.isInstance(err)) {
    if (err.statusCode !== undefined) return err.statusCode === 408 || err.statusCode === 409 || err.statusCode === 429 || err.statusCode >= 500;
    return err.isRetryable;
  }
  const name = (err as Error)?.name;
  return name === 'TypeError' && /fetch failed|network/i.test((err as Error).message ?? '');
}

function stableKey(name: string, input: unknown): string {
  const norm = (v: unknown): unknown =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(Object.keys(v as object).sort().map((k) => [k, norm((v as Record<string, unknown>)[k])]))
      : Array.isArray(v)
        ? v.map(norm)
        : v;
  return `${name}:${JSON.stringify(norm(input))}`;
}

export async function runAgent(input: AgentRunInput): Promise<AgentRunResult> {
  const { model, workspace, limits, signal, emit } = input;
  const clipChars = input.eventClipChars ?? 2000;
  const state: FinishState = { finished: null };
  const tools = createTools(workspace, state, input.workspaceReady);
  const messages: ModelMessage[] = [...input.messages];
  const started = Date.now();
  const deadline = started + limits.maxWallClockMs;
  const usage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  let steps = 0;
  let lastKey: string | null = null;
  let repeats = 0;
  let validationRounds = 0;
  let idleTurns = 0;
  const baseDelay = limits.retryBaseMs ?? 1000;

  const timeLimit = () =>
    new AgentFailure('time_limit', `The agent ran out of time: the wall-clock limit is ${Math.round(limits.maxWallClockMs / 1000)} s.`);

  for (;;) {
    if (signal.aborted) throw abortError(signal);
    if (Date.now() >= deadline) throw timeLimit();
    if (steps >= limits.maxSteps) {
      throw new AgentFailure('step_limit', `The agent used all ${limits.maxSteps} steps without finishing.`);
    }

    // One model call (with its tool executions), retried on transient provider errors.
    let result: Awaited<ReturnType<typeof generateText>> | null = null;
    for (let attempt = 0; ; attempt++) {
      const timeout = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
      const callSignal = AbortSignal.any([signal, timeout]);
      try {
        result = await generateText({
          model,
          system: input.system,
          messages,
          tools,
          stopWhen: stepCountIs(1),
          maxRetries: 0,
          abortSignal: callSignal,
        });
        break;
      } catch (err) {
        if (signal.aborted) throw abortError(signal);
        if (timeout.aborted || Date.now() >= deadline) throw timeLimit();
        if (attempt < limits.maxRetries && isRetryable(err)) {
          const hinted = APICallError.isInstance(err) ? retryAfterMs(err) : null;
          const backoff = Math.min(30_000, baseDelay * 2 ** attempt) * (0.75 + Math.random() * 0.5);
          const delay = Math.min(Math.max(hinted ?? 0, backoff), Math.max(0, deadline - Date.now()));
          await emit('model_retry', { attempt: attempt + 1, delayMs: Math.round(delay), error: clip(providerMessage(err), 500) });
          await sleep(delay, signal);
          continue;
        }
        const tries = attempt + 1;
        throw new AgentFailure(
          'model_error',
          `The model provider failed${tries > 1 ? ` after ${tries} attempts` : ''}: ${clip(providerMessage(err), 1000)}`,
        );
      }
    }
    steps++;

    const inTok = result.usage.inputTokens ?? 0;
    const outTok = result.usage.outputTokens ?? 0;
    usage.inputTokens += inTok;
    usage.outputTokens += outTok;
    usage.totalTokens += inTok + outTok;
    await input.onUsage?.({ inputTokens: inTok, outputTokens: outTok });
    await emit('usage', { step: steps, inputTokens: inTok, outputTokens: outTok, totalTokens: usage.totalTokens });
    if (result.text.trim()) await emit('model_message', { step: steps, text: clip(result.text, clipChars) });
    for (const call of result.toolCalls) {
      await emit('tool_call', { step: steps, toolCallId: call.toolCallId, tool: call.toolName, args: call.input as Record<string, unknown> });
    }
    for (const r of result.toolResults) {
      const out = typeof r.output === 'string' ? r.output : JSON.stringify(r.output);
      await emit('tool_result', { step: steps, toolCallId: r.toolCallId, tool: r.toolName, result: clip(out ?? '', clipChars) });
    }
    messages.push(...(result.responseMessages as ModelMessage[]));

    if (signal.aborted) throw abortError(signal);
    if (limits.maxTokens > 0 && usage.totalTokens > limits.maxTokens) {
      throw new AgentFailure(
        'token_budget',
        `The agent used ${usage.totalTokens} tokens, over the budget of ${limits.maxTokens}.`,
      );
    }

    // The no-progress detector: the same call with the same arguments, over and over.
    for (const call of result.toolCalls) {
      const key = stableKey(call.toolName, call.input);
      repeats = key === lastKey ? repeats + 1 : 1;
      lastKey = key;
      if (repeats >= limits.maxRepeatedCalls) {
        throw new AgentFailure(
          'no_progress',
          `The agent made the same ${call.toolName} call ${repeats} times in a row without progress.`,
        );
      }
    }

    if (state.finished) {
      const round = validationRounds + 1;
      const issues: ValidationIssue[] = await validateChanged(workspace, workspace.touched, { mdFormat: input.mdFormat, headingIds: input.headingIds });
      await emit('validation', { round, ok: issues.length === 0, issues: issues.slice(0, 50) });
      let report: ChecksReport | null = null;
      if (input.checks) {
        report = await input.checks.run(workspace);
        await emit('checks', checksEvent(report, round, input.checks.mode));
      }
      const problems = report?.problems ?? [];
      if (issues.length === 0 && problems.length === 0) {
        return { ...state.finished, steps, usage, touched: [...workspace.touched].sort(), checks: report };
      }
      if (validationRounds >= limits.maxValidationRounds) {
        const rounds = `${validationRounds} fix round${validationRounds === 1 ? '' : 's'}`;
        if (issues.length > 0) {
          throw new AgentFailure(
            'validation_failed',
            `Changed files still do not parse after ${rounds}: ${issues
              .slice(0, 5)
              .map((i) => `${i.path}: ${i.message}`)
              .join('; ')}`,
            report,
          );
        }
        if (input.checks?.mode === 'strict') {
          throw new AgentFailure(
            'checks_failed',
            `The docs checks still find ${problems.length} problem${problems.length === 1 ? '' : 's'} the job introduced after ${rounds}: ${problems
              .slice(0, 5)
              .map((p) => `${p.line ? `${p.path}:${p.line}` : p.path}: ${p.message}`)
              .join('; ')}`,
            report,
          );
        }
        // warn: what is left goes into the pull request.
        return { ...state.finished, steps, usage, touched: [...workspace.touched].sort(), checks: report };
      }
      validationRounds++;
      state.finished = null;
      const parts: string[] = [];
      if (issues.length > 0) parts.push(`These changed files do not parse:\n${issues.map((i) => `- ${i.path}: ${i.message}`).join('\n')}`);
      if (problems.length > 0) parts.push(`The docs checks found problems your changes introduced:\n${describeForModel(report!)}`);
      messages.push({
        role: 'user',
        content: `Your changes have problems, so they were not committed yet. Fix them, then call finish again.\n\n${parts.join('\n\n')}`,
      });
      continue;
    }

    if (result.toolCalls.length === 0) {
      idleTurns++;
      messages.push({
        role: 'user',
        content:
          idleTurns === 1
            ? 'Continue using the tools. When you are done, call the finish tool with a title and a summary.'
            : 'You must call a tool. If the work is complete, call finish now with a title and a summary.',
      });
    } else {
      idleTurns = 0;
    }
  }
}

/** The `checks` event: which checks ran, on how many pages, and what they found (lists clipped). */
function checksEvent(report: ChecksReport, round: number, mode: string): Record<string, unknown> {
  return {
    round,
    mode,
    framework: report.framework,
    ran: report.ran,
    pagesChecked: report.pagesChecked,
    ok: report.problems.length === 0,
    problemCount: report.problems.length,
    preExistingCount: report.preExisting.length,
    problems: report.problems.slice(0, 50),
    preExisting: report.preExisting.slice(0, 50),
    truncated: report.truncated,
  };
}
