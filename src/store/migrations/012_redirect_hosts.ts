// `projects.redirect_hosts`: the hosts besides the docs site that a redirect written by a job may lead
// to (JSON array of host names, checked and normalised by admin/projects.ts). Empty by default: every
// redirect off the site is a problem of the docs checks, and suggestion jobs never use the list.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('projects').addColumn('redirect_hosts', 'text', (c) => c.notNull().defaultTo('[]')).execute();
}
