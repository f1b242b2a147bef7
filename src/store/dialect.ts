// Every difference between SQLite and PostgreSQL lives in this file.
import { DatabaseSync, type StatementSync } from 'node:sqlite';
import { closeSync, openSync, readSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import {
  CompiledQuery,
  Kysely,
  PostgresDialect,
  SqliteAdapter,
  SqliteDialect,
  SqliteDriver,
  sql,
  type CreateTableBuilder,
  type DatabaseConnection,
  type DialectAdapter,
  type Driver,
  type SelectQueryBuilder,
  type SqliteDialectConfig,
  type Transaction,
} from 'kysely';
import pg from 'pg';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import type { Database } from './schema.ts';
import { KeyedSerial } from '../util/serial.ts';
import { CodedError } from '../errors.ts';

/** The store does not answer or cannot be opened: one sentence, never a driver's stack trace. */
export class StoreUnavailableError extends CodedError {
  constructor(message: string) {
    super('store_unavailable', message);
  }
}

export type DialectKind = 'sqlite' | 'postgres';

export interface StoreDialect {
  readonly kind: DialectKind;
  readonly db: Kysely<Database>;
  /** Serialises writers of one project inside a transaction (exact rate limits, idempotency). */
  lockProject(trx: Transaction<Database>, projectId: string): Promise<void>;
  /** Row locking for queue claims: other claimers skip rows this transaction holds. */
  forClaim<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** Locks the selected rows until the transaction ends (SQLite: the transaction already holds the database). */
  forUpdate<DB, TB extends keyof DB, O>(qb: SelectQueryBuilder<DB, TB, O>): SelectQueryBuilder<DB, TB, O>;
  /** An auto-incrementing integer primary key column named `id`. */
  idColumn<T extends string>(table: CreateTableBuilder<T, never>): CreateTableBuilder<T, 'id'>;
  /**
   * After rows were copied with their ids into a table made with `idColumn` (a rebuilt table): new
   * rows get ids after theirs. PostgreSQL moves the column's sequence; SQLite's AUTOINCREMENT already
   * counts the ids inserted.
   */
  continueIds(db: Kysely<unknown>, table: string): Promise<void>;
  isUniqueViolation(err: unknown): boolean;
  /** One sentence when `err` says the store cannot be reached or opened (never a password); else null. */
  unreachable(err: unknown): string | null;
  /**
   * Runs a read-only compiled query outside transactions, seeing only committed data. On SQLite it
   * uses a second, read-only connection synchronously (WAL readers never wait); hot paths use it.
   */
  readCommitted<R>(query: CompiledQuery<R>): Promise<R[]>;
  /**
   * A number that changes whenever anything is committed to the store (by any connection or
   * process), for caches of committed reads; null where there is no cheap such counter (PostgreSQL).
   * `since` (a performance.now() time, e.g. when a request arrived) lets a value read after that
   * moment be reused: it already reflects every commit made before then.
   */
  dataVersion(since?: number): number | null;
  /**
   * Runs `fn` while holding the lock `name`, shared by every process of the deployment (PostgreSQL: a
   * session advisory lock on one pooled connection). SQLite: within this process only (one server
   * per SQLite file).
   */
  exclusively<T>(name: string, fn: () => Promise<T>): Promise<T>;
  /** Cross-process wake-up: notify listeners on `channel`. In-process wake-ups do not need this. */
  notify(channel: string, payload?: string): Promise<void>;
  /** Subscribes to notifications from other processes; returns an unsubscribe function. */
  listen(channel: string, onNotify: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

export function createStoreDialect(config: Config): StoreDialect {
  return config.databaseUrl ? postgresDialect(config.databaseUrl, config.databasePoolSize) : sqliteDialect(config.dataDir);
}

// ---------------------------------------------------------------- SQLite

/** How long a SQLite connection waits for a lock another connection or process holds. */
const BUSY_TIMEOUT_MS = 10_000;

/** SQLITE_BUSY, extended codes included: the lock stayed taken for the whole busy timeout. */
const sqliteBusy = (err: unknown) => ((err as { errcode?: number } | null)?.errcode ?? 0) % 256 === 5;

function sqliteUnreachable(file: string, err: unknown): string | null {
  if (!sqliteBusy(err)) return null;
  return `The SQLite database ${file} stayed locked by another process for ${BUSY_TIMEOUT_MS / 1000} s: try again, or stop whatever holds it (another folio serve on this data directory, or a long import).`;
}

/** Adapts node:sqlite to the statement shape Kysely's SqliteDialect expects, caching prepared statements. */
function nodeSqliteAdapter(file: string) {
  // The busy timeout is set as the connection opens, before anything takes a lock (switching to WAL
  // does): processes opening a new data directory together wait their turn instead of failing.
  const db = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS });
  db.exec('PRAGMA journal_mode = WAL');
  db.exec('PRAGMA synchronous = NORMAL');
  db.exec('PRAGMA foreign_keys = ON');
  const cache = new LRUCache<string, { stmt: StatementSync; reader: boolean }>({ max: 500 });
  const prepare = (sql: string) => {
    let hit = cache.get(sql);
    if (!hit) {
      const stmt = db.prepare(sql);
      hit = { stmt, reader: stmt.columns().length > 0 };
      cache.set(sql, hit);
    }
    return hit;
  };
  return {
    close: () => db.close(),
    exec: (sql: string) => db.exec(sql),
    prepare(sql: string) {
      const { stmt, reader } = prepare(sql);
      return {
        reader,
        all: (params: readonly unknown[]) => stmt.all(...(params as never[])),
        run: (params: readonly unknown[]) => {
          const r = stmt.run(...(params as never[]));
          return { changes: r.changes, lastInsertRowid: r.lastInsertRowid };
        },
        iterate: (params: readonly unknown[]) => stmt.iterate(...(params as never[])),
      };
    },
  };
}

/**
 * Checkpoints move the WAL into the database file and fsync it, which takes tens of milliseconds on
 * ordinary disks. Done by the writer they stall a commit every hundred or so; here a worker thread
 * with its own connection does them every second (PASSIVE: it never blocks writers or readers).
 */
const CHECKPOINTER = `
const { DatabaseSync } = require('node:sqlite');
const { workerData } = require('node:worker_threads');
const db = new DatabaseSync(workerData.file);
db.exec('PRAGMA busy_timeout = 1000');
setInterval(() => { try { db.exec('PRAGMA wal_checkpoint(PASSIVE)'); } catch {} }, workerData.everyMs);
`;

function startCheckpointer(file: string): Worker {
  const worker = new Worker(CHECKPOINTER, { eval: true, workerData: { file, everyMs: 1000 } });
  worker.unref();
  worker.on('error', () => {});
  return worker;
}

/**
 * Kysely's SQLite driver with two changes: transactions take the write lock up front (BEGIN
 * IMMEDIATE) so read-then-write never deadlocks across processes, and waiters for the single
 * connection queue in order (Kysely's own mutex wakes every waiter on each release, which costs
 * O(n²) under concurrent requests).
 */
class ImmediateSqliteDriver extends SqliteDriver {
  #connection: DatabaseConnection | null = null;
  #busy = false;
  readonly #waiters: (() => void)[] = [];

  override async acquireConnection(): Promise<DatabaseConnection> {
    if (this.#busy) await new Promise<void>((resolve) => this.#waiters.push(resolve));
    this.#busy = true;
    // The base driver's mutex is taken once and kept: this queue does the serialising.
    this.#connection ??= await super.acquireConnection();
    return this.#connection;
  }

  override async releaseConnection(): Promise<void> {
    const next = this.#waiters.shift();
    if (next) next(); // hand over directly; #busy stays true
    else this.#busy = false;
  }

  override async beginTransaction(connection: DatabaseConnection): Promise<void> {
    await connection.executeQuery(CompiledQuery.raw('begin immediate'));
  }
}

/**
 * Every commit, by any connection or process, rewrites the WAL-index header: the first 48 bytes of
 * the -shm file (https://www.sqlite.org/walformat.html; processes running different SQLite versions
 * share it, so its layout does not change). Comparing those bytes costs one pread, where PRAGMA
 * data_version takes and drops a shared-memory lock (two fcntl calls) and steps a statement: under
 * load that was a third of a cached `GET job`. SQLite writes this first copy of the header last,
 * so once it changed the commit is visible to new reads. A change that is not a commit (recovery,
 * a WAL restart) only costs a cache miss. Falls back to the pragma where there is no -shm file.
 * Kept for `GET job`: docs/benchmarks.md, "Performance shortcuts kept".
 */
function walChangeCounter(file: string, reader: ReturnType<typeof nodeSqliteAdapter>): { read(): number; close(): void } {
  let fd: number;
  try {
    reader.prepare('select 1 from sqlite_master limit 1').all([]); // the -shm file exists from here on
    fd = openSync(`${file}-shm`, 'r');
  } catch {
    const pragma = reader.prepare('PRAGMA data_version');
    return { read: () => Number((pragma.all([])[0] as { data_version: number }).data_version), close: () => {} };
  }
  const header = Buffer.alloc(48);
  const last = Buffer.alloc(48);
  let counter = 0;
  return {
    read() {
      let complete = false;
      try {
        complete = readSync(fd, header, 0, 48, 0) === 48;
      } catch {
        // counted as a change below
      }
      // A header that could not be read counts as a change: a cache miss, never a stale read.
      if (!complete || !header.equals(last)) {
        header.copy(last);
        counter++;
      }
      return counter;
    },
    close: () => closeSync(fd),
  };
}

/**
 * SQLite's DDL is transactional, but Kysely's adapter says it is not, and its migrator then runs
 * SQLite migrations with no lock at all: two processes opening a new store would both run them.
 * Said so, the migrator runs them in one transaction, which takes the write lock up front (BEGIN
 * IMMEDIATE): a second process waits its turn (the busy timeout) and finds them applied, and a
 * migration that fails leaves nothing half done.
 */
class TransactionalDdlSqliteAdapter extends SqliteAdapter {
  override get supportsTransactionalDdl(): boolean {
    return true;
  }
}

class ImmediateSqliteDialect extends SqliteDialect {
  readonly #driverConfig: SqliteDialectConfig;
  constructor(config: SqliteDialectConfig) {
    super(config);
    this.#driverConfig = config;
  }
  override createDriver(): Driver {
    return new ImmediateSqliteDriver(this.#driverConfig);
  }
  override createAdapter(): DialectAdapter {
    return new TransactionalDdlSqliteAdapter();
  }
}

/** The write connection: WAL mode, and no checkpoints of its own (the checkpointer thread does them, see CHECKPOINTER). */
function openWriter(file: string): ReturnType<typeof nodeSqliteAdapter> {
  try {
    const adapter = nodeSqliteAdapter(file);
    adapter.exec('PRAGMA wal_autocheckpoint = 0');
    return adapter;
  } catch (err) {
    const unreachable = sqliteUnreachable(file, err);
    throw unreachable ? new StoreUnavailableError(unreachable) : err;
  }
}

function sqliteDialect(dataDir: string): StoreDialect {
  const file = path.join(dataDir, 'folio.db');
  const adapter = openWriter(file);
  const checkpointer = startCheckpointer(file);
  const db = new Kysely<Database>({ dialect: new ImmediateSqliteDialect({ database: adapter as never }) });
  let reader: ReturnType<typeof nodeSqliteAdapter> | null = null;
  const readerConnection = () => (reader ??= nodeSqliteAdapter(file));
  let changeCounter: ReturnType<typeof walChangeCounter> | undefined;
  const version = { value: 0, readAt: -Infinity };
  const locks = new KeyedSerial();
  return {
    kind: 'sqlite',
    db,
    exclusively: (name, fn) => locks.run(name, fn),
    // A SQLite write transaction already holds the whole database (BEGIN IMMEDIATE).
    lockProject: async () => {},
    forClaim: (qb) => qb,
    forUpdate: (qb) => qb,
    idColumn: (t) => t.addColumn('id', 'integer', (c) => c.primaryKey().autoIncrement()),
    continueIds: async () => {},
    isUniqueViolation: (err) => /UNIQUE constraint failed/.test(String((err as Error)?.message)),
    unreachable: (err) => sqliteUnreachable(file, err),
    // The reader is opened on first use: the file exists and is in WAL mode by then.
    readCommitted: async <R>(query: CompiledQuery<R>) => readerConnection().prepare(query.sql).all(query.parameters) as R[],
    dataVersion: (since) => {
      if (since !== undefined && version.readAt > since) return version.value;
      version.readAt = performance.now();
      return (version.value = (changeCounter ??= walChangeCounter(file, readerConnection())).read());
    },
    // One process owns a SQLite file's queue; other processes fall back to polling.
    notify: async () => {},
    listen: async () => async () => {},
    close: async () => {
      await checkpointer.terminate();
      changeCounter?.close();
      reader?.close();
      await db.destroy();
    },
  };
}

// ---------------------------------------------------------------- PostgreSQL

// BIGINT (epoch milliseconds, counts) comes back as a JS number; values stay far below 2^53.
pg.types.setTypeParser(20, (v) => Number(v));

/** Connection errors of the pg driver as one sentence naming host, port and database (never the password). */
function postgresUnreachable(url: string, err: unknown): string | null {
  const u = new URL(url);
  const where = `${u.hostname}:${u.port || '5432'}`;
  const database = decodeURIComponent(u.pathname.replace(/^\//, '')) || decodeURIComponent(u.username) || 'postgres';
  // A refused connection to a name with several addresses arrives as an AggregateError.
  const e = err as { code?: string; errors?: { code?: string }[] };
  const code = e?.code ?? e?.errors?.[0]?.code;
  switch (code) {
    case 'ECONNREFUSED':
    case 'ETIMEDOUT':
    case 'EHOSTUNREACH':
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return `PostgreSQL at ${where} does not answer (${code}): start it, or set DATABASE_URL to where it runs.`;
    case '3D000':
      return `The PostgreSQL database "${database}" does not exist at ${where}: create it first (createdb -h ${u.hostname} -p ${u.port || '5432'} ${database}), then start Folio again.`;
    case '28P01':
    case '28000':
      return `PostgreSQL at ${where} refused the credentials of user "${decodeURIComponent(u.username)}" for database "${database}": check DATABASE_URL.`;
    case '57P03':
      return `PostgreSQL at ${where} is starting up or shutting down: try again in a moment.`;
    default:
      return null;
  }
}

function postgresDialect(url: string, poolSize: number): StoreDialect {
  const pool = new pg.Pool({ connectionString: url, max: poolSize });
  pool.on('error', () => {
    /* idle client errors are surfaced on the next query */
  });
  const db = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
  return {
    kind: 'postgres',
    exclusively: (name, fn) =>
      db.connection().execute(async (conn) => {
        await conn.executeQuery(CompiledQuery.raw('select pg_advisory_lock(hashtext($1))', [name]));
        try {
          return await fn();
        } finally {
          await conn.executeQuery(CompiledQuery.raw('select pg_advisory_unlock(hashtext($1))', [name]));
        }
      }),
    db,
    lockProject: async (trx, projectId) => {
      await trx.executeQuery(CompiledQuery.raw('select pg_advisory_xact_lock(hashtext($1))', [projectId]));
    },
    forClaim: (qb) => qb.forUpdate().skipLocked(),
    forUpdate: (qb) => qb.forUpdate(),
    idColumn: (t) => t.addColumn('id', 'bigserial', (c) => c.primaryKey()),
    continueIds: async (db, table) => {
      await sql`select setval(pg_get_serial_sequence(${table}, 'id'), coalesce((select max(id) from ${sql.table(table)}), 0) + 1, false)`.execute(db);
    },
    isUniqueViolation: (err) => (err as { code?: string })?.code === '23505',
    unreachable: (err) => postgresUnreachable(url, err),
    readCommitted: async (query) => (await db.executeQuery(query)).rows,
    dataVersion: () => null,
    notify: async (channel, payload = '') => {
      await pool.query('select pg_notify($1, $2)', [channel, payload]);
    },
    listen: async (channel, onNotify) => {
      const client = await pool.connect();
      client.on('notification', (n) => {
        if (n.channel === channel) onNotify(n.payload ?? '');
      });
      await client.query(`listen ${pg.escapeIdentifier(channel)}`);
      return async () => {
        await client.query(`unlisten ${pg.escapeIdentifier(channel)}`).catch(() => {});
        client.release();
      };
    },
    close: () => db.destroy(),
  };
}
