// The state store for one administrative command (project, key, user): opened from the settings,
// closed when the command is done. Safe while a server runs, and with other commands at once (SQLite
// in WAL mode, each waiting its turn for the write lock; or PostgreSQL).
import { loadConfig } from '../config.ts';
import { openStore } from '../store/database.ts';
import { StoreUnavailableError } from '../store/dialect.ts';
import { ProjectsService } from '../admin/projects.ts';
import { ApiKeyStore } from '../store/api-keys.ts';
import { UserStore } from '../store/users.ts';

export interface AdminStores {
  /** Checked like the dashboard's: the same service. */
  projects: ProjectsService;
  keys: ApiKeyStore;
  users: UserStore;
}

export async function withStore<T>(fn: (stores: AdminStores) => Promise<T>): Promise<T> {
  const config = loadConfig();
  const store = await openStore(config);
  try {
    // A revocation here reaches running servers at once (PostgreSQL NOTIFY; SQLite sees the commit).
    const keys = new ApiKeyStore(store.db, store.db, { notifyRevoked: () => store.dialect.notify('folio_keys') });
    return await fn({ projects: new ProjectsService(store.db, config), keys, users: new UserStore(store.db) });
  } catch (err) {
    // A lock held past the busy timeout, a connection lost: one sentence, not a driver's stack trace.
    const unreachable = store.dialect.unreachable(err);
    throw unreachable ? new StoreUnavailableError(unreachable) : err;
  } finally {
    await store.close();
  }
}
