// Persistence of suggestion jobs (which paths a job started from traffic covers, with what it was
// given) and of the weekly automatic run's claims, one per project and ISO week.
import type { Kysely, Selectable, Transaction } from 'kysely';
import type { Database, JobStatus, SuggestionJobsTable } from './schema.ts';

type Db = Kysely<Database> | Transaction<Database>;

export type SuggestionJobRow = Selectable<SuggestionJobsTable> & {
  status: JobStatus;
  /** From job_pull_requests (null: never asked). */
  pr_state: string | null;
  merged_at: number | null;
  pr_checked_at: number | null;
  pr_link: string | null;
  ref: string;
  base_ref: string;
  job_updated_at: number;
};

export type NewSuggestionJob = Selectable<SuggestionJobsTable>;

export async function insertSuggestionJob(trx: Db, row: NewSuggestionJob): Promise<void> {
  await trx.insertInto('suggestion_jobs').values(row).execute();
}

/** The suggestion jobs' records bound to one transaction (what JobsService.startWith hands its caller). */
export interface SuggestionJobRecords {
  started(projectId: string): Promise<SuggestionJobRow[]>;
  insert(row: NewSuggestionJob): Promise<void>;
}

export function suggestionJobRecords(trx: Transaction<Database>): SuggestionJobRecords {
  return { started: (projectId) => suggestionJobs(trx, projectId), insert: (row) => insertSuggestionJob(trx, row) };
}

/** The project's suggestion jobs with their jobs' state, newest first. */
export function suggestionJobs(db: Db, projectId: string, limit = 50): Promise<SuggestionJobRow[]> {
  return db
    .selectFrom('suggestion_jobs as s')
    .innerJoin('jobs as j', 'j.id', 's.job_id')
    .leftJoin('job_pull_requests as pr', 'pr.job_id', 's.job_id')
    .selectAll('s')
    .select(['j.status', 'j.pr_link', 'j.ref', 'j.base_ref', 'j.updated_at as job_updated_at', 'pr.pr_state', 'pr.merged_at', 'pr.pr_checked_at'])
    .where('s.project_id', '=', projectId)
    .orderBy('s.created_at', 'desc')
    .orderBy('s.job_id', 'desc')
    .limit(limit)
    .execute();
}

/** Claims the project's automatic run for `week`; false when a process claimed it before. */
export async function claimAutoRun(trx: Db, projectId: string, week: string, now: number): Promise<boolean> {
  const res = await trx
    .insertInto('suggestion_auto_runs')
    .values({ project_id: projectId, week, job_id: null, outcome: 'claimed', created_at: now })
    .onConflict((oc) => oc.columns(['project_id', 'week']).doNothing())
    .executeTakeFirst();
  return Number(res.numInsertedOrUpdatedRows ?? 0n) === 1;
}

export async function finishAutoRun(trx: Db, projectId: string, week: string, outcome: string, jobId: string | null): Promise<void> {
  await trx.updateTable('suggestion_auto_runs').set({ outcome, job_id: jobId }).where('project_id', '=', projectId).where('week', '=', week).execute();
}

/** Projects with the weekly automatic run on, and their thresholds. */
export function autoFixProjects(db: Db): Promise<{ id: string; min: number }[]> {
  return db
    .selectFrom('projects')
    .select(['id', 'auto_fix_min_visitors as min'])
    .where('auto_fix_min_visitors', 'is not', null)
    .execute() as Promise<{ id: string; min: number }[]>;
}
