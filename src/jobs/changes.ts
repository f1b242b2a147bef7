// What a job's branch changed and what the docs checks found, stored by the worker (which has the git
// mirror) so the API and dashboard can show them from any process, on SQLite and PostgreSQL alike.
import type { Kysely } from 'kysely';
import type { JobChanges, JobFile } from '../contracts/jobs.ts';
import type { Database } from '../store/schema.ts';
import type { TouchedPage } from './impact-pages.ts';

/** Stored diffs are cut (at a file boundary) to this many bytes. */
export const MAX_STORED_DIFF_BYTES = 1024 * 1024;

export interface BranchDiff {
  baseSha: string;
  headSha: string;
  files: JobFile[];
  diff: string;
  diffTruncated: boolean;
  /** The pages it touched (impact-pages.ts); null when they could not be read (computed on the first impact request). */
  pages?: TouchedPage[] | null;
}

export type StoredChecks = NonNullable<JobChanges['checks']>;

async function upsert(db: Kysely<Database>, jobId: string, set: Partial<Omit<Database['job_changes'], 'job_id'>>): Promise<void> {
  const now = Date.now();
  await db
    .insertInto('job_changes')
    .values({ job_id: jobId, base_sha: null, head_sha: null, diff: '', diff_truncated: 0, checks: null, pages: null, ...set, updated_at: now })
    .onConflict((oc) => oc.column('job_id').doUpdateSet({ ...set, updated_at: now }))
    .execute();
}

/** The branch's diff and files (files also on the job row, for the job object). */
export async function saveBranchDiff(db: Kysely<Database>, jobId: string, d: BranchDiff): Promise<void> {
  const diff = Buffer.byteLength(d.diff) > MAX_STORED_DIFF_BYTES ? '' : d.diff;
  await db.transaction().execute(async (trx) => {
    await trx.updateTable('jobs').set({ files: JSON.stringify(d.files) }).where('id', '=', jobId).execute();
    await upsert(trx, jobId, {
      base_sha: d.baseSha,
      head_sha: d.headSha,
      diff: diff.replace(/\0/g, ''),
      diff_truncated: d.diffTruncated || diff !== d.diff ? 1 : 0,
      pages: d.pages ? JSON.stringify(d.pages) : null,
    });
  });
}

export async function saveChecks(db: Kysely<Database>, jobId: string, checks: StoredChecks): Promise<void> {
  await upsert(db, jobId, { checks: JSON.stringify(checks).replace(/\\u0000/g, '') });
}

/** The pages a job touched, computed after its push by a process that did not have them stored. */
export async function savePages(db: Kysely<Database>, jobId: string, headSha: string, pages: TouchedPage[]): Promise<void> {
  // Only for the head they were read at: a later push stored its own.
  await db.updateTable('job_changes').set({ pages: JSON.stringify(pages) }).where('job_id', '=', jobId).where('head_sha', '=', headSha).execute();
}

/** The commits and stored pages of a job's branch (null: it never pushed). */
export async function readPushed(db: Kysely<Database>, jobId: string): Promise<{ baseSha: string; headSha: string; pages: string | null } | null> {
  const row = await db.selectFrom('job_changes').select(['base_sha', 'head_sha', 'pages']).where('job_id', '=', jobId).executeTakeFirst();
  return row?.base_sha && row.head_sha ? { baseSha: row.base_sha, headSha: row.head_sha, pages: row.pages } : null;
}

export async function readChanges(db: Kysely<Database>, jobId: string, files: JobFile[]): Promise<JobChanges> {
  const row = await db.selectFrom('job_changes').selectAll().where('job_id', '=', jobId).executeTakeFirst();
  let checks: JobChanges['checks'] = null;
  if (row?.checks) {
    try {
      checks = JSON.parse(row.checks) as StoredChecks;
    } catch {
      checks = null;
    }
  }
  return {
    baseSha: row?.base_sha ?? null,
    headSha: row?.head_sha ?? null,
    files,
    diff: row?.diff ?? '',
    diffTruncated: row ? row.diff_truncated === 1 : false,
    checks,
    updatedAt: row ? new Date(Number(row.updated_at)).toISOString() : null,
  };
}
