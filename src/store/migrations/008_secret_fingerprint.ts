// Every process on a shared store must hold the same FOLIO_SECRET (sealed tokens, keyed visitor
// ids): the store keeps a fingerprint of the secret that wrote it, checked at every start
// (store/fingerprint.ts). A small key/value table of facts about the store itself.
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema
    .createTable('folio_meta')
    .addColumn('key', 'text', (c) => c.primaryKey())
    .addColumn('value', 'text', (c) => c.notNull())
    .execute();
}
