// Keys that cover many projects (admin keys), and jobs started by code changes: the watched
// repositories and template of a project, every webhook delivery received, and which job tracks
// which code change. Additive only: existing tables keep their columns.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  // Same key format, hash, scope, expiry and revocation as api_keys; no owning project.
  await db.schema
    .createTable('admin_keys')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('name', 'text', (c) => c.notNull())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('hash', 'text', (c) => c.notNull().unique())
    .addColumn('scope', 'text', (c) => c.notNull())
    // JSON array of project ids, or null for every project of the installation.
    .addColumn('project_ids', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addColumn('expires_at', 'bigint')
    .addColumn('revoked_at', 'bigint')
    .addColumn('last_used_at', 'bigint')
    .execute();

  // What started a job: JSON {kind, host, repository, url}; null for jobs made through the API.
  await db.schema.alterTable('jobs').addColumn('trigger', 'text').execute();

  await db.schema
    .createTable('trigger_settings')
    .addColumn('project_id', 'text', (c) => c.primaryKey().references('projects.id').onDelete('cascade'))
    // Sealed with the secret box (trigger_settings.secret); null until one is generated.
    .addColumn('secret', 'text')
    .addColumn('secret_created_at', 'bigint')
    // null: the default template.
    .addColumn('template', 'text')
    .addColumn('updated_at', 'bigint', (c) => c.notNull())
    .execute();

  await db.schema
    .createTable('trigger_repositories')
    .addColumn('id', 'text', (c) => c.primaryKey())
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('repository_url', 'text', (c) => c.notNull())
    // Lower-cased owner/name (or group/sub/name) that payloads are matched against.
    .addColumn('full_path', 'text', (c) => c.notNull())
    // JSON arrays: events (merged, opened, push), path globs, labels.
    .addColumn('events', 'text', (c) => c.notNull())
    .addColumn('paths', 'text', (c) => c.notNull())
    .addColumn('labels', 'text', (c) => c.notNull())
    // Sealed (trigger_repositories.token): reads the change from the code host's API.
    .addColumn('token', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trigger_repositories_project').on('trigger_repositories').columns(['project_id', 'host', 'full_path']).unique().execute();

  await dialect
    .idColumn(db.schema.createTable('trigger_deliveries'))
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('host', 'text', (c) => c.notNull())
    .addColumn('delivery_id', 'text')
    .addColumn('event', 'text')
    .addColumn('outcome', 'text', (c) => c.notNull())
    .addColumn('status_code', 'integer', (c) => c.notNull())
    .addColumn('reason', 'text', (c) => c.notNull())
    .addColumn('repository', 'text')
    .addColumn('change_url', 'text')
    .addColumn('job_id', 'text')
    // Set only on verified deliveries that did something: a redelivery finds it (exactly once).
    .addColumn('dedupe_key', 'text', (c) => c.unique())
    .addColumn('received_at', 'bigint', (c) => c.notNull())
    .execute();
  await db.schema.createIndex('trigger_deliveries_project').on('trigger_deliveries').columns(['project_id', 'received_at']).execute();
  await db.schema.createIndex('trigger_deliveries_received').on('trigger_deliveries').column('received_at').execute();

  // The job that tracks a code change (a pull request), so later pushes to it follow up on that job.
  await db.schema
    .createTable('trigger_changes')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    .addColumn('change_key', 'text', (c) => c.notNull())
    .addColumn('job_id', 'text', (c) => c.notNull().references('jobs.id').onDelete('cascade'))
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('trigger_changes_pk', ['project_id', 'change_key'])
    .execute();
}
