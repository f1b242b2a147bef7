// What the DuckDB engine's writes and queries share: the connections, the project and path
// dictionaries (stored as integers), the rows not compacted yet and their count.
import { AGENT_VIEW_CLASSES, CLASS_CODE, KEY_KIND, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { REFERRER_HOST_PATTERN } from '../../engine.ts';
import type { DuckDBConnection } from '@duckdb/node-api';

export type Row = Record<string, unknown>;

export const num = (v: unknown): number => (v === null || v === undefined ? 0 : Number(v));

/** An integer for SQL text (never user input reaches SQL any other way). */
export const int = (n: number): string => {
  if (!Number.isSafeInteger(n)) throw new Error(`not an integer: ${n}`);
  return String(n);
};

export async function rows(c: DuckDBConnection, sql: string): Promise<Row[]> {
  return (await c.runAndReadAll(sql)).getRowObjectsJS() as Row[];
}

/** The read connections, one query each at a time. */
export class Pool {
  private readonly free: DuckDBConnection[];
  private readonly waiters: ((c: DuckDBConnection) => void)[] = [];
  constructor(conns: DuckDBConnection[]) {
    this.free = [...conns];
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

/** Projects and paths as integers. New entries are stored before the rows that use them and never removed. */
export class Dictionaries {
  readonly projectKeys = new Map<string, number>();
  private readonly pathIds = new Map<number, Map<string, number>>();
  private nextProjectKey = 1;
  private nextPathId = 1;
  /** Entries made by the write in progress, stored before its rows. */
  private newProjects: [number, string][] = [];
  private newPaths: [number, number, string][] = [];

  async load(c: DuckDBConnection): Promise<void> {
    for (const r of await rows(c, 'SELECT project_key, project_id FROM projects')) {
      this.projectKeys.set(String(r.project_id), num(r.project_key));
      this.nextProjectKey = Math.max(this.nextProjectKey, num(r.project_key) + 1);
    }
    for (const r of await rows(c, 'SELECT path_id, project_key, path FROM paths')) {
      const pk = num(r.project_key);
      let m = this.pathIds.get(pk);
      if (!m) this.pathIds.set(pk, (m = new Map()));
      m.set(String(r.path), num(r.path_id));
      this.nextPathId = Math.max(this.nextPathId, num(r.path_id) + 1);
    }
  }

  /** The project's key; a new one is stored with the next store(). */
  projectKey(projectId: string): number {
    let pk = this.projectKeys.get(projectId);
    if (pk === undefined) {
      pk = this.nextProjectKey++;
      this.projectKeys.set(projectId, pk);
      this.newProjects.push([pk, projectId]);
    }
    return pk;
  }

  pathId(pk: number, path: string): number {
    let m = this.pathIds.get(pk);
    const id = m?.get(path);
    if (id !== undefined) return id;
    const fresh = this.nextPathId++;
    if (!m) this.pathIds.set(pk, (m = new Map()));
    m.set(path, fresh);
    this.newPaths.push([fresh, pk, path]);
    return fresh;
  }

  /** Stores the new projects and paths (dictionary rows are never removed). */
  async store(writer: DuckDBConnection): Promise<void> {
    try {
      await this.append(writer);
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

  private async append(writer: DuckDBConnection): Promise<void> {
    if (this.newProjects.length > 0) {
      const ap = await writer.createAppender('projects');
      for (const [k, id] of this.newProjects) {
        ap.appendInteger(k);
        ap.appendVarchar(id);
        ap.endRow();
      }
      ap.flushSync();
      ap.closeSync();
    }
    if (this.newPaths.length > 0) {
      const ap = await writer.createAppender('paths');
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
}

/** The visitor rows written since the last compaction, as the day tables' columns (reports and compaction read them). */
export const NEW_ROWS = `SELECT project_key, day, path_id, visitor, cls AS mask, (cls = ${CLASS_CODE.human})::INTEGER AS views_h, (cls = ${CLASS_CODE.ai})::INTEGER AS views_a
  FROM events WHERE cls <= ${LAST_VISITOR_CODE} AND seq > (SELECT seq FROM compaction_state)`;

/** The events not compacted yet (a condition on `events`). */
export const UNCOMPACTED = 'seq > (SELECT seq FROM compaction_state)';

/** The events compacted already (a condition on `events`). */
export const COMPACTED = 'seq <= (SELECT seq FROM compaction_state)';

/**
 * The referring host of a stored view (NULL for none). Stored referrers are hosts; rows written
 * before that kept the whole URL, read for its host here (as storedReferrerHost does).
 */
export const STORED_HOST = `CASE WHEN referrer LIKE '%://%' THEN nullif(lower(regexp_extract(referrer, '${REFERRER_HOST_PATTERN.replaceAll("'", "''")}', 1)), '') ELSE referrer END`;

/**
 * The visitor rows of events matching `cond` as `daily_keys` rows (and, with their path, as
 * `daily_path_keys` rows): per referring host (humans and AI with a referrer) and per assistant agent
 * (AI views), with the view's class as mask.
 */
export const KEY_ROWS = (cond: string) => `SELECT project_key, day, path_id, kind, k, visitor, mask FROM (
    SELECT project_key, day, path_id, ${KEY_KIND.host}::UTINYINT AS kind, ${STORED_HOST} AS k, visitor, cls AS mask FROM events
      WHERE ${cond} AND cls <= ${LAST_VISITOR_CODE} AND referrer IS NOT NULL
    UNION ALL
    SELECT project_key, day, path_id, ${KEY_KIND.agent}::UTINYINT, agent, visitor, cls FROM events WHERE ${cond} AND cls = ${CLASS_CODE.ai} AND agent IS NOT NULL
  ) WHERE k IS NOT NULL`;


/**
 * Which referring hosts keep rows per path in `daily_path_keys` (agents always do). The reports read
 * a host's rows per path only when the lists class it as an AI assistant (AI companies per path, the
 * job impact's humans from AI answers), so the analytics service keeps just those (issue 34: the
 * other hosts' rows cost compaction work and were never read); `key` names the choice, so a store
 * folded for another one refolds its rows when it opens (path-hosts.ts). The default keeps every
 * host: exact for any lists.
 */
export interface PathHosts {
  /** The choice, as stored beside the rows ('*': every host). */
  readonly key: string;
  /** The hosts kept among `hostRows` (SQL rows with a host column `k`), each tested once; null: every host. */
  kept(hostRows: string): string | null;
}

export const ALL_PATH_HOSTS: PathHosts = { key: '*', kept: () => null };

/** Views of events matching `cond` per (project, day, path, agent, class), as `daily_agents` rows. */
export const AGENT_VIEW_ROWS = (cond: string) => `SELECT project_key, day, path_id, agent, cls, count(*)::INTEGER AS views FROM events
  WHERE ${cond} AND cls IN (${AGENT_VIEW_CLASSES}) AND agent IS NOT NULL GROUP BY ALL`;

/** Added to a not-found view's class code in `events_raw` (not-found.ts): class codes are below it. */
export const NOT_FOUND_CLS = 128;

/**
 * Rows not compacted yet: page views of visitors (not-found views need no compaction). In total and
 * per project key; over-estimates are harmless (queries then also read them).
 */
export class PendingRows {
  total = 0;
  readonly byProject = new Map<number, number>();

  async count(c: DuckDBConnection): Promise<void> {
    this.clear();
    for (const r of await rows(c, `SELECT project_key, count(*) AS n FROM events WHERE cls <= ${LAST_VISITOR_CODE} AND ${UNCOMPACTED} GROUP BY project_key`)) {
      this.byProject.set(num(r.project_key), num(r.n));
      this.total += num(r.n);
    }
  }

  add(pk: number, n: number): void {
    this.byProject.set(pk, (this.byProject.get(pk) ?? 0) + n);
    this.total += n;
  }

  clear(): void {
    this.total = 0;
    this.byProject.clear();
  }
}
