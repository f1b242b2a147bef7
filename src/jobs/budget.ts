// Spending limits (docs/agent.md), the one owner of their rules: a job's limits, fixed when it is
// created (its request's, else the project's defaults; dollars only for a model with a price, tokens
// for any); the check before each model call that ends a turn `budget_exceeded`; and the project's
// monthly budgets, which refuse a new job or follow-up once spent. Spend is priced at read time, like
// the usage report (usage.ts).
import type { Kysely } from 'kysely';
import { CodedError } from '../errors.ts';
import { AgentFailure } from '../agent/loop.ts';
import type { EmitJobEvent } from '../contracts/job-events.ts';
import { type BudgetExceededEventData, type JobLimit, type MonthBudget } from '../contracts/budget.ts';
import type { Database } from '../store/schema.ts';
import { numberOrNull, type ProjectRow } from '../store/projects.ts';
import { costUsd, type PriceTable } from './usage.ts';

export type ProjectLimits = Pick<ProjectRow, 'default_max_cost_usd' | 'default_max_tokens' | 'monthly_budget_usd' | 'monthly_token_budget'>;

/** A job's limits from its create request, else the project's defaults. Dollars need a priced model. */
export function jobLimitFor(request: { maxCostUsd?: number; maxTokens?: number }, project: ProjectLimits, prices: PriceTable, model: string): JobLimit {
  const priced = Object.hasOwn(prices, model);
  if (request.maxCostUsd !== undefined && !priced) {
    throw new CodedError('model_not_priced', `Model "${model}" has no price on this server (FOLIO_MODEL_PRICES), so a limit in dollars cannot be kept; set maxTokens instead.`, {
      details: [{ message: 'the model has no price', path: '/body/maxCostUsd' }],
    });
  }
  return {
    maxCostUsd: priced ? (request.maxCostUsd ?? numberOrNull(project.default_max_cost_usd)) : null,
    maxTokens: request.maxTokens ?? numberOrNull(project.default_max_tokens),
  };
}

/** Dollars with cents, and up to four decimals where they matter: $0.30, $0.0123, $12.50. */
const usd = (n: number) => `$${n.toFixed(4).replace(/0{1,2}$/, '')}`;
const count = (n: number) => n.toLocaleString('en-US');
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

// ---------------------------------------------------------------- a job's limit

/** A job's limits and what it has spent so far (every turn). */
export interface JobSpend extends JobLimit {
  model: string;
  inputTokens: number;
  outputTokens: number;
}

export async function readJobSpend(db: Kysely<Database>, jobId: string): Promise<JobSpend> {
  const row = await db
    .selectFrom('jobs')
    .select(['model', 'input_tokens', 'output_tokens', 'max_cost_usd', 'max_tokens'])
    .where('id', '=', jobId)
    .executeTakeFirstOrThrow();
  return {
    model: row.model,
    inputTokens: Number(row.input_tokens),
    outputTokens: Number(row.output_tokens),
    maxCostUsd: numberOrNull(row.max_cost_usd),
    maxTokens: numberOrNull(row.max_tokens),
  };
}

/** The `budget_exceeded` event when the job has reached a limit; null while it may go on. */
export function overJobLimit(spend: JobSpend, prices: PriceTable): BudgetExceededEventData | null {
  const { inputTokens, outputTokens, maxCostUsd, maxTokens } = spend;
  const cost = costUsd(prices, spend.model, inputTokens, outputTokens);
  const tokens = inputTokens + outputTokens;
  const spent = `${cost === null ? '' : `${usd(cost)}, `}${count(inputTokens)} input and ${count(outputTokens)} output tokens`;
  let limit: string | null = null;
  if (maxCostUsd !== null && cost !== null && cost >= maxCostUsd) limit = usd(maxCostUsd);
  else if (maxTokens !== null && tokens >= maxTokens) limit = `${count(maxTokens)} tokens`;
  if (limit === null) return null;
  const message = `The job reached its spending limit of ${limit} (spent: ${spent}), so it stopped before the next model call; what it changed so far is committed on its branch.`;
  return { inputTokens, outputTokens, costUsd: cost, maxCostUsd, maxTokens, message };
}

/**
 * The agent's check before each model call (loop.ts `beforeCall`): at the job's limit it records the
 * `budget_exceeded` event and ends the turn with that code.
 */
export function jobBudgetCheck(spend: () => Promise<JobSpend>, prices: PriceTable, emit: EmitJobEvent): () => Promise<void> {
  return async () => {
    const over = overJobLimit(await spend(), prices);
    if (!over) return;
    await emit('budget_exceeded', over);
    throw new AgentFailure('budget_exceeded', over.message);
  };
}

// ---------------------------------------------------------------- the month

/** The calendar month (UTC) holding `now`: its first instant and the next month's. */
export function monthOf(now: number): { from: number; resetsAt: number } {
  const d = new Date(now);
  return { from: Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), 1), resetsAt: Date.UTC(d.getUTCFullYear(), d.getUTCMonth() + 1, 1) };
}

/** This month's spend of the project against its monthly budgets. */
export async function monthBudget(db: Kysely<Database>, prices: PriceTable, projectId: string, project: ProjectLimits, now = Date.now()): Promise<MonthBudget> {
  const { from, resetsAt } = monthOf(now);
  const rows = await db
    .selectFrom('job_usage')
    .select((eb) => ['model', eb.fn.sum<number>('input_tokens').as('input'), eb.fn.sum<number>('output_tokens').as('output')])
    .where('project_id', '=', projectId)
    .where('day', '>=', from)
    .groupBy('model')
    .execute();
  let cost = 0;
  let totalTokens = 0;
  for (const r of rows) {
    const [input, output] = [Number(r.input ?? 0), Number(r.output ?? 0)];
    totalTokens += input + output;
    cost += costUsd(prices, r.model, input, output) ?? 0;
  }
  return {
    from: day(from),
    resetsOn: day(resetsAt),
    costUsd: Math.round(cost * 1_000_000) / 1_000_000,
    totalTokens,
    budgetUsd: numberOrNull(project.monthly_budget_usd),
    tokenBudget: numberOrNull(project.monthly_token_budget),
  };
}

/** The sentence refusing new work when a monthly budget is spent; null while there is budget left. */
export function overMonthlyBudget(month: MonthBudget): string | null {
  const resets = `it resets on ${month.resetsOn} (UTC)`;
  if (month.budgetUsd !== null && month.costUsd >= month.budgetUsd) {
    return `This project's monthly budget of ${usd(month.budgetUsd)} is spent: ${usd(month.costUsd)} so far this month; ${resets}.`;
  }
  if (month.tokenBudget !== null && month.totalTokens >= month.tokenBudget) {
    return `This project's monthly budget of ${count(month.tokenBudget)} tokens is used up: ${count(month.totalTokens)} tokens so far this month; ${resets}.`;
  }
  return null;
}

/**
 * Refuses a job or follow-up (`monthly_budget_exceeded`) when the project's monthly budget is spent.
 * Called inside the write's project-serialised transaction.
 */
export async function refuseOverMonthlyBudget(db: Kysely<Database>, prices: PriceTable, projectId: string, known?: ProjectLimits, now = Date.now()): Promise<void> {
  // A create has the project's row already (`known`); a follow-up reads it here.
  const project =
    known ??
    (await db
      .selectFrom('projects')
      .select(['default_max_cost_usd', 'default_max_tokens', 'monthly_budget_usd', 'monthly_token_budget'])
      .where('id', '=', projectId)
      .executeTakeFirst());
  if (!project || (project.monthly_budget_usd === null && project.monthly_token_budget === null)) return;
  const refusal = overMonthlyBudget(await monthBudget(db, prices, projectId, project, now));
  if (refusal) throw new CodedError('monthly_budget_exceeded', refusal);
}
