// The analytics engine interface, implemented by DuckDB (embedded, the default: engines/duckdb/) and
// ClickHouse (CLICKHOUSE_URL, for scale-out: engines/clickhouse/): writes, compaction, retention,
// and any report (reports/), whose answers are identical on both.
import { domainToASCII } from 'node:url';
import type { TSchema } from 'typebox';
import type { Report, ReportParams } from './reports/report.ts';
import type { ClassCode } from './traffic-class.ts';

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

export interface AnalyticsEngine {
  readonly name: string;
  /** Stores the events durably (one transaction). */
  write(events: StoredEvent[]): Promise<WriteOutcome>;
  /** Stores a batch of imported views durably; rows whose key was imported before are dropped and counted. */
  writeImport(batch: ImportColumns): Promise<{ duplicates: number }>;
  /** Answers a report (src/analytics/reports/) with this engine's SQL of it. */
  run<Q extends TSchema, R extends TSchema, Result>(report: Report<Q, R, Result>, params: ReportParams<Q>): Promise<Result>;
  /** Folds recently written rows into the query layout. Safe to call any time. */
  compact(): Promise<void>;
  /** Rows written since the last compaction. */
  pendingRows(): number;
  /** Deletes everything before the UTC day `day` (days since the epoch). */
  deleteBefore(day: number): Promise<void>;
  close(): Promise<void>;
}
