// The merge state of every job with a pull request, in one place (jobs/pull-request-states.ts asks the
// code host and writes it; the jobs list, the job impact and the suggestions read it). It moves here
// from suggestion_jobs, which kept it for suggestion jobs only. `job_changes.pages` keeps the pages a
// job touched, with their site paths (jobs/impact-pages.ts), computed where the repository is at hand.
import { sql, type Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('job_pull_requests')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    // What the code host said of the job's pull request: open, merged or closed (null: none found), and when merged.
    .addColumn('pr_state', 'text')
    .addColumn('merged_at', 'bigint')
    .addColumn('pr_checked_at', 'bigint', (c) => c.notNull())
    .execute();
  await sql`INSERT INTO job_pull_requests (job_id, pr_state, merged_at, pr_checked_at)
    SELECT job_id, pr_state, merged_at, pr_checked_at FROM suggestion_jobs WHERE pr_checked_at IS NOT NULL`.execute(db);
  for (const column of ['pr_state', 'merged_at', 'pr_checked_at']) await db.schema.alterTable('suggestion_jobs').dropColumn(column).execute();
  // JSON array of ImpactPage-shaped entries without counts (change, path, previousPath, file, redirectTo); null: not computed yet.
  await db.schema.alterTable('job_changes').addColumn('pages', 'text').execute();
}
