// Projects, API keys, jobs and their messages and events, idempotency records, rate-limit windows.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

// long: a frozen migration (history already applied to stores); it stays exactly as it shipped.
export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('projects')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('repository_url', 'text', (c) => c.notNull())
    .addColumn('base_branch', 'text', (c) => c.notNull())
    .addColumn('code_host', 'text', (c) => c.notNull())
    .addColumn('default_model', 'text')
    .addColumn('draft_prs', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('repo_token', 'text')
    .addColumn('webhook_url', 'text')
    .addColumn('webhook_secret', 'text')
    .addColumn('site_origins', 'text', (c) => c.notNull().defaultTo('[]'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('scope', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();
  await db.schema.createIndex('api_keys_project').on('api_keys').column('project_id').execute();

  await db.schema
    .createTable('jobs')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('status', 'text', (c) => c.notNull())
    .addColumn('model', 'text', (c) => c.notNull())
    .addColumn('repository', 'text', (c) => c.notNull())
    .addColumn('ref', 'text', (c) => c.notNull())
    .addColumn('base_ref', 'text', (c) => c.notNull())
    .addColumn('pr_link', 'text')
    .addColumn('error_code', 'text')
    .addColumn('error_message', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .addColumn('archived_at', 'bigint')
    .addColumn('lease_owner', 'text')
    .addColumn('lease_expires_at', 'bigint')
    .addColumn('lost_leases', 'integer', (c) => c.notNull().defaultTo(0))
    .execute();
  // Listing newest first per project (ids sort by creation time), and the queue's claim scan.
  await db.schema.createIndex('jobs_project_id').on('jobs').columns(['project_id', 'id']).execute();
  await db.schema.createIndex('jobs_project_status_id').on('jobs').columns(['project_id', 'status', 'id']).execute();
  await db.schema.createIndex('jobs_queue').on('jobs').columns(['status', 'lease_expires_at']).execute();

  await db.schema
    .createTable('job_messages')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('prompt', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('handled_at', 'bigint')
    .addColumn('outcome', 'text')
    .addColumn('title', 'text')
    .addColumn('summary', 'text')
    .addPrimaryKeyConstraint('job_messages_pk', ['job_id', 'seq'])
    .execute();

  await db.schema
    .createTable('job_events')
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('seq', 'integer', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .addColumn('type', 'text', (c) => c.notNull())
    .addColumn('data', 'text', (c) => c.notNull())
    .addPrimaryKeyConstraint('job_events_pk', ['job_id', 'seq'])
    .execute();

  await db.schema
    .createTable('idempotency')
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('key', 'text', (c) => c.notNull())
    .addColumn('request_hash', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('body', 'text', (c) => c.notNull())
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('idempotency_pk', ['project_id', 'key'])
    .execute();
  await db.schema.createIndex('idempotency_created').on('idempotency').column('created_at').execute();

  await dialect
    .idColumn(db.schema.createTable('rate_events'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('bucket', 'text', (c) => c.notNull())
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('rate_events_window').on('rate_events').columns(['project_id', 'bucket', 'at']).execute();

  await dialect
    .idColumn(db.schema.createTable('webhook_deliveries'))
    .addColumn('project_id', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text', (c) => c.notNull())
    .addColumn('event', 'text', (c) => c.notNull())
    .addColumn('attempt', 'integer', (c) => c.notNull())
    .addColumn('status_code', 'integer')
    .addColumn('error', 'text')
    .addColumn('at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('webhook_deliveries_job').on('webhook_deliveries').column('job_id').execute();
}
