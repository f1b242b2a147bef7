// The embedded analytics engine: one DuckDB file owned by this process. The layout and its migrations
// are in schema.ts, writes and compaction in writes.ts; reports (src/analytics/reports/) run on reads.ts.
import { CodedError } from '../../../errors.ts';
import { existsSync } from 'node:fs';
import { DuckDBInstance, type DuckDBConnection } from '@duckdb/node-api';
import type { TSchema } from 'typebox';
import type { AnalyticsEngine, ImportColumns, StoredEvent, WriteOutcome } from '../../engine.ts';
import type { Report, ReportParams } from '../../reports/report.ts';
import { DuckDbReads } from './reads.ts';
import { migrate } from './schema.ts';
import { ALL_PATH_HOSTS, Dictionaries, PendingRows, Pool, type PathHosts, type Row } from './state.ts';
import { settlePathHosts } from './path-hosts.ts';
import { compact, deleteBefore, rowsOfEvents, rowsOfImport, STAGE_TABLE, writeRows } from './writes.ts';
import { NOT_FOUND_STAGE, notFoundRows } from './not-found.ts';
import { Serial } from '../../../util/serial.ts';

export class AnalyticsLockedError extends CodedError {
  constructor(file: string) {
    super('analytics_locked', `The analytics file ${file} is locked by another process (a running Folio server?). Send the data through the server instead (--url/--key or FOLIO_URL/FOLIO_API_KEY).`);
  }
}

export interface DuckDbOptions {
  /** Database file, or ':memory:'. */
  file: string;
  readConnections?: number;
  threads?: number;
  memoryLimit?: string;
  /** The referring hosts kept per path (state.ts); default every host. The analytics service keeps its lists' AI assistants. */
  pathHosts?: PathHosts;
}

/** Opens the DuckDB file; a lock held by another process is an AnalyticsLockedError. */
async function openInstance(opts: DuckDbOptions): Promise<DuckDBInstance> {
  const settings: Record<string, string> = {};
  if (opts.threads) settings.threads = String(opts.threads);
  if (opts.memoryLimit) settings.memory_limit = opts.memoryLimit;
  try {
    return await DuckDBInstance.create(opts.file, settings);
  } catch (err) {
    if (/lock/i.test((err as Error).message) && opts.file !== ':memory:' && existsSync(opts.file)) throw new AnalyticsLockedError(opts.file);
    throw err;
  }
}

/** Brings the file's layout to the latest version (`folio migrate`); returns the versions applied. */
export async function migrateDuckDb(file: string): Promise<number[]> {
  const instance = await openInstance({ file });
  const c = await instance.connect();
  try {
    return await migrate(c);
  } finally {
    c.closeSync();
    instance.closeSync();
  }
}

export class DuckDbEngine implements AnalyticsEngine {
  readonly name = 'duckdb';
  private readonly instance: DuckDBInstance;
  private readonly writer: DuckDBConnection;
  private readonly readerConns: DuckDBConnection[];
  private readonly dict: Dictionaries;
  private readonly pending: PendingRows;
  private readonly reads: DuckDbReads;
  /** Serialises writes on the writer connection. */
  private readonly writes = new Serial();
  private closed = false;
  /** The sequence number of the next write. */
  private nextSeq = 1;

  private constructor(instance: DuckDBInstance, writer: DuckDBConnection, readers: DuckDBConnection[], pathHosts: PathHosts) {
    const dict = new Dictionaries();
    const pending = new PendingRows();
    this.reads = new DuckDbReads(new Pool(readers), dict, pending, pathHosts);
    this.dict = dict;
    this.pending = pending;
    this.instance = instance;
    this.writer = writer;
    this.readerConns = readers;
  }

  /** Opens the file, applies pending migrations and loads the dictionaries. */
  static async open(opts: DuckDbOptions): Promise<DuckDbEngine> {
    const instance = await openInstance(opts);
    const writer = await instance.connect();
    await migrate(writer);
    const pathHosts = opts.pathHosts ?? ALL_PATH_HOSTS;
    await settlePathHosts(writer, pathHosts);
    await writer.run(STAGE_TABLE);
    await writer.run(NOT_FOUND_STAGE);
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < (opts.readConnections ?? 4); i++) readers.push(await instance.connect());
    const engine = new DuckDbEngine(instance, writer, readers, pathHosts);
    await engine.dict.load(writer);
    await engine.pending.count(writer);
    engine.nextSeq = Number((await writer.runAndReadAll('SELECT coalesce(max(seq), 0) + 1 FROM events_raw')).getRows()[0][0]);
    return engine;
  }

  run<Q extends TSchema, R extends TSchema, Result>(report: Report<Q, R, Result>, params: ReportParams<Q>): Promise<Result> {
    return report.duckdb(this.reads, params);
  }

  pendingRows(): number {
    return this.pending.total;
  }

  write(events: StoredEvent[]): Promise<WriteOutcome> {
    return this.writes.run(async () => {
      const views = events.filter((e) => !e.notFound);
      // Not-found views go into the page views' transaction and table (one of their own cost ~50× a view: issue 34).
      const missing = views.length < events.length ? notFoundRows(this.dict, events.filter((e) => e.notFound)) : null;
      const rows = await rowsOfEvents(this.writer, this.dict, views);
      const duplicates = await writeRows(this.writer, this.pending, rows, this.nextSeq++, missing);
      return { duplicates };
    });
  }

  writeImport(batch: ImportColumns): Promise<{ duplicates: number }> {
    return this.writes.run(async () => {
      const missing = batch.notFound?.length ? notFoundRows(this.dict, batch.notFound) : null;
      const rows = await rowsOfImport(this.writer, this.dict, batch);
      const duplicates = await writeRows(this.writer, this.pending, rows, this.nextSeq++, missing);
      return { duplicates: duplicates.get(0) ?? 0 };
    });
  }

  compact(): Promise<void> {
    return this.writes.run(() => compact(this.writer, this.pending, this.nextSeq - 1, this.reads.pathHosts));
  }

  deleteBefore(day: number): Promise<void> {
    return this.writes.run(() => deleteBefore(this.writer, this.pending, day));
  }

  /** Runs SQL on a reader connection (benchmarks and diagnostics only; never with user input). */
  sql(query: string): Promise<Row[]> {
    return this.reads.rows(query);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.writes.idle();
    try {
      await this.writer.run('CHECKPOINT');
    } catch {}
    for (const c of this.readerConns) c.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}
