// created → active (queued): a new job, its first message, its `job.created` event and its
// `job.active` announcement, in the caller's transaction.
import type { JobTrigger } from '../../contracts/jobs.ts';
import type { JobLimit } from '../../contracts/budget.ts';
import { jobTitle } from '../../contracts/job-title.ts';
import { newId } from '../../store/ids.ts';
import type { JobRow } from '../view.ts';
import { refuseOverMonthlyBudget, type ProjectLimits } from '../budget.ts';
import { record, type Change, type LifecycleDeps, type Trx } from './context.ts';

export interface NewJob {
  /** The project's row as the caller read it (its webhook URL and budgets are not read again). */
  project: { id: string; repository_url: string; base_branch: string; webhook_url: string | null } & ProjectLimits;
  model: string;
  prompt: string;
  trigger: JobTrigger | null;
  /** The job's own spending limits (jobs/budget.ts). */
  limit: JobLimit;
  /** The job's title until its pull request names it (default: the prompt's first line). */
  title?: string;
}

export async function createJob(trx: Trx, deps: LifecycleDeps, input: NewJob): Promise<Change> {
  const { project, model, prompt, trigger } = input;
  await refuseOverMonthlyBudget(trx, deps.config.models.prices, project.id, project);
  const now = Date.now();
  const id = newId('job');
  const row: JobRow = {
    id,
    project_id: project.id,
    status: 'active',
    model,
    repository: project.repository_url,
    ref: `${deps.config.agent.branchPrefix}${id}`,
    base_ref: project.base_branch,
    pr_link: null,
    error_code: null,
    error_message: null,
    created_at: now,
    updated_at: now,
    archived_at: null,
    lease_owner: null,
    lease_expires_at: null,
    lost_leases: 0,
    trigger: trigger === null ? null : JSON.stringify(trigger),
    input_tokens: 0,
    output_tokens: 0,
    files: '[]',
    title: input.title ?? jobTitle(prompt),
    max_cost_usd: input.limit.maxCostUsd,
    max_tokens: input.limit.maxTokens,
  };
  await trx.insertInto('jobs').values(row).execute();
  await trx.insertInto('job_messages').values({ job_id: id, seq: 1, prompt, created_at: now, handled_at: null, outcome: null, title: null, summary: null }).execute();
  const data = { model, ref: row.ref, baseRef: row.base_ref, ...(trigger ? { trigger } : {}) };
  const recorded = await record(trx, deps, row, { type: 'job.created', data }, true, now, { webhookUrl: project.webhook_url });
  return { row, ...recorded, status: true, work: true };
}
