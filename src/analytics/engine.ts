// The analytics engine interface, implemented by DuckDB (embedded, the default: engines/duckdb/) and
// ClickHouse (CLICKHOUSE_URL, for scale-out: engines/clickhouse/). Answers are identical on both.
import { domainToASCII } from 'node:url';
import type { Range } from './dates.ts';

import type { ClassCode } from './traffic-class.ts';
import type { OwnHosts } from './own-hosts.ts';
import { SOURCE_CLASSES, type SourceClass } from './referrer-sources.ts';

export const SOURCE = { api: 1, script: 2, import: 3 } as const;

/** One page view, classified and identified, ready to store. */
export interface StoredEvent {
  projectId: string;
  /** Milliseconds since the epoch (UTC). */
  ts: number;
  path: string;
  visitor: bigint;
  cls: ClassCode;
  agent: string | null;
  referrer: string | null;
  source: number;
  /** Import dedupe key (log lines): a second event with the same key on the same day is dropped. */
  importKey: bigint | null;
  /**
   * The page answered 404 or 410: stored apart (the not-found report), never a page view or a visitor
   * of the path in the other reports. Absent: a page view.
   */
  notFound?: boolean;
  /**
   * A not-found view's server-derived identity: the keyed hash of the client's address and user agent
   * (VisitorIds.fromIpAndAgent), whatever `visitor` the client named; absent or null when no address
   * is known. What automatic runs count (a client chooses its `visitorId`, not its address).
   */
  derivedVisitor?: bigint | null;
  /** Which submission of a group commit the event came from (for per-request duplicate counts). */
  group: number;
}

/**
 * Imported page views of one project as columns: the direct log import builds them in a worker
 * thread and moves the buffers to the engine (no object per view, no copy).
 */
export interface ImportColumns {
  projectId: string;
  /** Rows in use (the arrays may be longer). */
  n: number;
  /** Milliseconds since the epoch (UTC). */
  ts: Float64Array;
  /** Index into `paths`. */
  path: Int32Array;
  paths: string[];
  visitor: BigInt64Array;
  cls: Uint8Array;
  /** Index into `agents`; -1 for none. */
  agent: Int16Array;
  agents: string[];
  /** Per row; null when no row of the batch has one. */
  referrer: (string | null)[] | null;
  /** The import dedupe key of every row. */
  key: BigInt64Array;
  /** Not-found views of the batch (log lines that answered 404 or 410), as events; absent when none. */
  notFound?: StoredEvent[];
  /**
   * No two rows share a key: the rows are in time order, so identical lines were numbered apart
   * (LineConverter) and lines of different seconds differ. The engine then skips its in-batch check.
   */
  distinctKeys: boolean;
}

/** The rows of an import batch as stored events (engines without a columnar write path). */
export function eventsOfColumns(c: ImportColumns): StoredEvent[] {
  const out: StoredEvent[] = new Array(c.n);
  for (let i = 0; i < c.n; i++) {
    out[i] = {
      projectId: c.projectId,
      ts: c.ts[i],
      path: c.paths[c.path[i]],
      visitor: c.visitor[i],
      cls: c.cls[i] as ClassCode,
      agent: c.agent[i] < 0 ? null : c.agents[c.agent[i]],
      referrer: c.referrer?.[i] ?? null,
      source: SOURCE.import,
      importKey: c.key[i],
      group: 0,
    };
  }
  return out;
}

export interface WriteOutcome {
  /** Events dropped as already imported, by group. */
  duplicates: Map<number, number>;
}

export interface Page {
  limit: number;
  offset: number;
}

export interface Counts {
  human: number;
  ai: number;
  total: number;
}

export interface PathCounts extends Counts {
  path: string;
}

export interface PagedCounts {
  totals: Counts;
  rows: PathCounts[];
  hasMore: boolean;
}

export interface TimeseriesPoint {
  start: number;
  human: number;
  ai: number;
  total: number;
  views: number;
  humanViews: number;
  aiViews: number;
}

/** A path that answered "not found", with its exact visitors (humans and AI only) and where they came from. */
export interface NotFoundRow extends Counts {
  path: string;
  /** Distinct server-derived identities (address and user agent); views without a known address count in none. */
  derivedVisitors: number;
  /** Views by humans and AI. */
  views: number;
  firstSeen: number;
  lastSeen: number;
  /** Referring hosts by distinct visitors, at most NOT_FOUND_REFERRERS; null host: none sent. */
  referrers: { host: string | null; visitors: number }[];
}

export interface NotFoundReport {
  totals: Counts & { views: number; derivedVisitors: number };
  rows: NotFoundRow[];
  hasMore: boolean;
}

/** Referrers listed per not-found path, at most. */
export const NOT_FOUND_REFERRERS = 5;

/** One label of a host name in ASCII: letters, digits, `_` and inner `-`, 1–63 characters. */
const HOST_LABEL = /^[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * A referrer URL's host as it is stored: a valid host name in its ASCII form (IDNA: `bücher.example`
 * → `xn--bcher-kva.example`), lower case, without a trailing dot. Null when there is none, when the
 * referrer is not a URL, or when its host is not a valid host name (spaces, controls, text-direction
 * marks, empty or overlong labels): such a view counts with no referrer rather than as a host that
 * could mislead whoever reads the report.
 */
export function referrerHost(referrer: string | null): string | null {
  if (referrer === null) return null;
  const m = /^[a-z][a-z0-9+.-]*:\/\/(?:[^@/?#]*@)?([^:/?#]+)/i.exec(referrer);
  if (!m || m[1].length > 1024) return null;
  const ascii = domainToASCII(m[1]).replace(/\.$/, '');
  if (ascii.length === 0 || ascii.length > 253) return null;
  return ascii.split('.').every((label) => HOST_LABEL.test(label)) ? ascii : null;
}

/** The host of a stored referrer: events keep the host already (the pipeline cuts it); a whole URL is read for its host. */
export function storedReferrerHost(referrer: string | null): string | null {
  return referrer !== null && referrer.includes('://') ? referrerHost(referrer) : referrer;
}

/** The SQL pattern both engines read a stored whole-URL referrer's host with (as referrerHost does). */
export const REFERRER_HOST_PATTERN = '^[a-zA-Z][a-zA-Z0-9+.-]*://(?:[^@/?#]*@)?([^:/?#]+)';

/** Referring hosts by class and by host, with exact visitors, and the share of humans sent by AI answers per day. */
export interface ReferrersReport {
  /** Distinct visitors per class of source (`other`: hosts on no list; readers with no referrer are left out). */
  classes: (Counts & { source: SourceClass })[];
  rows: (Counts & { host: string; source: SourceClass })[];
  hasMore: boolean;
  /** Per UTC day: distinct human visitors, and those of them who came from an AI assistant's answer. */
  aiShare: { start: number; humans: number; fromAiAssistant: number }[];
}

/** A count as an engine's row holds it (a number, a bigint or a numeric string). */
const count = (v: unknown) => Number(v ?? 0);

/** The referrers report from an engine's three queries (both engines answer in the same columns; page rows in order). */
export function referrersReport(classRows: Record<string, unknown>[], pageRows: Record<string, unknown>[], dayRows: Record<string, unknown>[], page: Page): ReferrersReport {
  const counts = (r: Record<string, unknown>): Counts => ({ human: count(r.human), ai: count(r.ai), total: count(r.total) });
  const bySource = new Map(classRows.map((r) => [String(r.source), counts(r)]));
  return {
    classes: SOURCE_CLASSES.map((source) => ({ source, ...(bySource.get(source) ?? { human: 0, ai: 0, total: 0 }) })),
    rows: pageRows.slice(0, page.limit).map((r) => ({ host: String(r.host), source: String(r.source) as SourceClass, ...counts(r) })),
    hasMore: pageRows.length > page.limit,
    aiShare: dayRows.map((r) => ({ start: count(r.day) * 86_400_000, humans: count(r.humans), fromAiAssistant: count(r.from_ai) })),
  };
}

/** A row of an engine's not-found query: a path's counts (position, first_seen, last_seen) and one referring host of it. */
type NotFoundQueryRow = Record<string, unknown>;

/**
 * The not-found report from an engine's two queries (both engines answer in the same columns): the
 * totals, and the page's paths — one row per path and referring host, `position` giving the order —
 * fetched one row past the page so `hasMore` is known.
 */
export function notFoundReport(totals: NotFoundQueryRow[], pathRows: NotFoundQueryRow[], page: Page): NotFoundReport {
  const t = totals[0] ?? {};
  const byPath = new Map<string, NotFoundRow & { position: number }>();
  for (const r of pathRows) {
    const path = String(r.path);
    let row = byPath.get(path);
    if (!row) {
      row = { path, human: count(r.human), ai: count(r.ai), total: count(r.total), derivedVisitors: count(r.derived_visitors), views: count(r.views), firstSeen: count(r.first_seen), lastSeen: count(r.last_seen), referrers: [], position: count(r.position) };
      byPath.set(path, row);
    }
    if (r.referred !== null && r.referred !== undefined) row.referrers.push({ host: r.referrer_host === null || r.referrer_host === undefined ? null : String(r.referrer_host), visitors: count(r.referred) });
  }
  const rows = [...byPath.values()].sort((a, b) => a.position - b.position);
  for (const row of rows) {
    // Most visitors first; hosts in code-point order, "no referrer" last.
    row.referrers.sort((a, b) => b.visitors - a.visitors || (a.host === null ? 1 : b.host === null ? -1 : a.host < b.host ? -1 : a.host > b.host ? 1 : 0));
    row.referrers.splice(NOT_FOUND_REFERRERS);
  }
  return {
    totals: { human: count(t.human), ai: count(t.ai), total: count(t.total), derivedVisitors: count(t.derived_visitors), views: count(t.views) },
    rows: rows.slice(0, page.limit).map(({ position: _, ...row }) => row),
    hasMore: rows.length > page.limit,
  };
}

export interface AgentRow {
  agent: string;
  category: string;
  visitors: number;
  views: number;
}

export interface AnalyticsEngine {
  readonly name: string;
  /** Stores the events durably (one transaction). */
  write(events: StoredEvent[]): Promise<WriteOutcome>;
  /** Stores a batch of imported views durably; rows whose key was imported before are dropped and counted. */
  writeImport(batch: ImportColumns): Promise<{ duplicates: number }>;
  /** Exact distinct visitors per path and site-wide. */
  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts>;
  /** Page-view counts per path and site-wide. */
  views(projectId: string, range: Range, page: Page): Promise<PagedCounts>;
  timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]>;
  agents(projectId: string, range: Range): Promise<AgentRow[]>;
  /** Paths that answered not found, with exact visitors, in the visitors report's order. */
  notFound(projectId: string, range: Range, page: Page): Promise<NotFoundReport>;
  /** Referring hosts of page views, classed, with exact visitors (total descending, then host); the project's `own` hosts are no referrers. */
  referrers(projectId: string, range: Range, page: Page, own: OwnHosts): Promise<ReferrersReport>;
  /** Folds recently written rows into the query layout. Safe to call any time. */
  compact(): Promise<void>;
  /** Rows written since the last compaction. */
  pendingRows(): number;
  /** Deletes everything before the UTC day `day` (days since the epoch). */
  deleteBefore(day: number): Promise<void>;
  close(): Promise<void>;
}

/** The reads of an engine, which each engine answers with its queries object (engines/<name>/queries.ts). */
export type EngineReads = Pick<AnalyticsEngine, 'visitors' | 'views' | 'timeseries' | 'agents' | 'notFound' | 'referrers'>;

/** The engines' common base: their reads go to `queries`. */
export abstract class ReadsFromQueries<Q extends EngineReads> implements EngineReads {
  protected readonly queries: Q;

  protected constructor(queries: Q) {
    this.queries = queries;
  }

  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.queries.visitors(projectId, range, page);
  }

  views(projectId: string, range: Range, page: Page): Promise<PagedCounts> {
    return this.queries.views(projectId, range, page);
  }

  timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]> {
    return this.queries.timeseries(projectId, range, interval);
  }

  agents(projectId: string, range: Range): Promise<AgentRow[]> {
    return this.queries.agents(projectId, range);
  }

  notFound(projectId: string, range: Range, page: Page): Promise<NotFoundReport> {
    return this.queries.notFound(projectId, range, page);
  }

  referrers(projectId: string, range: Range, page: Page, own: OwnHosts): Promise<ReferrersReport> {
    return this.queries.referrers(projectId, range, page, own);
  }
}
