// The job object of the API, from a jobs row.
import type { Selectable } from 'kysely';
import type { Job, JobTrigger } from '../contracts/jobs.ts';
import type { JobsTable } from '../store/schema.ts';

export type JobRow = Selectable<JobsTable>;

const iso = (ms: number) => new Date(Number(ms)).toISOString();

export function jobView(row: JobRow): Job {
  return {
    id: row.id,
    status: row.status,
    source: { repository: row.repository, ref: row.ref, baseRef: row.base_ref },
    model: row.model,
    prLink: row.pr_link,
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    archivedAt: row.archived_at === null ? null : iso(row.archived_at),
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
    trigger: row.trigger === null || row.trigger === undefined ? null : (JSON.parse(row.trigger) as JobTrigger),
  };
}
