// The site's own build as a check (src/site-build): per project, on or off (on by default: it runs
// only where the framework has a build or the project set a command), the project's own setup and
// build commands (null: the framework's), and its time limit in seconds (null: FOLIO_BUILD_TIMEOUT).
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('projects').addColumn('build', 'text', (c) => c.notNull().defaultTo('on')).execute();
  await db.schema.alterTable('projects').addColumn('build_setup', 'text').execute();
  await db.schema.alterTable('projects').addColumn('build_command', 'text').execute();
  await db.schema.alterTable('projects').addColumn('build_timeout_seconds', 'integer').execute();
}
