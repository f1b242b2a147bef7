// Review comments on Folio's pull requests become follow-ups (docs/triggers.md): per project, which
// comments act (`mention`: a review requesting changes or a comment naming the agent; `every`: every
// comment of a maintainer) and the name that calls the agent; each message's origin (JSON
// {kind:'review', reviewer, url}; null for the API's messages); and the answers Folio owes on pull
// requests, posted once the turn they wait for has ended (or at once when nothing was started).
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('projects').addColumn('review_comments', 'text', (c) => c.notNull().defaultTo('mention')).execute();
  await db.schema.alterTable('projects').addColumn('review_mention', 'text', (c) => c.notNull().defaultTo('@folio')).execute();
  await db.schema.alterTable('job_messages').addColumn('origin', 'text').execute();
  await db.schema
    .createTable('review_replies')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    // The message whose turn the answer reports; null: the answer is `text`, sent at once.
    .addColumn('seq', 'integer')
    .addColumn('text', 'text')
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('repository_url', 'text', (c) => c.notNull())
    .addColumn('pr_number', 'integer', (c) => c.notNull())
    // JSON: where the answer goes (a review comment's thread, a GitLab discussion, the pull request).
    .addColumn('target', 'text', (c) => c.notNull())
    .addColumn('state', 'text', (c) => c.notNull())
    .addColumn('attempts', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('error', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('answered_at', 'bigint')
    .execute();
  await db.schema.createIndex('review_replies_state').on('review_replies').columns(['state', 'created_at']).execute();
}
