// Reviewable pull requests: the project's docs-checks mode, each job's token usage (totals on the job,
// per day for the project's usage view), the files it changed, and its bounded diff and last checks
// report (written by the worker, which has the git mirror; read by the API, which may not).
import { sql, type Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('projects').addColumn('checks', 'text', (c) => c.notNull().defaultTo('warn')).execute();

  await db.schema.alterTable('jobs').addColumn('input_tokens', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('jobs').addColumn('output_tokens', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('jobs').addColumn('files', 'text', (c) => c.notNull().defaultTo(sql`'[]'`)).execute();

  await db.schema
    .createTable('job_usage')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    /** Start of the UTC day, epoch ms. */
    .addColumn('day', 'bigint', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('input_tokens', 'bigint', (c) => c.notNull())
    .addColumn('output_tokens', 'bigint', (c) => c.notNull())
    .addColumn('calls', 'integer', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_usage_pk', ['job_id', 'day'])
    .execute();
  await db.schema.createIndex('job_usage_project_day').on('job_usage').columns(['project_id', 'day']).execute();

  await db.schema
    .createTable('job_changes')
    .addColumn('job_id', 'text', (c) => c.primaryKey().references('jobs.id').onDelete('cascade'))
    .addColumn('base_sha', 'text')
    .addColumn('head_sha', 'text')
    .addColumn('diff', 'text', (c) => c.notNull().defaultTo(''))
    .addColumn('diff_truncated', 'integer', (c) => c.notNull().defaultTo(0))
    /** JSON of the last checks report, or null. */
    .addColumn('checks', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();
}
