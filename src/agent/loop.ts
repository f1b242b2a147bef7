// The tool loop: one model call per step through the AI SDK, tools executed by the SDK, with
// guardrails checked between steps (step limit, wall clock, token budget, repeated calls), retries with
// backoff on provider rate limits and transient errors, and validation rounds before finishing.
import { APICallError, generateText, stepCountIs, type LanguageModel, type ModelMessage } from 'ai';
import { describeForModel, type ChecksReport } from './checks/index.ts';
import type { ChecksMode } from './checks/types.ts';
import type { EmitJobEvent, JobEventData } from '../contracts/job-events.ts';
import { createTools, type FinishState } from './tools.ts';
import { validateChanged, type ValidationIssue } from './validate.ts';
import { clip, type Workspace } from './workspace.ts';
import { retrying } from '../util/retry.ts';

/** Ends the run with a machine code: step_limit, time_limit, token_budget, no_progress, model_error, validation_failed, checks_failed (or a `beforeCall` check's, e.g. budget_exceeded). */
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
  /**
   * `strict`: problems left after the fix rounds fail the run (`checks_failed`); `warn`: they are
   * returned; `off`: only enforced checks run. Enforced problems (a suggestion job's scope, redirects
   * off the site) fail the run in every mode.
   */
  mode: ChecksMode;
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

export type AgentEmit = EmitJobEvent<void | Promise<void>>;

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
  /** Runs before each model call; an AgentFailure it throws ends the run (the job's spending limit). */
  beforeCall?: () => Promise<void>;
  /**
   * Text to add to the result of the first tool call on a path (read, write, edit, delete, move), or
   * null: the repository's nested instructions for the folder the path is in (instructions.ts).
   */
  pathNotes?: (path: string) => Promise<string | null>;
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

type StepResult = Awaited<ReturnType<typeof generateText>>;
type RunUsage = AgentRunResult['usage'];

export async function runAgent(input: AgentRunInput): Promise<AgentRunResult> {
  const { workspace, limits, signal } = input;
  const state: FinishState = { finished: null };
  const tools = createTools(workspace, state, input.workspaceReady, input.pathNotes);
  const messages: ModelMessage[] = [...input.messages];
  const deadline = Date.now() + limits.maxWallClockMs;
  const usage: RunUsage = { inputTokens: 0, outputTokens: 0, totalTokens: 0 };
  const repeatedCalls = new RepeatedCallDetector(limits.maxRepeatedCalls);
  let steps = 0;
  let validationRounds = 0;
  let idleTurns = 0;

  for (;;) {
    if (signal.aborted) throw abortError(signal);
    if (Date.now() >= deadline) throw timeLimit(limits);
    if (steps >= limits.maxSteps) {
      throw new AgentFailure('step_limit', `The agent used all ${limits.maxSteps} steps without finishing.`);
    }

    await input.beforeCall?.();
    const result = await callModel(input, messages, tools, deadline);
    steps++;
    await recordStep(input, result, steps, usage);
    messages.push(...(result.responseMessages as ModelMessage[]));

    if (signal.aborted) throw abortError(signal);
    if (limits.maxTokens > 0 && usage.totalTokens > limits.maxTokens) {
      throw new AgentFailure(
        'token_budget',
        `The agent used ${usage.totalTokens} tokens, over the budget of ${limits.maxTokens}.`,
      );
    }
    repeatedCalls.check(result.toolCalls);

    if (state.finished) {
      const review = await reviewFinish(input, validationRounds);
      if (review.accepted) return { ...state.finished, steps, usage, touched: [...workspace.touched].sort(), checks: review.report };
      validationRounds++;
      state.finished = null;
      messages.push({ role: 'user', content: review.fixRequest });
      continue;
    }

    idleTurns = result.toolCalls.length === 0 ? idleTurns + 1 : 0;
    if (idleTurns > 0) messages.push(idleNudge(idleTurns));
  }
}

function timeLimit(limits: AgentLimits): AgentFailure {
  return new AgentFailure('time_limit', `The agent ran out of time: the wall-clock limit is ${Math.round(limits.maxWallClockMs / 1000)} s.`);
}

/** One model call (with its tool executions), retried on transient provider errors (util/retry.ts), never past the deadline. */
async function callModel(input: AgentRunInput, messages: ModelMessage[], tools: ReturnType<typeof createTools>, deadline: number): Promise<StepResult> {
  const { limits, signal } = input;
  let tries = 0;
  const once = async () => {
    tries++;
    const timeout = AbortSignal.timeout(Math.max(1, deadline - Date.now()));
    try {
      return await generateText({ model: input.model, system: input.system, messages, tools, stopWhen: stepCountIs(1), maxRetries: 0, abortSignal: AbortSignal.any([signal, timeout]) });
    } catch (err) {
      // An AgentFailure is never retried.
      if (!signal.aborted && (timeout.aborted || Date.now() >= deadline)) throw timeLimit(limits);
      throw err;
    }
  };
  try {
    return await retrying(once, {
      attempts: limits.maxRetries + 1,
      retryable: isRetryable,
      delay: { baseMs: limits.retryBaseMs ?? 1000, maxMs: 30_000, jitter: true },
      asked: (err) => (APICallError.isInstance(err) ? retryAfterMs(err) : null),
      deadline,
      signal,
      onRetry: ({ attempt, delayMs, error }) => input.emit('model_retry', { attempt, delayMs: Math.round(delayMs), error: clip(providerMessage(error), 500) }),
    });
  } catch (err) {
    if (signal.aborted) throw abortError(signal);
    if (err instanceof AgentFailure) throw err;
    if (Date.now() >= deadline) throw timeLimit(limits);
    throw new AgentFailure('model_error', `The model provider failed${tries > 1 ? ` after ${tries} attempts` : ''}: ${clip(providerMessage(err), 1000)}`);
  }
}

/** Adds the step's tokens to the run's usage and emits the step: usage, model text, tool calls and results. */
async function recordStep(input: AgentRunInput, result: StepResult, step: number, usage: RunUsage): Promise<void> {
  const { emit } = input;
  const clipChars = input.eventClipChars ?? 2000;
  const inTok = result.usage.inputTokens ?? 0;
  const outTok = result.usage.outputTokens ?? 0;
  usage.inputTokens += inTok;
  usage.outputTokens += outTok;
  usage.totalTokens += inTok + outTok;
  await input.onUsage?.({ inputTokens: inTok, outputTokens: outTok });
  await emit('usage', { step, inputTokens: inTok, outputTokens: outTok, totalTokens: usage.totalTokens });
  if (result.text.trim()) await emit('model_message', { step, text: clip(result.text, clipChars) });
  for (const call of result.toolCalls) {
    await emit('tool_call', { step, toolCallId: call.toolCallId, tool: call.toolName, args: call.input as Record<string, unknown> });
  }
  for (const r of result.toolResults) {
    const out = typeof r.output === 'string' ? r.output : JSON.stringify(r.output);
    await emit('tool_result', { step, toolCallId: r.toolCallId, tool: r.toolName, result: clip(out ?? '', clipChars) });
  }
}

/** The no-progress detector: the same call with the same arguments, over and over, ends the run. */
class RepeatedCallDetector {
  private lastKey: string | null = null;
  private repeats = 0;
  private readonly maxRepeatedCalls: number;
  constructor(maxRepeatedCalls: number) {
    this.maxRepeatedCalls = maxRepeatedCalls;
  }

  check(toolCalls: StepResult['toolCalls']): void {
    for (const call of toolCalls) {
      const key = stableKey(call.toolName, call.input);
      this.repeats = key === this.lastKey ? this.repeats + 1 : 1;
      this.lastKey = key;
      if (this.repeats >= this.maxRepeatedCalls) {
        throw new AgentFailure(
          'no_progress',
          `The agent made the same ${call.toolName} call ${this.repeats} times in a row without progress.`,
        );
      }
    }
  }
}

/** What becomes of the model's `finish`: accepted (with the last checks report), or sent back with what to fix. */
type FinishReview = { accepted: true; report: ChecksReport | null } | { accepted: false; fixRequest: string };

/**
 * Validates the changed files and runs the docs checks when the model calls finish. Problems go back
 * to the model until the fix rounds run out; then they fail the run (parse errors, strict checks) or
 * are accepted (warn: what is left goes into the pull request).
 */
async function reviewFinish(input: AgentRunInput, validationRounds: number): Promise<FinishReview> {
  const { workspace, emit, limits } = input;
  const round = validationRounds + 1;
  const issues: ValidationIssue[] = await validateChanged(workspace, workspace.touched, { mdFormat: input.mdFormat, headingIds: input.headingIds });
  await emit('validation', { round, ok: issues.length === 0, issues: issues.slice(0, 50) });
  let report: ChecksReport | null = null;
  if (input.checks) {
    report = await input.checks.run(workspace);
    await emit('checks', checksEvent(report, round, input.checks.mode));
  }
  const problems = report?.problems ?? [];
  if (issues.length === 0 && problems.length === 0) return { accepted: true, report };
  if (validationRounds >= limits.maxValidationRounds) {
    failIfStillBroken(input, validationRounds, issues, report);
    // warn: what is left goes into the pull request.
    return { accepted: true, report };
  }
  return { accepted: false, fixRequest: fixRequest(issues, report) };
}

/** After the last fix round: files that still do not parse fail the run, and so do problems under strict checks and enforced ones in any mode. */
function failIfStillBroken(input: AgentRunInput, validationRounds: number, issues: ValidationIssue[], report: ChecksReport | null): void {
  const strict = input.checks?.mode === 'strict';
  const problems = (report?.problems ?? []).filter((p) => strict || p.enforced);
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
  if (problems.length > 0) {
    throw new AgentFailure(
      'checks_failed',
      `The docs checks still find ${problems.length} problem${problems.length === 1 ? '' : 's'} the job introduced after ${rounds}: ${problems
        .slice(0, 5)
        .map((p) => `${p.line ? `${p.path}:${p.line}` : p.path}: ${p.message}`)
        .join('; ')}`,
      report,
    );
  }
}

/** The message that sends a finished run back: which files do not parse and what the checks found. */
function fixRequest(issues: ValidationIssue[], report: ChecksReport | null): string {
  const parts: string[] = [];
  if (issues.length > 0) parts.push(`These changed files do not parse:\n${issues.map((i) => `- ${i.path}: ${i.message}`).join('\n')}`);
  if ((report?.problems ?? []).length > 0) parts.push(`The docs checks found problems your changes introduced:\n${describeForModel(report!)}`);
  return `Your changes have problems, so they were not committed yet. Fix them, then call finish again.\n\n${parts.join('\n\n')}`;
}

/** The reminder after a step without tool calls; firmer from the second such step in a row. */
function idleNudge(idleTurns: number): ModelMessage {
  return {
    role: 'user',
    content:
      idleTurns === 1
        ? 'Continue using the tools. When you are done, call the finish tool with a title and a summary.'
        : 'You must call a tool. If the work is complete, call finish now with a title and a summary.',
  };
}

/** The `checks` event: which checks ran, on how many pages, and what they found (lists clipped). */
function checksEvent(report: ChecksReport, round: number, mode: ChecksMode): JobEventData<'checks'> {
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
    ...(report.build ? { build: report.build } : {}),
  };
}
