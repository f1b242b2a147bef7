// Token usage of agent jobs: recorded per model call by the worker (totals on the job, per UTC day for
// the project's usage view) and priced at read time from the server's price table, so a corrected
// price applies to past jobs too.
import type { Kysely } from 'kysely';
import type { ModelPrice } from '../config.ts';
import type { JobUsage, UsageReport } from '../contracts/jobs.ts';
import type { Database } from '../store/schema.ts';

export type PriceTable = Readonly<Record<string, ModelPrice>>;

const DAY_MS = 86_400_000;

/** USD for these tokens of this model; null when the model has no price. Rounded to a millionth of a dollar. */
export function costUsd(prices: PriceTable, model: string, inputTokens: number, outputTokens: number): number | null {
  const p = prices[model];
  if (!p) return null;
  return Math.round(inputTokens * p.input + outputTokens * p.output) / 1_000_000;
}

export function jobUsage(prices: PriceTable, model: string, inputTokens: number, outputTokens: number): JobUsage {
  const input = Number(inputTokens);
  const output = Number(outputTokens);
  return { inputTokens: input, outputTokens: output, totalTokens: input + output, estimatedCostUsd: costUsd(prices, model, input, output) };
}

/** Adds one model call's tokens to the job's totals and to its row of the day, in one transaction. */
export async function recordUsage(
  db: Kysely<Database>,
  job: { id: string; projectId: string; model: string },
  usage: { inputTokens: number; outputTokens: number },
  now = Date.now(),
): Promise<void> {
  const input = Math.max(0, Math.floor(usage.inputTokens || 0));
  const output = Math.max(0, Math.floor(usage.outputTokens || 0));
  const day = Math.floor(now / DAY_MS) * DAY_MS;
  await db.transaction().execute(async (trx) => {
    await trx
      .updateTable('jobs')
      .set((eb) => ({ input_tokens: eb('input_tokens', '+', input), output_tokens: eb('output_tokens', '+', output) }))
      .where('id', '=', job.id)
      .execute();
    await trx
      .insertInto('job_usage')
      .values({ job_id: job.id, project_id: job.projectId, day, model: job.model, input_tokens: input, output_tokens: output, calls: 1 })
      .onConflict((oc) =>
        oc.columns(['job_id', 'day']).doUpdateSet((eb) => ({
          input_tokens: eb('job_usage.input_tokens', '+', eb.ref('excluded.input_tokens')),
          output_tokens: eb('job_usage.output_tokens', '+', eb.ref('excluded.output_tokens')),
          calls: eb('job_usage.calls', '+', 1),
        })),
      )
      .execute();
  });
}

interface Figures {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  estimatedCostUsd: number | null;
  unpricedTokens: number;
}

function empty(): Figures {
  return { inputTokens: 0, outputTokens: 0, totalTokens: 0, estimatedCostUsd: null, unpricedTokens: 0 };
}

function add(f: Figures, prices: PriceTable, model: string, input: number, output: number): void {
  f.inputTokens += input;
  f.outputTokens += output;
  f.totalTokens += input + output;
  const cost = costUsd(prices, model, input, output);
  if (cost === null) f.unpricedTokens += input + output;
  else f.estimatedCostUsd = Math.round(((f.estimatedCostUsd ?? 0) + cost) * 1_000_000) / 1_000_000;
}

/** A project's usage over the last `days` UTC days (today included): per day, per job, in total. */
export async function usageReport(db: Kysely<Database>, prices: PriceTable, projectId: string, days: number, now = Date.now()): Promise<Omit<UsageReport, 'month'>> {
  const today = Math.floor(now / DAY_MS) * DAY_MS;
  const from = today - (days - 1) * DAY_MS;
  const rows = await db
    .selectFrom('job_usage')
    .innerJoin('jobs', 'jobs.id', 'job_usage.job_id')
    .select(['job_usage.job_id', 'job_usage.day', 'job_usage.model', 'job_usage.input_tokens', 'job_usage.output_tokens', 'jobs.status', 'jobs.created_at', 'jobs.title'])
    .where('job_usage.project_id', '=', projectId)
    .where('job_usage.day', '>=', from)
    .orderBy('job_usage.day')
    .orderBy('job_usage.job_id')
    .execute();

  const byDay = new Map<number, Figures & { jobs: Set<string> }>();
  const byJob = new Map<string, Figures & { status: string; model: string; createdAt: number; title: string }>();
  const totals = empty();
  for (const r of rows) {
    const input = Number(r.input_tokens);
    const output = Number(r.output_tokens);
    const day = Number(r.day);
    let d = byDay.get(day);
    if (!d) byDay.set(day, (d = { ...empty(), jobs: new Set() }));
    d.jobs.add(r.job_id);
    add(d, prices, r.model, input, output);
    let j = byJob.get(r.job_id);
    if (!j) byJob.set(r.job_id, (j = { ...empty(), status: r.status, model: r.model, createdAt: Number(r.created_at), title: r.title }));
    add(j, prices, r.model, input, output);
    add(totals, prices, r.model, input, output);
  }
  const figures = (f: Figures): Figures => ({
    inputTokens: f.inputTokens,
    outputTokens: f.outputTokens,
    totalTokens: f.totalTokens,
    estimatedCostUsd: f.estimatedCostUsd,
    unpricedTokens: f.unpricedTokens,
  });
  return {
    days: [...byDay.entries()].map(([day, f]) => ({ date: new Date(day).toISOString().slice(0, 10), jobs: f.jobs.size, ...figures(f) })),
    jobs: [...byJob.entries()]
      .sort((a, b) => b[1].totalTokens - a[1].totalTokens || (a[0] < b[0] ? -1 : 1))
      .slice(0, 100)
      .map(([id, f]) => ({ id, title: f.title, status: f.status as UsageReport['jobs'][number]['status'], model: f.model, createdAt: new Date(f.createdAt).toISOString(), ...figures(f) })),
    totals: figures(totals),
  };
}
