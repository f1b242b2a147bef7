// The scale-out analytics engine: ClickHouse (CLICKHOUSE_URL=http://host:8123/<database>). Any number of
// Folio processes write to and read from the same database. The layout and its migrations are in
// schema.ts, writes, folds and retention in writes.ts (the first-seen fold in fold.ts); reports
// (src/analytics/reports/) run on reads.ts. Literals go into SQL through sql.ts only: ClickHouse 18.16 has no query parameters.
import type { TSchema } from 'typebox';
import type { AnalyticsEngine, ImportColumns, StoredEvent, WriteOutcome } from '../../engine.ts';
import { eventsOfColumns } from '../../engine.ts';
import type { Report, ReportParams } from '../../reports/report.ts';
import { httpConnection, parseClickHouseUrl, type ClickHouseConnection, type Row } from './connection.ts';
import type { ClickHouseReads } from './reads.ts';
import { migrate } from './schema.ts';
import { ident, raw, sql, type Sql } from './sql.ts';
import { deleteBefore, fold, FOLD_MARGIN_MS, unfoldedRows, writeEvents } from './writes.ts';
import { Serial } from '../../../util/serial.ts';

export { parseClickHouseUrl } from './connection.ts';

export interface ClickHouseOptions {
  /** `http(s)://[user:password@]host:port[/database]`; no path means the `default` database. */
  url: string;
  /** Per-request timeout (ms). */
  requestTimeoutMs?: number;
  /**
   * Runs a fold while holding a lock shared by every process of the deployment (folds must not
   * overlap). Without it folds are only serialised within this process.
   */
  foldLock?: <T>(fn: () => Promise<T>) => Promise<T>;
  /** Rows younger than this are left to the next fold (default FOLD_MARGIN_MS; tests use 0). */
  foldMarginMs?: number;
}

type EngineOptions = Pick<ClickHouseOptions, 'foldLock' | 'foldMarginMs'>;

export class ClickHouseEngine implements AnalyticsEngine {
  readonly name = 'clickhouse';
  private readonly conn: ClickHouseConnection;
  private readonly db: Sql;
  private readonly reads: ClickHouseReads;
  readonly database: string;
  private readonly foldLock: <T>(fn: () => Promise<T>) => Promise<T>;
  private readonly foldMarginMs: number;
  /** Serialises writes from this process (import dedupe reads, then inserts). */
  private readonly writes = new Serial();
  private closed = false;
  /** Rows this process wrote (or found) that a fold has not taken yet (for scheduling folds). */
  private unfolded = 0;
  /** When unfolded rows were last counted in the database. */
  private checkedAt = Date.now();

  private constructor(conn: ClickHouseConnection, database: string, opts: EngineOptions) {
    const db = ident(database);
    this.reads = { db, rows: (q) => conn.rows(q) };
    this.conn = conn;
    this.database = database;
    this.db = db;
    this.foldLock = opts.foldLock ?? ((fn) => fn());
    this.foldMarginMs = opts.foldMarginMs ?? FOLD_MARGIN_MS;
  }

  /** Connects over HTTP, creates the database when missing and applies pending migrations. */
  static async open(opts: ClickHouseOptions): Promise<ClickHouseEngine> {
    const t = parseClickHouseUrl(opts.url);
    return ClickHouseEngine.over(httpConnection(t, opts.requestTimeoutMs), t.database, opts);
  }

  /** The engine over any connection (chdb in the tests). */
  static async over(conn: ClickHouseConnection, database: string, opts: EngineOptions = {}): Promise<ClickHouseEngine> {
    const engine = new ClickHouseEngine(conn, database, opts);
    try {
      await migrate(conn, engine.db, database);
      engine.unfolded = await unfoldedRows(conn, engine.db);
    } catch (err) {
      await conn.close().catch(() => {});
      throw new Error(`ClickHouse at ${conn.where} (database ${database}) is not usable: ${(err as Error).message}`, { cause: err });
    }
    return engine;
  }

  run<Q extends TSchema, R extends TSchema, Result>(report: Report<Q, R, Result>, params: ReportParams<Q>): Promise<Result> {
    return report.clickhouse(this.reads, params);
  }

  pendingRows(): number {
    if (this.unfolded > 0) return this.unfolded;
    // Other processes (servers, a direct import) write too: look for their rows at least once a minute.
    return Date.now() - this.checkedAt >= 60_000 ? 1 : 0;
  }

  /** Folds what was written more than the fold margin ago into the first-seen layout (queries are exact either way). */
  compact(): Promise<void> {
    return this.writes.run(async () => {
      await this.foldLock(() => fold(this.conn, this.db, this.foldMarginMs));
      this.unfolded = await unfoldedRows(this.conn, this.db);
      this.checkedAt = Date.now();
    });
  }

  write(events: StoredEvent[]): Promise<WriteOutcome> {
    return this.writes.run(async () => {
      const out = await writeEvents(this.conn, this.db, events);
      this.unfolded += events.length;
      return out;
    });
  }

  async writeImport(batch: ImportColumns): Promise<{ duplicates: number }> {
    const { duplicates } = await this.write(batch.notFound?.length ? [...eventsOfColumns(batch), ...batch.notFound] : eventsOfColumns(batch));
    return { duplicates: duplicates.get(0) ?? 0 };
  }

  deleteBefore(day: number): Promise<void> {
    return this.writes.run(() => this.foldLock(() => deleteBefore(this.conn, this.db, day)));
  }

  /** Runs SQL (benchmarks, tests and diagnostics only; never with user input). */
  async sql(query: string | Sql, settings?: Record<string, string>): Promise<Row[]> {
    return this.conn.rows(typeof query === 'string' ? raw(query) : query, settings);
  }

  /** Runs a statement without result rows (benchmarks, tests and diagnostics only). */
  async exec(query: string | Sql): Promise<void> {
    await this.conn.command(typeof query === 'string' ? raw(query) : query);
  }

  /** Drops the whole database (tests). */
  async dropDatabase(): Promise<void> {
    await this.conn.command(sql`DROP DATABASE IF EXISTS ${this.db}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.idle();
    await this.conn.close();
  }
}

/** Opens the ClickHouse engine for CLICKHOUSE_URL. */
export function createClickHouseEngine(url: string, opts: EngineOptions = {}): Promise<ClickHouseEngine> {
  return ClickHouseEngine.open({ url, ...opts });
}

/** Brings the database's layout to the latest version (`folio migrate`); returns the versions applied. */
export async function migrateClickHouse(url: string): Promise<number[]> {
  const t = parseClickHouseUrl(url);
  const conn = httpConnection(t);
  try {
    return await migrate(conn, ident(t.database), t.database);
  } finally {
    await conn.close();
  }
}
