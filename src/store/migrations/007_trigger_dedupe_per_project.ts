// Exactly once per project, not per installation: a delivery's dedupe key (`host:delivery id`) was
// unique across all projects, so when two projects watch the same code repository (the host sends
// each webhook its own copy of an event, with the same X-GitHub-Delivery) the second project's copy
// was answered `duplicate` with the first project's job. The key becomes unique per project.
// SQLite cannot drop a column's UNIQUE constraint, so the table is rebuilt, the same way on both
// stores; every row is kept with its id.
import { sql, type Kysely, type Transaction } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

const TABLE = 'trigger_deliveries';
const REBUILT = 'trigger_deliveries_007';
const COLUMNS = ['id', 'project_id', 'host', 'delivery_id', 'event', 'outcome', 'status_code', 'reason', 'repository', 'change_url', 'job_id', 'dedupe_key', 'received_at'];

export async function up(db: Kysely<unknown>, dialect: StoreDialect): Promise<void> {
  // All or nothing: the migrator runs in a transaction already (store/dialect.ts), a direct call may not.
  const rebuild = async (trx: Kysely<unknown> | Transaction<unknown>) => {
    await dialect
      .idColumn(trx.schema.createTable(REBUILT))
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
      // Set only on verified deliveries that did something; unique per project (index below).
      .addColumn('dedupe_key', 'text')
      .addColumn('received_at', 'bigint', (c) => c.notNull())
      .execute();
    const columns = sql.join(COLUMNS.map((c) => sql.ref(c)));
    await sql`insert into ${sql.table(REBUILT)} (${columns}) select ${columns} from ${sql.table(TABLE)}`.execute(trx);
    await trx.schema.dropTable(TABLE).execute();
    await trx.schema.alterTable(REBUILT).renameTo(TABLE).execute();
    await dialect.continueIds(trx, TABLE);
    await trx.schema.createIndex('trigger_deliveries_project').on(TABLE).columns(['project_id', 'received_at']).execute();
    await trx.schema.createIndex('trigger_deliveries_received').on(TABLE).column('received_at').execute();
    await trx.schema.createIndex('trigger_deliveries_dedupe').on(TABLE).columns(['project_id', 'dedupe_key']).unique().execute();
  };
  if (db.isTransaction) await rebuild(db);
  else await db.transaction().execute(rebuild);
}
