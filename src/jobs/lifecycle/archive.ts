// any → archived: the job and its waiting messages are closed; the running worker is told after
// commit (in-process and through NOTIFY). Archiving an archived job changes nothing.
import { CodedError } from '../../errors.ts';
import type { JobRow } from '../view.ts';
import { lockedJob, record, settleMessages, type Change, type LifecycleDeps, type Trx } from './context.ts';

export async function archiveJob(trx: Trx, deps: LifecycleDeps, projectId: string, jobId: string): Promise<Change> {
  const job = await lockedJob(trx, deps, jobId, projectId);
  if (!job) throw new CodedError('job_not_found', `Job "${jobId}" does not exist in this project.`);
  if (job.status === 'archived') return { row: job, events: [], status: false };
  const now = Date.now();
  await trx.updateTable('jobs').set({ status: 'archived', archived_at: now, updated_at: now }).where('id', '=', jobId).execute();
  await settleMessages(trx, jobId, 'archived', now);
  const row: JobRow = { ...job, status: 'archived', archived_at: now, updated_at: now };
  return { row, ...(await record(trx, deps, row, { type: 'job.archived', data: {} }, true, now)), status: true, archived: true };
}
