// Opens the state store and applies migrations.
import { Migrator, type Kysely, type Migration } from 'kysely';
import type { Config } from '../config.ts';
import { createStoreDialect, StoreUnavailableError, type StoreDialect } from './dialect.ts';
import { migrations } from './migrations/index.ts';
import type { Database } from './schema.ts';
import { createSecretBox, type SecretBox } from './secret-box.ts';
import { checkSecretFingerprint } from './fingerprint.ts';

/** For reading which migrations exist and ran, which never runs one. */
const NO_SECRETS: SecretBox = {
  seal: () => {
    throw new Error('no secret box while only listing migrations');
  },
  open: () => {
    throw new Error('no secret box while only listing migrations');
  },
};

export interface Store {
  readonly db: Kysely<Database>;
  readonly dialect: StoreDialect;
  close(): Promise<void>;
}

function migrator(dialect: StoreDialect, secrets: SecretBox): Migrator {
  return new Migrator({
    db: dialect.db,
    migrationTableName: 'folio_migrations',
    migrationLockTableName: 'folio_migrations_lock',
    provider: {
      async getMigrations() {
        const out: Record<string, Migration> = {};
        for (const [name, m] of Object.entries(migrations)) {
          out[name] = { up: (db) => m.up(db, dialect, secrets) };
        }
        return out;
      },
    },
  });
}

/**
 * Applies pending migrations and checks that the store was written with this FOLIO_SECRET; returns
 * the names applied. `folioSecret` seals secrets that older versions stored in plain text. A store
 * that cannot be reached is one sentence (StoreUnavailableError), not a driver's stack trace.
 */
export async function migrate(dialect: StoreDialect, folioSecret: string): Promise<string[]> {
  try {
    const { error, results } = await migrator(dialect, createSecretBox(folioSecret)).migrateToLatest();
    if (error) throw error instanceof Error ? error : new Error(String(error));
    await checkSecretFingerprint(dialect.db, folioSecret);
    return (results ?? []).filter((r) => r.status === 'Success').map((r) => r.migrationName);
  } catch (err) {
    const unreachable = dialect.unreachable(err);
    if (unreachable) throw new StoreUnavailableError(unreachable);
    throw err;
  }
}

/** True when the store answers and every known migration is applied. */
export async function isReady(dialect: StoreDialect): Promise<boolean> {
  try {
    const applied = await migrator(dialect, NO_SECRETS).getMigrations();
    return applied.every((m) => m.executedAt !== undefined);
  } catch {
    return false;
  }
}

export async function openStore(config: Config, opts: { migrate?: boolean } = {}): Promise<Store> {
  const dialect = createStoreDialect(config);
  if (opts.migrate !== false) await migrate(dialect, config.secret);
  return { db: dialect.db, dialect, close: () => dialect.close() };
}
