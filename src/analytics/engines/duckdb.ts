// The embedded analytics engine: one DuckDB file owned by this process.
//
// Layout (designed for exact distinct counts over any day range without a big hash table):
//   events      every stored view (raw): partial-day ranges, hourly series, the agents report, retention.
//   recent      per-flush deduplicated (project, day, path, visitor) rows not yet compacted.
//   daily       one row per (project, day, path, visitor) with `mask` (1 human, 2 AI) and, per key,
//               the previous day that key was seen (prev_h / prev_a / prev_t). A key is counted in a
//               day range [d1, d2) exactly once: on its first row in the range, i.e. the row whose
//               previous day is before d1. So the visitors query is a filtered COUNT … GROUP BY path.
//   daily_site  the same per (project, day, visitor), for site-wide totals.
//   paths, projects   dictionaries: paths and projects are stored as integers.
//   import_keys (project, day, key) of imported log lines, so importing a file twice changes nothing.
// Rows in `recent` are folded into daily/daily_site by compact(); until then queries add them with a
// small join, so results are exact at every moment.
import { existsSync } from 'node:fs';
import { BIGINT, DOUBLE, DuckDBDataChunk, DuckDBInstance, INTEGER, UTINYINT, VARCHAR, type DuckDBConnection } from '@duckdb/node-api';
import { DAY_MS, HOUR_MS, splitRange, type Range } from '../dates.ts';
import type { AgentRow, AnalyticsEngine, Counts, ImportColumns, Page, PagedCounts, StoredEvent, TimeseriesPoint, WriteOutcome } from '../engine.ts';
import { CLS_NAME, SOURCE } from '../engine.ts';

export class AnalyticsLockedError extends Error {
  constructor(file: string) {
    super(`The analytics file ${file} is locked by another process (a running Folio server?). Send the data through the server instead (--url/--key or FOLIO_URL/FOLIO_API_KEY).`);
    this.name = 'AnalyticsLockedError';
  }
}

const SCHEMA = [
  `CREATE TABLE IF NOT EXISTS projects (project_key INTEGER NOT NULL, project_id VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS paths (path_id INTEGER NOT NULL, project_key INTEGER NOT NULL, path VARCHAR NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS events (project_key INTEGER NOT NULL, ts BIGINT NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL,
     visitor BIGINT NOT NULL, cls UTINYINT NOT NULL, agent VARCHAR, referrer VARCHAR, source UTINYINT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS recent (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, visitor BIGINT NOT NULL,
     mask UTINYINT NOT NULL, views_h INTEGER NOT NULL, views_a INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS daily (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, visitor BIGINT NOT NULL,
     mask UTINYINT NOT NULL, views_h INTEGER NOT NULL, views_a INTEGER NOT NULL, prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`,
  `CREATE TABLE IF NOT EXISTS daily_site (project_key INTEGER NOT NULL, day INTEGER NOT NULL, visitor BIGINT NOT NULL, mask UTINYINT NOT NULL,
     prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`,
  `CREATE TABLE IF NOT EXISTS import_keys (project_key INTEGER NOT NULL, day INTEGER NOT NULL, k BIGINT NOT NULL)`,
];

// ts is staged as a DOUBLE (exact for ms timestamps) so no BigInt is made per row; it is stored as BIGINT.
const STAGE_TYPES = [INTEGER, INTEGER, DOUBLE, INTEGER, INTEGER, BIGINT, UTINYINT, VARCHAR, VARCHAR, UTINYINT, BIGINT];
const CHUNK_ROWS = 2048;

const int = (n: number): string => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
};

class Pool {
  private readonly free: DuckDBConnection[];
  private readonly waiters: ((c: DuckDBConnection) => void)[] = [];
  constructor(conns: DuckDBConnection[]) {
    this.free = conns;
  }
  async use<T>(fn: (c: DuckDBConnection) => Promise<T>): Promise<T> {
    const c = this.free.pop() ?? (await new Promise<DuckDBConnection>((r) => this.waiters.push(r)));
    try {
      return await fn(c);
    } finally {
      const w = this.waiters.shift();
      if (w) w(c);
      else this.free.push(c);
    }
  }
}

type Row = Record<string, unknown>;

/** The rows of one write as columns, ready for the stage table. */
interface StageRows {
  n: number;
  /** Submission of a group commit per row; null: all 0. */
  group: Int32Array | null;
  project: Int32Array;
  ts: Float64Array;
  pathId: Int32Array;
  visitor: BigInt64Array;
  cls: Uint8Array;
  /** Index into `agents`, -1 for none. */
  agent: Int16Array;
  agents: string[];
  referrer: (string | null)[] | null;
  source: Uint8Array;
  key: BigInt64Array | null;
  /** Which rows have a key; null: all (when `key` is set). */
  hasKey: Uint8Array | null;
  /** No two rows have the same key. */
  distinctKeys: boolean;
}
const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

export interface DuckDbOptions {
  /** Database file, or ':memory:'. */
  file: string;
  readConnections?: number;
  threads?: number;
  memoryLimit?: string;
}

export class DuckDbEngine implements AnalyticsEngine {
  readonly name = 'duckdb';
  private readonly instance: DuckDBInstance;
  private readonly writer: DuckDBConnection;
  private readonly readers: Pool;
  private readonly readerConns: DuckDBConnection[];
  private readonly projectKeys = new Map<string, number>();
  private readonly pathIds = new Map<number, Map<string, number>>();
  private nextProjectKey = 1;
  private nextPathId = 1;
  private pending = 0;
  /** Rows in `recent` per project key (over-estimates are harmless: queries then also read `recent`). */
  private readonly pendingByProject = new Map<number, number>();
  private chain: Promise<unknown> = Promise.resolve();
  private closed = false;
  /** Dictionary entries made by the write in progress, stored before its rows. */
  private newProjects: [number, string][] = [];
  private newPaths: [number, number, string][] = [];

  private constructor(instance: DuckDBInstance, writer: DuckDBConnection, readers: DuckDBConnection[]) {
    this.instance = instance;
    this.writer = writer;
    this.readerConns = readers;
    this.readers = new Pool([...readers]);
  }

  static async open(opts: DuckDbOptions): Promise<DuckDbEngine> {
    const settings: Record<string, string> = {};
    if (opts.threads) settings.threads = String(opts.threads);
    if (opts.memoryLimit) settings.memory_limit = opts.memoryLimit;
    let instance: DuckDBInstance;
    try {
      instance = await DuckDBInstance.create(opts.file, settings);
    } catch (err) {
      if (/lock/i.test((err as Error).message) && opts.file !== ':memory:' && existsSync(opts.file)) throw new AnalyticsLockedError(opts.file);
      throw err;
    }
    const writer = await instance.connect();
    for (const sql of SCHEMA) await writer.run(sql);
    await writer.run(`CREATE OR REPLACE TEMP TABLE stage (grp INTEGER, project_key INTEGER, ts DOUBLE, day INTEGER, path_id INTEGER, visitor BIGINT,
      cls UTINYINT, agent VARCHAR, referrer VARCHAR, source UTINYINT, ikey BIGINT)`);
    const readers: DuckDBConnection[] = [];
    for (let i = 0; i < (opts.readConnections ?? 4); i++) readers.push(await instance.connect());
    const engine = new DuckDbEngine(instance, writer, readers);
    await engine.load();
    return engine;
  }

  private async rows(c: DuckDBConnection, sql: string): Promise<Row[]> {
    return (await c.runAndReadAll(sql)).getRowObjectsJS() as Row[];
  }

  private async load(): Promise<void> {
    for (const r of await this.rows(this.writer, 'SELECT project_key, project_id FROM projects')) {
      this.projectKeys.set(String(r.project_id), num(r.project_key));
      this.nextProjectKey = Math.max(this.nextProjectKey, num(r.project_key) + 1);
    }
    for (const r of await this.rows(this.writer, 'SELECT path_id, project_key, path FROM paths')) {
      const pk = num(r.project_key);
      let m = this.pathIds.get(pk);
      if (!m) this.pathIds.set(pk, (m = new Map()));
      m.set(String(r.path), num(r.path_id));
      this.nextPathId = Math.max(this.nextPathId, num(r.path_id) + 1);
    }
    await this.countPending(this.writer);
  }

  private async countPending(c: DuckDBConnection): Promise<void> {
    this.pendingByProject.clear();
    this.pending = 0;
    for (const r of await this.rows(c, 'SELECT project_key, count(*) AS n FROM recent GROUP BY project_key')) {
      this.pendingByProject.set(num(r.project_key), num(r.n));
      this.pending += num(r.n);
    }
  }

  /** Serialises writes on the writer connection. */
  private exclusive<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.chain.then(fn, fn);
    this.chain = run.catch(() => {});
    return run;
  }

  pendingRows(): number {
    return this.pending;
  }

  write(events: StoredEvent[]): Promise<WriteOutcome> {
    return this.exclusive(async () => ({ duplicates: await this.writeRows(await this.rowsOfEvents(events)) }));
  }

  writeImport(batch: ImportColumns): Promise<{ duplicates: number }> {
    return this.exclusive(async () => ({ duplicates: (await this.writeRows(await this.rowsOfImport(batch))).get(0) ?? 0 }));
  }

  /** Rows of stored events (the events API, the browser script, the bulk endpoint). */
  private async rowsOfEvents(events: StoredEvent[]): Promise<StageRows> {
    const n = events.length;
    const rows: StageRows = {
      n,
      group: new Int32Array(n),
      project: new Int32Array(n),
      ts: new Float64Array(n),
      pathId: new Int32Array(n),
      visitor: new BigInt64Array(n),
      cls: new Uint8Array(n),
      agent: new Int16Array(n),
      agents: [],
      referrer: new Array(n),
      source: new Uint8Array(n),
      key: new BigInt64Array(n),
      hasKey: new Uint8Array(n),
      distinctKeys: false,
    };
    const agentIndex = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      const e = events[i];
      const pk = this.projectKey(e.projectId);
      rows.group![i] = e.group;
      rows.project[i] = pk;
      rows.ts[i] = e.ts;
      rows.pathId[i] = this.pathIds.get(pk)?.get(e.path) ?? this.newPathId(pk, e.path);
      rows.visitor[i] = e.visitor;
      rows.cls[i] = e.cls;
      let a = -1;
      if (e.agent !== null) {
        a = agentIndex.get(e.agent) ?? -1;
        if (a < 0) agentIndex.set(e.agent, (a = rows.agents.push(e.agent) - 1));
      }
      rows.agent[i] = a;
      rows.referrer![i] = e.referrer;
      rows.source[i] = e.source;
      if (e.importKey !== null) {
        rows.key![i] = e.importKey;
        rows.hasKey![i] = 1;
      }
    }
    await this.storeNewNames();
    return rows;
  }

  /** Rows of an import batch: its columns are used as they are. */
  private async rowsOfImport(c: ImportColumns): Promise<StageRows> {
    const pk = this.projectKey(c.projectId);
    const known = this.pathIds.get(pk);
    const ids = new Int32Array(c.paths.length);
    for (let p = 0; p < c.paths.length; p++) ids[p] = known?.get(c.paths[p]) ?? this.newPathId(pk, c.paths[p]);
    await this.storeNewNames();
    const pathId = new Int32Array(c.n);
    for (let i = 0; i < c.n; i++) pathId[i] = ids[c.path[i]];
    return {
      n: c.n,
      group: null,
      project: new Int32Array(c.n).fill(pk),
      ts: c.ts,
      pathId,
      visitor: c.visitor,
      cls: c.cls,
      agent: c.agent,
      agents: c.agents,
      referrer: c.referrer,
      source: new Uint8Array(c.n).fill(SOURCE.import),
      key: c.key,
      hasKey: null,
      distinctKeys: c.distinctKeys,
    };
  }

  /** The project's key; a new one is stored with the next storeNewNames(). */
  private projectKey(projectId: string): number {
    let pk = this.projectKeys.get(projectId);
    if (pk === undefined) {
      pk = this.nextProjectKey++;
      this.projectKeys.set(projectId, pk);
      this.newProjects.push([pk, projectId]);
    }
    return pk;
  }

  private newPathId(pk: number, path: string): number {
    const id = this.nextPathId++;
    let m = this.pathIds.get(pk);
    if (!m) this.pathIds.set(pk, (m = new Map()));
    m.set(path, id);
    this.newPaths.push([id, pk, path]);
    return id;
  }

  /** Stores new projects and paths before the rows that use them (dictionary rows are never removed). */
  private async storeNewNames(): Promise<void> {
    try {
      await this.appendNewNames();
    } catch (err) {
      // Not stored: forget them, so no later row refers to a name that is not in the file.
      for (const [, id] of this.newProjects) this.projectKeys.delete(id);
      for (const [, pk, p] of this.newPaths) this.pathIds.get(pk)?.delete(p);
      throw err;
    } finally {
      this.newProjects = [];
      this.newPaths = [];
    }
  }

  private async appendNewNames(): Promise<void> {
    if (this.newProjects.length > 0) {
      const ap = await this.writer.createAppender('projects');
      for (const [k, id] of this.newProjects) {
        ap.appendInteger(k);
        ap.appendVarchar(id);
        ap.endRow();
      }
      ap.flushSync();
      ap.closeSync();
    }
    if (this.newPaths.length > 0) {
      const ap = await this.writer.createAppender('paths');
      for (const [id, pk, p] of this.newPaths) {
        ap.appendInteger(id);
        ap.appendInteger(pk);
        ap.appendVarchar(p);
        ap.endRow();
      }
      ap.flushSync();
      ap.closeSync();
    }
  }

  /** Stages the rows (connection-local temp table), then moves them in one transaction. Returns duplicates by group. */
  private async writeRows(rows: StageRows): Promise<Map<number, number>> {
    const duplicates = new Map<number, number>();
    const n = rows.n;
    if (n === 0) return duplicates;
    let minDay = Infinity;
    let maxDay = -Infinity;
    const perGroup = new Map<number, number>();
    try {
      // Column vectors of 2,048 rows (DuckDB's vector size): numbers are copied in bulk.
      const ap = await this.writer.createAppender('stage', 'main', 'temp');
      for (let off = 0; off < n; off += CHUNK_ROWS) {
        const m = Math.min(CHUNK_ROWS, n - off);
        const chunk = DuckDBDataChunk.create(STAGE_TYPES, m);
        const v = STAGE_TYPES.map((_, c) => chunk.getColumnVector(c) as unknown as { setItem(i: number, v: unknown): void; flush(): void });
        for (let j = 0; j < m; j++) {
          const i = off + j;
          const ts = rows.ts[i];
          const day = Math.floor(ts / DAY_MS);
          const keyed = rows.hasKey === null || rows.hasKey[i] === 1;
          const group = rows.group === null ? 0 : rows.group[i];
          v[0].setItem(j, group);
          v[1].setItem(j, rows.project[i]);
          v[2].setItem(j, ts);
          v[3].setItem(j, day);
          v[4].setItem(j, rows.pathId[i]);
          v[5].setItem(j, rows.visitor[i]);
          v[6].setItem(j, rows.cls[i]);
          v[7].setItem(j, rows.agent[i] < 0 ? null : rows.agents[rows.agent[i]]);
          v[8].setItem(j, rows.referrer === null ? null : rows.referrer[i]);
          v[9].setItem(j, rows.source[i]);
          if (rows.key !== null && keyed) {
            v[10].setItem(j, rows.key[i]);
            perGroup.set(group, (perGroup.get(group) ?? 0) + 1);
            if (day < minDay) minDay = day;
            if (day > maxDay) maxDay = day;
          } else {
            v[10].setItem(j, null);
          }
        }
        for (const x of v) x.flush();
        ap.appendDataChunk(chunk);
      }
      ap.flushSync();
      ap.closeSync();
      await this.writer.run('BEGIN TRANSACTION');
      try {
        if (perGroup.size > 0) {
          // Drop repeats inside this batch (none in a batch known to hold distinct keys), then lines already imported.
          if (!rows.distinctKeys) {
            await this.writer.run(`DELETE FROM stage WHERE ikey IS NOT NULL AND rowid NOT IN
              (SELECT min(rowid) FROM stage WHERE ikey IS NOT NULL GROUP BY project_key, day, ikey)`);
          }
          // Constant day bounds let DuckDB skip the key table's row groups of other days (logs arrive in time order).
          await this.writer.run(`DELETE FROM stage s USING import_keys k
            WHERE s.ikey IS NOT NULL AND k.k = s.ikey AND k.project_key = s.project_key AND k.day = s.day
              AND k.day BETWEEN ${int(minDay)} AND ${int(maxDay)}`);
          for (const r of await this.rows(this.writer, 'SELECT grp, count(*) AS n FROM stage WHERE ikey IS NOT NULL GROUP BY grp')) {
            perGroup.set(num(r.grp), (perGroup.get(num(r.grp)) ?? 0) - num(r.n));
          }
          for (const [g, d] of perGroup) if (d > 0) duplicates.set(g, d);
          await this.writer.run('INSERT INTO import_keys SELECT project_key, day, ikey FROM stage WHERE ikey IS NOT NULL');
        }
        await this.writer.run('INSERT INTO events SELECT project_key, ts::BIGINT, day, path_id, visitor, cls, agent, referrer, source FROM stage');
        await this.writer.run(
          `INSERT INTO recent SELECT project_key, day, path_id, visitor, bit_or(cls)::UTINYINT, count(*) FILTER (WHERE cls = 1), count(*) FILTER (WHERE cls = 2)
           FROM stage WHERE cls <= 2 GROUP BY project_key, day, path_id, visitor`,
        );
        // Pending rows per project (an upper bound: views before per-flush deduplication), known before
        // the commit so a concurrent query never skips rows that are about to be visible.
        let added = 0;
        for (let i = 0; i < n; i++) {
          if (rows.cls[i] > 2) continue;
          this.pendingByProject.set(rows.project[i], (this.pendingByProject.get(rows.project[i]) ?? 0) + 1);
          added++;
        }
        await this.writer.run('COMMIT');
        this.pending += added;
      } catch (err) {
        await this.writer.run('ROLLBACK').catch(() => {});
        throw err;
      }
    } finally {
      await this.writer.run('DELETE FROM stage');
    }
    return duplicates;
  }

  compact(): Promise<void> {
    return this.exclusive(async () => {
      if (this.pending === 0) return;
      const w = this.writer;
      await w.run('BEGIN TRANSACTION');
      try {
        await this.fold(w, 'daily', ['path_id', 'visitor'], true);
        await this.fold(w, 'daily_site', ['visitor'], false);
        await w.run('DELETE FROM recent');
        await w.run('COMMIT');
        this.pending = 0;
        this.pendingByProject.clear();
      } catch (err) {
        await w.run('ROLLBACK').catch(() => {});
        throw err;
      } finally {
        for (const t of ['c_new', 'c_last', 'c_late']) await w.run(`DROP TABLE IF EXISTS temp.${t}`).catch(() => {});
      }
    });
  }

  /**
   * Folds `recent` into `table` (daily: per path and visitor; daily_site: per visitor). Rows of one key
   * form a sequence ordered by day (then arrival); each row stores, per bit, the day of the previous
   * row of its key having that bit (prev_h, prev_a, prev_t), so "first row of the key inside [d1, d2)"
   * is "prev < d1". Keys whose new rows are not older than their stored rows (the usual case: traffic
   * arrives in time order) are only appended. Keys with an older row arriving late are rebuilt.
   */
  private async fold(w: DuckDBConnection, table: 'daily' | 'daily_site', key: string[], views: boolean): Promise<void> {
    const k = ['project_key', ...key];
    const kc = k.join(', ');
    const on = (a: string, b: string) => k.map((c) => `${a}.${c} = ${b}.${c}`).join(' AND ');
    const vcols = views ? ', views_h, views_a' : '';
    const vsum = views ? ', sum(views_h)::INTEGER AS views_h, sum(views_a)::INTEGER AS views_a' : '';
    const target = `${table} (${views ? 'project_key, day, path_id, visitor, mask, views_h, views_a' : 'project_key, day, visitor, mask'}, prev_h, prev_a, prev_t)`;
    const window = `WINDOW w AS (PARTITION BY ${kc} ORDER BY day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`;
    await w.run(`CREATE OR REPLACE TEMP TABLE c_new AS SELECT ${kc}, day, bit_or(mask)::UTINYINT AS mask${vsum} FROM recent GROUP BY ${kc}, day`);
    // Last stored day per key and bit, for the keys in this batch (a scan of the table with a small hash probe).
    await w.run(`CREATE OR REPLACE TEMP TABLE c_last AS SELECT ${k.map((c) => `d.${c}`).join(', ')}, max(d.day) AS last_t,
        max(d.day) FILTER (WHERE d.mask & 1 = 1) AS last_h, max(d.day) FILTER (WHERE d.mask & 2 = 2) AS last_a
      FROM ${table} d SEMI JOIN (SELECT DISTINCT ${kc} FROM c_new) n ON ${on('d', 'n')} GROUP BY ${k.map((c) => `d.${c}`).join(', ')}`);
    await w.run(`CREATE OR REPLACE TEMP TABLE c_late AS SELECT DISTINCT ${k.map((c) => `n.${c}`).join(', ')} FROM c_new n JOIN c_last l ON ${on('n', 'l')} WHERE n.day < l.last_t`);
    // In-order keys: append, linking the first new row to the last stored rows.
    await w.run(`INSERT INTO ${target} SELECT n.project_key, n.day, ${key.map((c) => `n.${c}`).join(', ')}, n.mask${views ? ', n.views_h, n.views_a' : ''},
        coalesce(max(CASE WHEN n.mask & 1 = 1 THEN n.day END) OVER w, l.last_h),
        coalesce(max(CASE WHEN n.mask & 2 = 2 THEN n.day END) OVER w, l.last_a),
        coalesce(max(n.day) OVER w, l.last_t)
      FROM c_new n LEFT JOIN c_last l ON ${on('n', 'l')} ANTI JOIN c_late x ON ${on('n', 'x')}
      WINDOW w AS (PARTITION BY ${k.map((c) => `n.${c}`).join(', ')} ORDER BY n.day ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING)`);
    // Late keys: rebuild their whole sequence.
    const late = Number((await this.rows(w, 'SELECT count(*) AS n FROM c_late'))[0].n);
    if (late === 0) return;
    await w.run(`CREATE OR REPLACE TEMP TABLE c_old AS SELECT d.${k.join(', d.')}, d.day, d.mask${views ? ', d.views_h, d.views_a' : ''}
      FROM ${table} d SEMI JOIN c_late x ON ${on('d', 'x')}`);
    await w.run(`DELETE FROM ${table} d USING c_late x WHERE ${on('d', 'x')}`);
    await w.run(`INSERT INTO ${target} SELECT project_key, day, ${key.join(', ')}, mask${vcols},
        max(CASE WHEN mask & 1 = 1 THEN day END) OVER w, max(CASE WHEN mask & 2 = 2 THEN day END) OVER w, max(day) OVER w
      FROM (SELECT ${kc}, day, bit_or(mask)::UTINYINT AS mask${vsum}
            FROM (SELECT * FROM c_old UNION ALL SELECT n.* FROM c_new n SEMI JOIN c_late x ON ${on('n', 'x')}) GROUP BY ${kc}, day)
      ${window}`);
    await w.run('DROP TABLE IF EXISTS temp.c_old');
  }

  deleteBefore(day: number): Promise<void> {
    return this.exclusive(async () => {
      const w = this.writer;
      const d = int(day);
      await w.run('BEGIN TRANSACTION');
      try {
        for (const t of ['events', 'recent', 'daily', 'daily_site', 'import_keys']) await w.run(`DELETE FROM ${t} WHERE day < ${d}`);
        // Links to deleted days become "first seen" so ranges starting before the cut-off stay exact.
        for (const t of ['daily', 'daily_site']) {
          for (const c of ['prev_h', 'prev_a', 'prev_t']) await w.run(`UPDATE ${t} SET ${c} = NULL WHERE ${c} < ${d}`);
        }
        await w.run('COMMIT');
        await this.countPending(w);
      } catch (err) {
        await w.run('ROLLBACK').catch(() => {});
        throw err;
      }
    });
  }

  // ---------------------------------------------------------------- queries

  private dayCond(days: { d1: number | null; d2: number | null }): string {
    const c: string[] = [];
    if (days.d1 !== null) c.push(`day >= ${int(days.d1)}`);
    if (days.d2 !== null) c.push(`day < ${int(days.d2)}`);
    return c.length ? c.join(' AND ') : 'true';
  }

  private edgeCond(edges: [number, number][]): string {
    return edges.length ? '(' + edges.map(([a, b]) => `(ts >= ${int(a)} AND ts < ${int(b)})`).join(' OR ') + ')' : 'false';
  }

  /** CTEs `per(path_id, h, a, t)` and `tot(h, a, t)` of exact distinct visitors. */
  private visitorCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    if (split.edges.length === 0 && split.days !== 'none') {
      const dc = this.dayCond(split.days);
      const d1 = split.days.d1 === null ? 'NULL' : int(split.days.d1);
      const first = (col: string) => `(${col} IS NULL OR ${col} < ${d1})`;
      const base = `
        base AS (SELECT path_id, count(*) FILTER (WHERE mask & 1 = 1 AND ${first('prev_h')}) AS h,
                        count(*) FILTER (WHERE mask & 2 = 2 AND ${first('prev_a')}) AS a, count(*) FILTER (WHERE ${first('prev_t')}) AS t
                 FROM daily WHERE ${p} AND ${dc} GROUP BY path_id),
        sbase AS (SELECT count(*) FILTER (WHERE mask & 1 = 1 AND ${first('prev_h')}) AS h,
                         count(*) FILTER (WHERE mask & 2 = 2 AND ${first('prev_a')}) AS a, count(*) FILTER (WHERE ${first('prev_t')}) AS t
                  FROM daily_site WHERE ${p} AND ${dc})`;
      if ((this.pendingByProject.get(pk) ?? 0) === 0) {
        return `${base},
        per AS MATERIALIZED (SELECT path_id, h, a, t FROM base WHERE t > 0),
        tot AS (SELECT h, a, t FROM sbase)`;
      }
      // Rows not compacted yet: a key of `recent` counts when the compacted rows in range lack it.
      return `${base},
        rk AS (SELECT path_id, visitor, bit_or(mask) AS m FROM recent WHERE ${p} AND ${dc} GROUP BY ALL),
        hit AS (SELECT d.path_id, d.visitor, bit_or(d.mask) AS m FROM daily d SEMI JOIN rk ON d.path_id = rk.path_id AND d.visitor = rk.visitor
                WHERE d.${p} AND ${dc.replaceAll('day', 'd.day')} GROUP BY ALL),
        extra AS (SELECT rk.path_id, count(*) FILTER (WHERE rk.m & 1 = 1 AND coalesce(hit.m, 0) & 1 = 0) AS h,
                         count(*) FILTER (WHERE rk.m & 2 = 2 AND coalesce(hit.m, 0) & 2 = 0) AS a, count(*) FILTER (WHERE hit.m IS NULL) AS t
                  FROM rk LEFT JOIN hit ON rk.path_id = hit.path_id AND rk.visitor = hit.visitor GROUP BY rk.path_id),
        per AS MATERIALIZED (SELECT path_id, sum(h)::BIGINT AS h, sum(a)::BIGINT AS a, sum(t)::BIGINT AS t FROM (SELECT * FROM base UNION ALL SELECT * FROM extra)
                GROUP BY path_id HAVING sum(t) > 0),
        srk AS (SELECT visitor, bit_or(mask) AS m FROM recent WHERE ${p} AND ${dc} GROUP BY visitor),
        shit AS (SELECT d.visitor, bit_or(d.mask) AS m FROM daily_site d SEMI JOIN srk ON d.visitor = srk.visitor
                 WHERE d.${p} AND ${dc.replaceAll('day', 'd.day')} GROUP BY ALL),
        sextra AS (SELECT count(*) FILTER (WHERE srk.m & 1 = 1 AND coalesce(shit.m, 0) & 1 = 0) AS h,
                          count(*) FILTER (WHERE srk.m & 2 = 2 AND coalesce(shit.m, 0) & 2 = 0) AS a, count(*) FILTER (WHERE shit.m IS NULL) AS t
                   FROM srk LEFT JOIN shit ON srk.visitor = shit.visitor),
        tot AS (SELECT sbase.h + sextra.h AS h, sbase.a + sextra.a AS a, sbase.t + sextra.t AS t FROM sbase, sextra)`;
    }
    // General path (a bound inside a day): whole days from the day tables plus raw events at the edges.
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(`SELECT path_id, visitor, mask FROM daily WHERE ${p} AND ${dc}`, `SELECT path_id, visitor, mask FROM recent WHERE ${p} AND ${dc}`);
    }
    parts.push(`SELECT path_id, visitor, cls AS mask FROM events WHERE ${p} AND cls <= 2 AND ${this.edgeCond(split.edges)}`);
    return `
      src AS (${parts.join(' UNION ALL ')}),
      pv AS MATERIALIZED (SELECT path_id, visitor, bit_or(mask) AS m FROM src GROUP BY ALL),
      per AS MATERIALIZED (SELECT path_id, count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t FROM pv GROUP BY path_id),
      tot AS (SELECT count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t
              FROM (SELECT visitor, bit_or(m) AS m FROM pv GROUP BY visitor))`;
  }

  private viewCtes(pk: number, range: Range): string {
    const split = splitRange(range);
    const p = `project_key = ${int(pk)}`;
    const parts: string[] = [];
    if (split.days !== 'none') {
      const dc = this.dayCond(split.days);
      parts.push(
        `SELECT path_id, views_h AS h, views_a AS a FROM daily WHERE ${p} AND ${dc}`,
        `SELECT path_id, views_h AS h, views_a AS a FROM recent WHERE ${p} AND ${dc}`,
      );
    }
    if (split.edges.length) {
      parts.push(`SELECT path_id, (cls = 1)::INTEGER AS h, (cls = 2)::INTEGER AS a FROM events WHERE ${p} AND cls <= 2 AND ${this.edgeCond(split.edges)}`);
    }
    return `
      per AS MATERIALIZED (SELECT path_id, sum(h)::BIGINT AS h, sum(a)::BIGINT AS a, sum(h + a)::BIGINT AS t FROM (${parts.join(' UNION ALL ')}) GROUP BY path_id HAVING sum(h + a) > 0),
      tot AS (SELECT coalesce(sum(h), 0) AS h, coalesce(sum(a), 0) AS a, coalesce(sum(t), 0) AS t FROM per)`;
  }

  private async paged(projectId: string, ctes: (pk: number) => string, page: Page): Promise<PagedCounts> {
    const pk = this.projectKeys.get(projectId);
    if (pk === undefined) return { totals: { human: 0, ai: 0, total: 0 }, rows: [], hasMore: false };
    const sql = `WITH ${ctes(pk)},
      ranked AS (SELECT p.path, per.h, per.a, per.t FROM per JOIN paths p ON p.path_id = per.path_id
                 ORDER BY per.t DESC, p.path ASC LIMIT ${int(page.limit)} OFFSET ${int(page.offset)})
      SELECT tot.h AS th, tot.a AS ta, tot.t AS tt, (SELECT count(*) FROM per) AS n, r.path, r.h, r.a, r.t
      FROM tot LEFT JOIN (SELECT *, row_number() OVER (ORDER BY t DESC, path ASC) AS rn FROM ranked) r ON true ORDER BY r.rn`;
    const rows = await this.readers.use((c) => this.rows(c, sql));
    const first = rows[0];
    const totals: Counts = { human: num(first?.th), ai: num(first?.ta), total: num(first?.tt) };
    const n = num(first?.n);
    return {
      totals,
      rows: rows.filter((r) => r.path !== null && r.path !== undefined).map((r) => ({ path: String(r.path), human: num(r.h), ai: num(r.a), total: num(r.t) })),
      hasMore: n > page.offset + page.limit,
    };
  }

  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, (pk) => this.visitorCtes(pk, range), page);
  }

  views(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.paged(projectId, (pk) => this.viewCtes(pk, range), page);
  }

  async timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]> {
    const pk = this.projectKeys.get(projectId);
    if (pk === undefined) return [];
    const size = interval === 'day' ? DAY_MS : HOUR_MS;
    const conds = [`project_key = ${int(pk)}`, 'cls <= 2'];
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT b, count(*) FILTER (WHERE m & 1 = 1) AS h, count(*) FILTER (WHERE m & 2 = 2) AS a, count(*) AS t, sum(v)::BIGINT AS v
      FROM (SELECT ts // ${size} AS b, visitor, bit_or(cls) AS m, count(*) AS v FROM events WHERE ${conds.join(' AND ')} GROUP BY ALL)
      GROUP BY b ORDER BY b`;
    const rows = await this.readers.use((c) => this.rows(c, sql));
    return rows.map((r) => ({ start: num(r.b) * size, human: num(r.h), ai: num(r.a), total: num(r.t), views: num(r.v) }));
  }

  async agents(projectId: string, range: Range): Promise<AgentRow[]> {
    const pk = this.projectKeys.get(projectId);
    if (pk === undefined) return [];
    const conds = [`project_key = ${int(pk)}`, 'cls >= 2'];
    if (range.from !== null) conds.push(`ts >= ${int(range.from)}`);
    if (range.to !== null) conds.push(`ts < ${int(range.to)}`);
    const sql = `SELECT coalesce(agent, 'Other bots') AS agent, cls, count(DISTINCT visitor) AS v, count(*) AS n FROM events
      WHERE ${conds.join(' AND ')} GROUP BY ALL ORDER BY v DESC, n DESC, agent`;
    const rows = await this.readers.use((c) => this.rows(c, sql));
    return rows.map((r) => ({ agent: String(r.agent), category: CLS_NAME[num(r.cls)], visitors: num(r.v), views: num(r.n) }));
  }

  /** Runs SQL on a reader connection (benchmarks and diagnostics only; never with user input). */
  async sql(query: string): Promise<Row[]> {
    return this.readers.use((c) => this.rows(c, query));
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.chain.catch(() => {});
    try {
      await this.writer.run('CHECKPOINT');
    } catch {}
    for (const c of this.readerConns) c.closeSync();
    this.writer.closeSync();
    this.instance.closeSync();
  }
}
