// Jobs started from traffic suggestions (src/suggestions): which paths each job covers, with the
// counts and candidate pages it was given, so those paths are not proposed again while it works and
// the suggestion can show their not-found visitors before and after. `suggestion_auto_runs` claims
// a project's weekly automatic job: the primary key makes it happen once per week across processes.
// `projects.auto_fix_min_visitors` turns that weekly job on (null: off, the default).
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('suggestion_jobs')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('suggestion_id', 'text', (c) => c.notNull())
    .addColumn('kind', 'text', (c) => c.notNull())
    .addColumn('title', 'text', (c) => c.notNull())
    // JSON: the SuggestedPath list the job was given (paths, counts, candidates).
    .addColumn('paths', 'text', (c) => c.notNull())
    // The traffic the counts came from (ms since the epoch, UTC day bounds).
    .addColumn('range_from', 'bigint', (c) => c.notNull())
    .addColumn('range_to', 'bigint', (c) => c.notNull())
    .addColumn('automatic', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    // What the code host said of the job's pull request: open, merged or closed, and when merged.
    .addColumn('pr_state', 'text')
    .addColumn('merged_at', 'bigint')
    .addColumn('pr_checked_at', 'bigint')
    .execute();
  await db.schema.createIndex('suggestion_jobs_project').on('suggestion_jobs').columns(['project_id', 'created_at']).execute();

  await db.schema
    .createTable('suggestion_auto_runs')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    // ISO week, e.g. 2026-W48.
    .addColumn('week', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('suggestion_auto_runs_pk', ['project_id', 'week'])
    .execute();

  await db.schema.alterTable('projects').addColumn('auto_fix_min_visitors', 'bigint').execute();
}
