// The scale-out analytics engine: ClickHouse (CLICKHOUSE_URL=http://host:8123/<database>). Any number of
// Folio processes write to and read from the same database; the engine keeps no state in memory.
//
// Tables (all MergeTree, PARTITION BY toYYYYMM(date), so retention drops whole months):
//   events       every stored view, ORDER BY (project, date, ts): hourly series, the agents report,
//                partial-day range edges, import dedupe (import_key) and the source of the two below.
//   daily        one row per (project, date, path, visitor) with its human and AI view counts,
//                SummingMergeTree fed by the materialized view daily_mv: merges fold repeats of a key;
//                queries never depend on merges having happened (distinct counts and sums).
//                ORDER BY (project, date, path, visitor) serves the visitors and views queries.
//   daily_site   the same per (project, date, visitor), for site-wide totals (daily_site_mv).
// Counting is exact (uniqExact, never uniq). Literals go into SQL through clickhouse-sql.ts only:
// ClickHouse 18.16 (Debian) has no query parameters.
import { createClient, type ClickHouseClient } from '@clickhouse/client';
import { DAY_MS, HOUR_MS, splitRange, type Range } from '../dates.ts';
import type { AgentRow, AnalyticsEngine, Counts, ImportColumns, Page, PagedCounts, StoredEvent, TimeseriesPoint, WriteOutcome } from '../engine.ts';
import { CLS_NAME, eventsOfColumns } from '../engine.ts';
import { ident, inList, join, MAX_DATE_DAY, raw, Sql, sql, SqlDate } from './clickhouse-sql.ts';

export interface ClickHouseOptions {
  /** `http(s)://[user:password@]host:port[/database]`; no path means the `default` database. */
  url: string;
  /** Per-request timeout (ms). */
  requestTimeoutMs?: number;
}

interface Target {
  url: string;
  username?: string;
  password?: string;
  database: string;
}

/** Splits CLICKHOUSE_URL into the server address, credentials and database (the URL path). */
export function parseClickHouseUrl(url: string): Target {
  const u = new URL(url);
  if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('CLICKHOUSE_URL must start with http:// or https://.');
  const segments = u.pathname.split('/').filter((s) => s.length > 0);
  if (segments.length > 1) throw new Error(`CLICKHOUSE_URL must name at most one database in its path; got "${u.pathname}".`);
  const database = segments.length ? decodeURIComponent(segments[0]) : 'default';
  const t: Target = { url: `${u.protocol}//${u.host}`, database };
  if (u.username) t.username = decodeURIComponent(u.username);
  if (u.password) t.password = decodeURIComponent(u.password);
  return t;
}

const DDL = (db: Sql): Sql[] => [
  sql`CREATE TABLE IF NOT EXISTS ${db}.events (
    project String, date Date, ts UInt64, path String, visitor UInt64, cls UInt8,
    agent Nullable(String), referrer Nullable(String), source UInt8, import_key Nullable(Int64)
  ) ENGINE = MergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, ts)`,
  sql`CREATE TABLE IF NOT EXISTS ${db}.daily (
    project String, date Date, path String, visitor UInt64, views_h UInt64, views_a UInt64
  ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, path, visitor)`,
  sql`CREATE TABLE IF NOT EXISTS ${db}.daily_site (
    project String, date Date, visitor UInt64, views_h UInt64, views_a UInt64
  ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, visitor)`,
  sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_mv TO ${db}.daily AS
    SELECT project, date, path, visitor, toUInt64(countIf(cls = 1)) AS views_h, toUInt64(countIf(cls = 2)) AS views_a
    FROM ${db}.events WHERE cls <= 2 GROUP BY project, date, path, visitor`,
  sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_site_mv TO ${db}.daily_site AS
    SELECT project, date, visitor, toUInt64(countIf(cls = 1)) AS views_h, toUInt64(countIf(cls = 2)) AS views_a
    FROM ${db}.events WHERE cls <= 2 GROUP BY project, date, visitor`,
];

/** Every table holding per-day rows (retention applies to each). */
const TABLES = ['events', 'daily', 'daily_site'] as const;

type Row = Record<string, unknown>;
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

const isoDay = (day: number): string => new Date(day * DAY_MS).toISOString().slice(0, 10);


/**
 * `date` condition for days [d1, d2), clamped to what a ClickHouse Date holds (stored events are
 * from 1970 on and never far in the future, so bounds outside 0..MAX_DATE_DAY are open or empty).
 */
function dayCond(d1: number | null, d2: number | null): Sql {
  const c: Sql[] = [];
  if (d1 !== null && d1 > MAX_DATE_DAY) return raw('0');
  if (d2 !== null && d2 <= 0) return raw('0');
  if (d1 !== null && d1 > 0) c.push(sql`date >= ${new SqlDate(d1)}`);
  if (d2 !== null && d2 <= MAX_DATE_DAY) c.push(sql`date < ${new SqlDate(d2)}`);
  return c.length ? join(c, ' AND ') : raw('1');
}

/** `ts` condition for [from, to) plus the matching `date` bounds (for the primary index). */
function tsCond(from: number | null, to: number | null): Sql {
  if (from !== null && to !== null && from >= to) return raw('0');
  const c: Sql[] = [];
  if (from !== null && from > 0) c.push(sql`ts >= ${from}`);
  if (to !== null) {
    if (to <= 0) return raw('0');
    c.push(sql`ts < ${to}`);
  }
  const d1 = from === null || from <= 0 ? null : Math.floor(from / DAY_MS);
  const d2 = to === null ? null : Math.floor((to - 1) / DAY_MS) + 1;
  c.push(dayCond(d1, d2));
  return join(c, ' AND ');
}

export class ClickHouseEngine implements AnalyticsEngine {
  readonly name = 'clickhouse';
  private readonly client: ClickHouseClient;
  private readonly db: Sql;
  readonly database: string;
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;

  private constructor(client: ClickHouseClient, database: string) {
    this.client = client;
    this.database = database;
    this.db = ident(database);
  }

  /** Connects, creates the database and the tables when missing. */
  static async open(opts: ClickHouseOptions): Promise<ClickHouseEngine> {
    const t = parseClickHouseUrl(opts.url);
    const client = createClient({
      url: t.url,
      username: t.username ?? 'default',
      password: t.password ?? '',
      // Long queries (months of a big site) keep the connection busy with progress headers, so
      // proxies and load balancers do not close it as idle (both settings exist on 18.16 too).
      request_timeout: opts.requestTimeoutMs ?? 600_000,
      max_open_connections: 16,
      compression: { request: false, response: false },
      clickhouse_settings: { send_progress_in_http_headers: 1, http_headers_progress_interval_ms: '10000' },
    });
    const engine = new ClickHouseEngine(client, t.database);
    try {
      await engine.command(sql`CREATE DATABASE IF NOT EXISTS ${engine.db}`);
      for (const ddl of DDL(engine.db)) await engine.command(ddl);
    } catch (err) {
      await client.close().catch(() => {});
      throw new Error(`ClickHouse at ${t.url} (database ${t.database}) is not usable: ${(err as Error).message}`, { cause: err });
    }
    return engine;
  }

  private async command(q: Sql): Promise<void> {
    await this.client.command({ query: q.text });
  }

  /** Runs a SELECT and returns its rows (64-bit numbers come back as strings). */
  private async rows(q: Sql, settings?: Record<string, string>): Promise<Row[]> {
    const rs = await this.client.query({ query: q.text, format: 'JSONEachRow', clickhouse_settings: settings });
    return (await rs.json()) as Row[];
  }

  /** Serialises writes from this process (import dedupe reads, then inserts). */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  pendingRows(): number {
    return 0;
  }

  /** Nothing to fold: the day tables are fed by materialized views on insert. */
  async compact(): Promise<void> {}

  write(events: StoredEvent[]): Promise<WriteOutcome> {
    return this.exclusive(() => this.writeNow(events));
  }

  async writeImport(batch: ImportColumns): Promise<{ duplicates: number }> {
    const { duplicates } = await this.write(eventsOfColumns(batch));
    return { duplicates: duplicates.get(0) ?? 0 };
  }

  private async writeNow(events: StoredEvent[]): Promise<WriteOutcome> {
    const duplicates = new Map<number, number>();
    if (events.length === 0) return { duplicates };
    const days = events.map((e) => Math.floor(e.ts / DAY_MS));
    for (const d of days) new SqlDate(d); // every event fits a ClickHouse Date (1970 to 2105; ingest refuses others), or nothing is written
    const keep = await this.dropImported(events, days, duplicates);
    if (keep.length === 0) return { duplicates };
    const values = keep.map((i) => {
      const e = events[i];
      // toWellFormed: JSON.stringify writes a lone surrogate half as \uD800, which ClickHouse refuses
      // (the whole batch would fail); U+FFFD is what any UTF-8 encoder, DuckDB's included, stores.
      return {
        project: e.projectId.toWellFormed(),
        date: isoDay(days[i]),
        ts: e.ts,
        path: e.path.toWellFormed(),
        visitor: e.visitor.toString(),
        cls: e.cls,
        agent: e.agent === null ? null : e.agent.toWellFormed(),
        referrer: e.referrer === null ? null : e.referrer.toWellFormed(),
        source: e.source,
        import_key: e.importKey === null ? null : e.importKey.toString(),
      };
    });
    // One INSERT: one block per million rows, written atomically with its materialized-view rows.
    await this.client.insert({
      table: `${this.db.text}.events`,
      values,
      format: 'JSONEachRow',
      clickhouse_settings: { max_insert_block_size: String(Math.max(1_048_576, values.length)) },
    });
    return { duplicates };
  }

  /**
   * Import dedupe: an event with an import key is dropped when the same (project, day, key) is stored
   * already or came earlier in this batch. Returns the indices of the events to store.
   */
  private async dropImported(events: StoredEvent[], days: number[], duplicates: Map<number, number>): Promise<number[]> {
    const keep: number[] = [];
    const keyed: number[] = [];
    for (let i = 0; i < events.length; i++) (events[i].importKey === null ? keep : keyed).push(i);
    if (keyed.length === 0) return keep;
    const id = (i: number) => `${events[i].projectId}\u0000${days[i]}\u0000${events[i].importKey}`;
    const seen = new Set<string>();
    // Stored keys, per project, in chunks (a query text stays well under a few MiB).
    const byProject = new Map<string, number[]>();
    for (const i of keyed) {
      let l = byProject.get(events[i].projectId);
      if (!l) byProject.set(events[i].projectId, (l = []));
      l.push(i);
    }
    const CHUNK = 20_000;
    for (const [project, idx] of byProject) {
      for (let s = 0; s < idx.length; s += CHUNK) {
        const part = idx.slice(s, s + CHUNK);
        const dayList = [...new Set(part.map((i) => days[i]))].map((d) => new SqlDate(d));
        const keyList = [...new Set(part.map((i) => events[i].importKey as bigint))];
        const q = sql`SELECT DISTINCT toUInt32(date) AS d, toString(import_key) AS k FROM ${this.db}.events
          WHERE project = ${project} AND date IN ${inList(dayList)} AND import_key IN ${inList(keyList)}`;
        for (const r of await this.rows(q, { max_query_size: String(q.text.length + 1024) })) {
          seen.add(`${project}\u0000${num(r.d)}\u0000${String(r.k)}`);
        }
      }
    }
    for (const i of keyed) {
      const k = id(i);
      if (seen.has(k)) {
        const g = events[i].group;
        duplicates.set(g, (duplicates.get(g) ?? 0) + 1);
      } else {
        seen.add(k);
        keep.push(i);
      }
    }
    keep.sort((a, b) => a - b);
    return keep;
  }

  deleteBefore(day: number): Promise<void> {
    return this.exclusive(async () => {
      if (day <= 0) return;
      const cutoff = new SqlDate(Math.min(day, MAX_DATE_DAY));
      const cutoffMonth = Number(cutoff.iso().slice(0, 7).replace('-', ''));
      for (const t of TABLES) {
        // Whole months before the cut-off: drop their partitions (instant, no rewrite).
        const parts = await this.rows(sql`SELECT DISTINCT partition FROM system.parts
          WHERE database = ${this.database} AND table = ${t} AND active`);
        for (const p of parts) {
          const month = Number(p.partition);
          if (Number.isInteger(month) && month < cutoffMonth) await this.command(sql`ALTER TABLE ${this.db}.${ident(t)} DROP PARTITION ${month}`);
        }
        // Days of the cut-off month before the cut-off: a mutation, only when such rows exist.
        const left = await this.rows(sql`SELECT count() AS n FROM ${this.db}.${ident(t)} WHERE date < ${cutoff}`);
        if (num(left[0]?.n) > 0) {
          await this.command(sql`ALTER TABLE ${this.db}.${ident(t)} DELETE WHERE date < ${cutoff}`);
          await this.waitForMutations(t);
        }
      }
    });
  }

  /** ALTER … DELETE runs in the background on every release; wait until this table has none left. */
  private async waitForMutations(table: string): Promise<void> {
    for (let i = 0; ; i++) {
      const r = await this.rows(sql`SELECT count() AS n FROM system.mutations WHERE database = ${this.database} AND table = ${table} AND is_done = 0`);
      if (num(r[0]?.n) === 0) return;
      if (i > 6000) throw new Error(`ClickHouse mutation on ${this.database}.${table} did not finish within 10 minutes.`);
      await new Promise((res) => setTimeout(res, 100));
    }
  }

  // ---------------------------------------------------------------- queries

  private edgeCond(edges: [number, number][]): Sql {
    return join(
      edges.map(([a, b]) => sql`(${tsCond(a, b)})`),
      ' OR ',
    );
  }

  /**
   * Rows (path?, visitor, views_h, views_a) of the range: whole days from a day table, partial days
   * from raw events (one row per view, counted as one view of its class).
   */
  private source(projectId: string, range: Range, perPath: boolean): Sql | null {
    const split = splitRange(range);
    const p = sql`project = ${projectId}`;
    const cols = perPath ? raw('path, visitor') : raw('visitor');
    const parts: Sql[] = [];
    if (split.days !== 'none') {
      const table = perPath ? raw('daily') : raw('daily_site');
      parts.push(sql`SELECT ${cols}, views_h, views_a FROM ${this.db}.${table} WHERE ${p} AND ${dayCond(split.days.d1, split.days.d2)}`);
    }
    if (split.edges.length) {
      parts.push(sql`SELECT ${cols}, toUInt64(cls = 1) AS views_h, toUInt64(cls = 2) AS views_a FROM ${this.db}.events
        WHERE ${p} AND cls <= 2 AND (${this.edgeCond(split.edges)})`);
    }
    if (parts.length === 0) return null;
    return parts.length === 1 ? parts[0] : sql`${join(parts, ' UNION ALL ')}`;
  }

  private async paged(projectId: string, range: Range, page: Page, kind: 'visitors' | 'views'): Promise<PagedCounts> {
    const perPath = this.source(projectId, range, true);
    const site = this.source(projectId, range, false);
    if (!perPath || !site) return { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };
    const agg =
      kind === 'visitors'
        ? raw('uniqExactIf(visitor, views_h > 0) AS h, uniqExactIf(visitor, views_a > 0) AS a, uniqExact(visitor) AS t')
        : raw('sum(views_h) AS h, sum(views_a) AS a, sum(views_h + views_a) AS t');
    // One row past the page tells whether more paths exist.
    const rowsQ = sql`SELECT path, ${agg} FROM (${perPath}) GROUP BY path HAVING t > 0
      ORDER BY t DESC, path ASC LIMIT ${page.offset}, ${page.limit + 1}`;
    const totQ = sql`SELECT ${agg} FROM (${site})`;
    const [rows, tot] = await Promise.all([this.rows(rowsQ), this.rows(totQ)]);
    const totals: Counts = { human: num(tot[0]?.h), ai: num(tot[0]?.a), total: num(tot[0]?.t) };
    return {
      totals,
      rows: rows.slice(0, page.limit).map((r) => ({ path: String(r.path), human: num(r.h), ai: num(r.a), total: num(r.t) })),
      hasMore: rows.length > page.limit,
    };
  }

  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, range, page, 'visitors');
  }

  views(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, range, page, 'views');
  }

  async timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]> {
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const rows = await this.rows(sql`SELECT intDiv(ts, ${size}) AS b, uniqExactIf(visitor, cls = 1) AS h, uniqExactIf(visitor, cls = 2) AS a,
        uniqExact(visitor) AS t, count() AS v
      FROM ${this.db}.events WHERE project = ${projectId} AND cls <= 2 AND ${tsCond(range.from, range.to)}
      GROUP BY b ORDER BY b`);
    return rows.map((r) => ({ start: num(r.b) * size, human: num(r.h), ai: num(r.a), total: num(r.t), views: num(r.v) }));
  }

  async agents(projectId: string, range: Range): Promise<AgentRow[]> {
    const rows = await this.rows(sql`SELECT ifNull(agent, 'Other bots') AS ag, cls, uniqExact(visitor) AS v, count() AS n
      FROM ${this.db}.events WHERE project = ${projectId} AND cls >= 2 AND ${tsCond(range.from, range.to)}
      GROUP BY ag, cls ORDER BY v DESC, n DESC, ag ASC, cls ASC`);
    return rows.map((r) => ({ agent: String(r.ag), category: CLS_NAME[num(r.cls)], visitors: num(r.v), views: num(r.n) }));
  }

  /** Runs SQL (benchmarks, tests and diagnostics only; never with user input). */
  async sql(query: string | Sql, settings?: Record<string, string>): Promise<Row[]> {
    return this.rows(typeof query === 'string' ? raw(query) : query, settings);
  }

  /** Runs a statement without result rows (benchmarks, tests and diagnostics only). */
  async exec(query: string | Sql): Promise<void> {
    await this.command(typeof query === 'string' ? raw(query) : query);
  }

  /** Drops the whole database (tests). */
  async dropDatabase(): Promise<void> {
    await this.command(sql`DROP DATABASE IF EXISTS ${this.db}`);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain.catch(() => {});
    await this.client.close();
  }
}

/** Opens the ClickHouse engine for CLICKHOUSE_URL. */
export function createClickHouseEngine(url: string): Promise<ClickHouseEngine> {
  return ClickHouseEngine.open({ url });
}
