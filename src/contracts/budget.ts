// Spending limits and the team's instructions as the API states them (docs/agent.md): a job's limits,
// a project's month against its budget, and the two job events these features add, kept together.
import { Type, type Static } from 'typebox';

/** The longest instructions a project may set in Folio (the prompt takes at most a part: src/agent/instructions.ts). */
export const INSTRUCTIONS_MAX_CHARS = 20_000;

/** The largest limits and budgets one may set: dollars per job, tokens (per job or month), dollars per month. */
export const LIMIT_MAX = { costUsd: 100_000, tokens: 2_000_000_000, monthlyUsd: 10_000_000 } as const;

/** A limit in US dollars (e.g. 0.5), in tokens (input + output), and a monthly budget in dollars; each schema with its own description. */
export const MaxCostUsd = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: LIMIT_MAX.costUsd, description });
export const MaxTokens = (description: string) => Type.Integer({ minimum: 1, maximum: LIMIT_MAX.tokens, description });
export const MonthlyBudget = (description: string) => Type.Number({ exclusiveMinimum: 0, maximum: LIMIT_MAX.monthlyUsd, description });

export const JobLimit = Type.Object(
  {
    maxCostUsd: Type.Union([Type.Number(), Type.Null()], { description: 'Dollars the job may spend (its model has a price); null: no limit in dollars.' }),
    maxTokens: Type.Union([Type.Integer(), Type.Null()], { description: 'Tokens the job may use; null: no limit in tokens.' }),
  },
  { description: "The job's spending limits, from its create request or the project's defaults. Checked before each model call: a job at its limit ends `failed` with `budget_exceeded`, its branch kept." },
);
export type JobLimit = Static<typeof JobLimit>;

export const MonthBudget = Type.Object(
  {
    from: Type.String({ description: 'The first day of the month, YYYY-MM-DD (UTC).' }),
    resetsOn: Type.String({ description: 'The first day of the next month, YYYY-MM-DD (UTC), when the month starts over.' }),
    costUsd: Type.Number({ minimum: 0, description: 'What priced models cost this month.' }),
    totalTokens: Type.Integer({ minimum: 0, description: 'Tokens of every model this month.' }),
    budgetUsd: Type.Union([Type.Number(), Type.Null()], { description: "The project's monthly budget in dollars; null: none." }),
    tokenBudget: Type.Union([Type.Integer(), Type.Null()], { description: "The project's monthly budget in tokens; null: none." }),
  },
  { description: "This calendar month's spend against the project's monthly budgets. New jobs and follow-ups are refused (`monthly_budget_exceeded`) once a budget is spent." },
);
export type MonthBudget = Static<typeof MonthBudget>;

/** The data of this feature's job events (declared in job-events.ts): which instruction files the agent was given, and a job stopped at its limit. */

export const InstructionsEventData = Type.Object({
  files: Type.Array(Type.Object({ path: Type.String(), cut: Type.Boolean(), scope: Type.String({ description: "'' for the whole repository, else the folder the file applies to." }) })),
  skipped: Type.Array(Type.Object({ path: Type.String(), reason: Type.String() })),
});
export type InstructionsEventData = Static<typeof InstructionsEventData>;

export const BudgetExceededEventData = Type.Object({
  inputTokens: Type.Integer(),
  outputTokens: Type.Integer(),
  costUsd: Type.Union([Type.Number(), Type.Null()]),
  maxCostUsd: Type.Union([Type.Number(), Type.Null()]),
  maxTokens: Type.Union([Type.Integer(), Type.Null()]),
  message: Type.String(),
});
export type BudgetExceededEventData = Static<typeof BudgetExceededEventData>;
