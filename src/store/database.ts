// Opens the state store and applies migrations.
import { Migrator, type Kysely, type Migration } from 'kysely';
import type { Config } from '../config.ts';
import { createStoreDialect, type StoreDialect } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
  close(): Promise<void>;
}

function migrator(dialect: StoreDialect): Migrator {
  return new Migrator({
    db: dialect.db,
    migrationTableName: 'folio_migrations',
    migrationLockTableName: 'folio_migrations_lock',
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [name, m] of Object.entries(migrations)) {
          out[name] = { up: (db) => m.up(db, dialect) };
        }
        return out;
      },
    },
  });
}

/** Applies pending migrations; returns the names applied. */
export async function migrate(dialect: StoreDialect): Promise<string[]> {
  const { error, results } = await migrator(dialect).migrateToLatest();
  if (error) throw error instanceof Error ? error : new Error(String(error));
  return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
}

/** True when the store answers and every known migration is applied. */
export async function isReady(dialect: StoreDialect): Promise<boolean> {
  try {
    const applied = await migrator(dialect).getMigrations();
    return applied.every((m) => m.executedAt !== undefined);
  } catch {
    return false;
  }
}

export async function openStore(config: Config, opts: { migrate?: boolean } = {}): Promise<Store> {
  const dialect = createStoreDialect(config);
  if (opts.migrate !== false) await migrate(dialect);
  return { db: dialect.db, dialect, close: () => dialect.close() };
}
