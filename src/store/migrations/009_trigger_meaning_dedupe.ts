// One code change starts at most one job per project, however often its signed body is replayed:
// what a delivery means (the pushed range, the merged pull request and its merge commit, a pull
// request at its head) is claimed in its own table, unique per project and kept as long as the
// project — not pruned with the delivery records after FOLIO_TRIGGER_DELIVERY_RETENTION_DAYS, since a
// replay of an old body must not rerun the agent either. Changes handled before this migration have
// no stored meaning (their delivery ids still deduplicate redeliveries for the retention period).
//
// Deliveries refused before their signature checked out are not recorded (anyone can send them,
// with any text); the project's settings count them instead.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('trigger_meanings')
    .addColumn('project_id', 'text', (c) => c.notNull().references('projects.id').onDelete('cascade'))
    // e.g. github:acme/api:push:<before>..<after>, github:acme/api#12:merged:<merge commit>.
    .addColumn('meaning_key', 'text', (c) => c.notNull())
    // The job the change started or followed up on; set in the transaction that claimed the key.
    .addColumn('job_id', 'text')
    .addColumn('created_at', 'bigint', (c) => c.notNull())
    .addPrimaryKeyConstraint('trigger_meanings_pk', ['project_id', 'meaning_key'])
    .execute();

  await db.schema.alterTable('trigger_settings').addColumn('refused_deliveries', 'bigint', (c) => c.notNull().defaultTo(0)).execute();
  await db.schema.alterTable('trigger_settings').addColumn('last_refused_at', 'bigint').execute();
}
