// A follow-up message: queued on an active job, or reopening a finished one (completed/failed →
// active, announced). An archived job takes no more messages.
import { CodedError } from '../../errors.ts';
import type { MessageOrigin } from '../../contracts/jobs.ts';
import type { JobRow } from '../view.ts';
import { refuseOverMonthlyBudget } from '../budget.ts';
import { lockedJob, record, type Change, type LifecycleDeps, type Trx } from './context.ts';

export interface FollowUp {
  projectId: string;
  jobId: string;
  prompt: string;
  /** Where the message came from when not the API (a review comment). */
  origin?: MessageOrigin | null;
  /** Takes the follow-up rate-limit slot once the job is known to take messages. */
  takeSlot: () => Promise<unknown>;
}

/** The change, and the queued message's number. */
export async function followUp(trx: Trx, deps: LifecycleDeps, input: FollowUp): Promise<Change & { seq: number }> {
  const { projectId, jobId, prompt } = input;
  const origin = input.origin ?? null;
  // Row lock: a concurrent archive or end of turn either sees this message or waits for it.
  const job = await lockedJob(trx, deps, jobId, projectId);
  if (!job) throw new CodedError('job_not_found', `Job "${jobId}" does not exist in this project.`);
  if (job.status === 'archived') throw new CodedError('job_archived', `Job "${jobId}" is archived and takes no more messages.`);
  await refuseOverMonthlyBudget(trx, deps.config.models.prices, projectId);
  await input.takeSlot();
  const { max } = await trx
    .selectFrom('job_messages')
    .select((eb) => eb.fn.max<number>('seq').as('max'))
    .where('job_id', '=', jobId)
    .executeTakeFirstOrThrow();
  const seq = Number(max ?? 0) + 1;
  const now = Date.now();
  await trx
    .insertInto('job_messages')
    .values({ job_id: jobId, seq, prompt, created_at: now, handled_at: null, outcome: null, title: null, summary: null, origin: origin && JSON.stringify(origin) })
    .execute();
  const reopened = job.status !== 'active';
  const row: JobRow = { ...job, status: 'active', updated_at: now, error_code: null, error_message: null, ...(reopened ? { lost_leases: 0 } : {}) };
  await trx
    .updateTable('jobs')
    .set({ status: 'active', updated_at: now, error_code: null, error_message: null, ...(reopened ? { lost_leases: 0 } : {}) })
    .where('id', '=', jobId)
    .execute();
  const recorded = await record(trx, deps, row, { type: 'message.queued', data: { seq, ...(origin ? { origin } : {}) } }, reopened, now);
  return { row, ...recorded, status: reopened, work: true, seq };
}
