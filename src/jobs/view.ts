// The job object of the API, from a jobs row.
import type { Selectable } from 'kysely';
import type { Job, JobFile, JobTrigger } from '../contracts/jobs.ts';
import type { JobsTable } from '../store/schema.ts';
import { jobUsage, type PriceTable } from './usage.ts';

/** A jobs row, with its pull request's merge time where the read joined job_pull_requests. */
export type JobRow = Selectable<JobsTable> & { merged_at?: number | string | null };

const iso = (ms: number) => new Date(Number(ms)).toISOString();

function filesOf(json: string | null | undefined): JobFile[] {
  if (!json) return [];
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as JobFile[]) : [];
  } catch {
    return [];
  }
}

/**
 * A stored pull request link as clients see it: only a web (http or https) link. New links are
 * checked against the code host's web origin before they are stored (codehost/index.ts, checkedLink
 * of access.ts); this keeps an older row's non-web link (`javascript:`…) from reaching a client.
 */
export const webLink = (link: string | null): string | null => (link !== null && /^https?:\/\//i.test(link) ? link : null);

/** What started a job, as its row stores it (JSON written by jobs/service.ts); null for jobs created through the API. */
export function storedTrigger(json: string | null | undefined): JobTrigger | null {
  return json === null || json === undefined ? null : (JSON.parse(json) as JobTrigger);
}

/** `prices` turns the job's tokens into its estimated cost (FOLIO_MODEL_PRICES). */
export function jobView(row: JobRow, prices: PriceTable): Job {
  return {
    id: row.id,
    title: row.title,
    status: row.status,
    source: { repository: row.repository, ref: row.ref, baseRef: row.base_ref },
    model: row.model,
    prLink: webLink(row.pr_link),
    createdAt: iso(row.created_at),
    updatedAt: iso(row.updated_at),
    archivedAt: row.archived_at === null ? null : iso(row.archived_at),
    mergedAt: row.merged_at === null || row.merged_at === undefined ? null : iso(Number(row.merged_at)),
    error: row.error_code === null ? null : { code: row.error_code, message: row.error_message ?? '' },
    trigger: storedTrigger(row.trigger),
    files: filesOf(row.files),
    usage: jobUsage(prices, row.model, row.input_tokens ?? 0, row.output_tokens ?? 0),
    limit: {
      maxCostUsd: row.max_cost_usd === null || row.max_cost_usd === undefined ? null : Number(row.max_cost_usd),
      maxTokens: row.max_tokens === null || row.max_tokens === undefined ? null : Number(row.max_tokens),
    },
  };
}
