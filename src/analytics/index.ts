// Visitor analytics as a service: every way in goes through the one pipeline (pipeline.ts: validate →
// classify → visitor id), then the group-commit writer, then the engine (DuckDB file in the data dir, or
// ClickHouse). The HTTP routes call these methods, and run the reports (reports/) through `run`.
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Readable } from 'node:stream';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { TSchema } from 'typebox';
import type { AnalyticsEngine } from './engine.ts';
import type { Report, ReportParams } from './reports/report.ts';
import { DuckDbEngine, migrateDuckDb } from './engines/duckdb/index.ts';
import { duckdbPathHosts } from './reports/referrers.ts';
import { VisitorIds } from './identity.ts';
import { importNdjson, type ImportResult } from './bulk.ts';
import { ClassificationRules } from './classify.ts';
import { startMaintenance } from './maintenance.ts';
import { LAST_VISITOR_CODE } from './traffic-class.ts';
import { COLLECT_WIRE, EVENTS_WIRE, prepareBatch, prepareRecord, type Rejection, type ServerFields } from './pipeline.ts';
import { CodedError } from '../errors.ts';
import { runLogImport, type LogImportResult } from './log-import.ts';
import { ImportError } from './import-error.ts';
import type { LogFormat } from './log-lines/line-converter.ts';
import { GroupCommitWriter, type PendingEvent } from './writer.ts';
import { dropOwnReferrers, OwnHostsCache, withoutOwnReferrers } from './own-hosts.ts';

// What the HTTP layer needs besides the service: request-level limits, the date-range parser, the script.
export { MAX_EVENTS_PER_REQUEST } from './pipeline.ts';
export { DAY_MS, parseRange, type Range } from './dates.ts';
export { BROWSER_SCRIPT, BROWSER_SCRIPT_ETAG } from './script.ts';

export interface AnalyticsDeps {
  config: Config;
  log: Logger;
  /** The state store's dialect: its lock serialises ClickHouse folds across processes. */
  dialect: StoreDialect;
  /** A project's site origins (its settings; undefined: no such project): views referred from them have no referrer. */
  siteOrigins: (projectId: string) => Promise<readonly string[] | undefined>;
}

export interface Analytics {
  /** Writes and compaction; reports go through `run`. */
  readonly engine: AnalyticsEngine;
  /** The agent and referring-source lists in force (agents.json and FOLIO_AGENTS_FILE), built once at start. */
  readonly rules: ClassificationRules;
  /** Answers a report (reports/) for a project, with what the service knows of it (its own hosts, the rules). */
  run<Q extends TSchema, R extends TSchema, Result>(report: Report<Q, R, Result>, params: ReportParams<Q>): Promise<Result>;
  readonly writer: GroupCommitWriter;
  /**
   * The events API: runs each event through the pipeline and stores the good ones; resolves once they
   * are durable. With an idempotency key, a repeat of the same batch (same key and body) stores
   * nothing again; see batchImportKeys.
   */
  ingest(projectId: string, events: unknown[], now?: number, idempotencyKey?: string): Promise<IngestOutcome>;
  /**
   * The browser script's page view: the body's fields with the user agent, Accept header and client
   * address of the request. A broken rule is a 400 with the record's code; resolves `false` when the
   * view is a bot's (not stored).
   */
  collect(projectId: string, body: unknown, request: ServerFields, now?: number): Promise<boolean>;
  /** The bulk endpoint's NDJSON stream (one record per line). */
  importStream(projectId: string, body: Readable, now?: number): Promise<ImportResult>;
  /**
   * The bulk endpoint's raw access log (combined or JSON lines), read by the log reader the direct
   * import uses (log-import.ts): the same rows and content keys as `folio analytics import` without a
   * server. At most MAX_LOG_IMPORTS run at once in a process (each takes a worker thread).
   */
  importLog(projectId: string, body: Readable, opts: { format: LogFormat; fields: Record<string, string[]> }): Promise<LogImportAnswer>;
  /** Raw log imports running now (at most MAX_LOG_IMPORTS). */
  logImportsRunning(): number;
  compact(): Promise<void>;
  /** Deletes events older than config.analytics.retentionDays (no-op when 0). */
  applyRetention(now?: number): Promise<void>;
  close(): Promise<void>;
}

/** A raw log import's answer: the bulk endpoint's counts, and the lines skipped as not page views. */
export type LogImportAnswer = ImportResult & { skipped: LogImportResult['skipped']; kinds: LogImportResult['kinds'] };

/** Raw log imports running at once in one process (each takes a worker thread and a core). */
export const MAX_LOG_IMPORTS = 2;
/** Views per write of a raw log import (as `folio analytics import` over HTTP used to send per request). */
const LOG_IMPORT_BATCH = 50_000;

export interface IngestOutcome {
  accepted: number;
  rejected: Rejection[];
  /** Good events dropped because this batch (same idempotency key and body) was stored before. */
  replayed: number;
}

/**
 * Import dedupe keys for the events of one events-API batch sent with an Idempotency-Key: derived from
 * (project, key, the batch as sent, index), so a retry of the same call gets the same keys and the
 * engine's own import dedupe — in the write transaction itself — drops every event stored before.
 * The body is part of the key: a key reused for a different batch records that batch (it is never
 * silently dropped). Keys of one batch are distinct (consecutive values from one 64-bit digest).
 */
export function batchImportKeys(projectId: string, idempotencyKey: string, events: unknown[]): (index: number) => bigint {
  const d = createHash('sha256').update(`events\u0000${projectId}\u0000${idempotencyKey}\u0000`).update(JSON.stringify(events)).digest();
  const base = d.readBigUInt64BE(0);
  return (index) => BigInt.asIntN(64, base + BigInt(index));
}

export function analyticsFile(config: Config): string {
  return path.join(config.dataDir, 'analytics.duckdb');
}

/** `folio migrate`: brings the analytics store (ClickHouse database or DuckDB file) to the latest layout. */
export async function migrateAnalytics(config: Config): Promise<{ store: string; applied: number[] }> {
  if (config.clickhouseUrl) {
    const { migrateClickHouse } = await import('./engines/clickhouse/index.ts');
    return { store: 'clickhouse', applied: await migrateClickHouse(config.clickhouseUrl) };
  }
  return { store: 'duckdb', applied: await migrateDuckDb(analyticsFile(config)) };
}

/** The engine of this deployment: ClickHouse when CLICKHOUSE_URL is set, else the DuckDB file in the data dir. */
async function openEngine(config: Config, dialect: StoreDialect, rules: ClassificationRules): Promise<AnalyticsEngine> {
  if (!config.clickhouseUrl) return DuckDbEngine.open({ file: analyticsFile(config), pathHosts: duckdbPathHosts(rules.sources) });
  const { createClickHouseEngine } = await import('./engines/clickhouse/index.ts');
  // Folds of a shared ClickHouse database must not overlap: one at a time across the deployment.
  return createClickHouseEngine(config.clickhouseUrl, { foldLock: (fn) => dialect.exclusively('folio analytics fold', fn) });
}

/** Raw log imports of the bulk endpoint, at most MAX_LOG_IMPORTS at once. */
function logImports(engine: AnalyticsEngine, config: Config, rules: ClassificationRules, own: OwnHostsCache, afterImport: () => void): Pick<Analytics, 'importLog' | 'logImportsRunning'> {
  let running = 0;
  return {
    async importLog(projectId, body, opts) {
      if (running >= MAX_LOG_IMPORTS) {
        throw new CodedError('too_many_imports', `At most ${MAX_LOG_IMPORTS} log imports run at once on a server; try again when one has finished.`, { retryAfterSeconds: 10 });
      }
      running++;
      try {
        const r = await runLogImport(withoutOwnReferrers(engine, await own.of(projectId)), { projectId, ...opts, batch: LOG_IMPORT_BATCH, secret: config.secret, rules, input: { stream: body, name: 'the request body' } });
        afterImport();
        return { received: r.lines, recorded: r.recorded, duplicates: r.duplicates, crawlers: r.crawlers, rejected: r.rejected, errors: r.errors, skipped: r.skipped, kinds: r.kinds };
      } catch (err) {
        if (err instanceof ImportError) throw new CodedError('invalid_log', err.message);
        throw err;
      } finally {
        running--;
      }
    },
    logImportsRunning: () => running,
  };
}

export async function createAnalytics(deps: AnalyticsDeps): Promise<Analytics> {
  const { config, log } = deps;
  const rules = ClassificationRules.load(config.analytics.agentsFile);
  const engine = await openEngine(config, deps.dialect, rules);
  const ids = new VisitorIds(config.secret);
  const maintenance = await startMaintenance(engine, config, log);
  const writer = new GroupCommitWriter(engine, {
    flushMs: config.analytics.flushMs,
    flushMaxEvents: config.analytics.flushMaxEvents,
    afterFlush: maintenance.compactIfMany,
  });
  const own = new OwnHostsCache(deps.siteOrigins);
  // Every record way in submits here: a click between the site's own pages is no referral.
  const submit = async (projectId: string, events: PendingEvent[]) => {
    dropOwnReferrers(events, await own.of(projectId));
    return writer.submit(events);
  };
  return {
    engine,
    rules,
    writer,
    async ingest(projectId, events, now = Date.now(), idempotencyKey) {
      const keyOf = idempotencyKey === undefined ? undefined : batchImportKeys(projectId, idempotencyKey, events);
      const { good, rejected } = prepareBatch(events, EVENTS_WIRE, projectId, rules, ids, now, keyOf);
      const { duplicates } = await submit(projectId, good);
      return { accepted: good.length, rejected, replayed: duplicates };
    },
    async collect(projectId, body, request, now = Date.now()) {
      // A rejected record throws Rejected, a CodedError the HTTP layer answers with 400 (error-status.ts).
      const e: PendingEvent = prepareRecord(body, COLLECT_WIRE, projectId, rules, ids, now, request);
      if (e.cls > LAST_VISITOR_CODE) return false; // bots are dropped
      await submit(projectId, [e]);
      return true;
    },
    importStream: (projectId, body, now = Date.now()) => importNdjson(body, (events) => submit(projectId, events), projectId, rules, ids, now),
    ...logImports(engine, config, rules, own, maintenance.compactIfMany),
    run: async (report, params) => engine.run(report, { ...params, ownHosts: await own.of(params.projectId), rules }),
    compact: maintenance.compact,
    applyRetention: maintenance.applyRetention,
    async close() {
      maintenance.stopTimers();
      await writer.close();
      await maintenance.settle();
      await engine.close();
    },
  };
}
