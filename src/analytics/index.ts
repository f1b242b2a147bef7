// Visitor analytics: classify → visitor id → group-commit writer → engine (DuckDB file in the data dir).
import { createHash } from 'node:crypto';
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';
import { DAY_MS, type Range } from './dates.ts';
import type { AgentRow, AnalyticsEngine, Page, PagedCounts, TimeseriesPoint } from './engine.ts';
import { DuckDbEngine, migrateDuckDb } from './engines/duckdb/index.ts';
import { VisitorIds } from './identity.ts';
import { EventRejected, prepareApiEvent, type Rejection } from './ingest.ts';
import { GroupCommitWriter, type PendingEvent } from './writer.ts';

export interface AnalyticsDeps {
  config: Config;
  log: Logger;
  db: Kysely<Database>;
  dialect: StoreDialect;
  /** Replaces the engine (benchmarks). */
  engine?: AnalyticsEngine;
}

export interface Analytics {
  readonly engine: AnalyticsEngine;
  readonly ids: VisitorIds;
  readonly writer: GroupCommitWriter;
  /**
   * Validates and stores a batch of server-side events; resolves once the good ones are durable. With
   * an idempotency key, a repeat of the same batch (same key and body) stores nothing again; see
   * batchImportKeys.
   */
  ingest(projectId: string, events: unknown[], now?: number, idempotencyKey?: string): Promise<IngestOutcome>;
  /** Stores already prepared events (browser collect, log import); resolves once durable. */
  submit(events: PendingEvent[]): Promise<{ duplicates: number }>;
  visitors(projectId: string, range: Range, page: Page): Promise<PagedCounts>;
  views(projectId: string, range: Range, page: Page): Promise<PagedCounts>;
  timeseries(projectId: string, range: Range, interval: 'day' | 'hour'): Promise<TimeseriesPoint[]>;
  agents(projectId: string, range: Range): Promise<AgentRow[]>;
  compact(): Promise<void>;
  /** Deletes events older than config.analytics.retentionDays (no-op when 0). */
  applyRetention(now?: number): Promise<void>;
  close(): Promise<void>;
}

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

/** Recent rows are folded into the query layout every COMPACT_EVERY_MS, or at once past COMPACT_ROWS. */
const COMPACT_ROWS = 1_000_000;
const COMPACT_EVERY_MS = 10_000;
const RETENTION_EVERY_MS = 3_600_000;

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

export async function createAnalytics(deps: AnalyticsDeps): Promise<Analytics> {
  const { config, log } = deps;
  const engine =
    deps.engine ??
    (config.clickhouseUrl
      ? await (await import('./engines/clickhouse/index.ts')).createClickHouseEngine(config.clickhouseUrl, {
          // Folds of a shared ClickHouse database must not overlap: one at a time across the deployment.
          foldLock: (fn) => deps.dialect.exclusively('folio analytics fold', fn),
        })
      : await DuckDbEngine.open({ file: analyticsFile(config) }));
  const ids = new VisitorIds(config.secret);
  let compacting: Promise<void> | null = null;
  /** One compaction at a time; rejects when it fails (background callers log). */
  const compact = (): Promise<void> => {
    compacting ??= engine.compact().finally(() => {
      compacting = null;
    });
    return compacting;
  };
  const compactInBackground = () => void compact().catch((err) => log.error({ err }, 'analytics compaction failed'));
  const writer = new GroupCommitWriter(engine, {
    flushMs: config.analytics.flushMs,
    flushMaxEvents: config.analytics.flushMaxEvents,
    afterFlush: () => {
      if (engine.pendingRows() >= COMPACT_ROWS) compactInBackground();
    },
  });
  const compactTimer = setInterval(() => {
    if (engine.pendingRows() > 0) compactInBackground();
  }, COMPACT_EVERY_MS);
  compactTimer.unref();

  const applyRetention = async (now = Date.now()) => {
    const days = config.analytics.retentionDays;
    if (days <= 0) return;
    const cutoff = Math.floor(now / DAY_MS) - days;
    await engine.deleteBefore(cutoff);
  };
  const retentionTimer = setInterval(() => void applyRetention().catch((err) => log.error({ err }, 'analytics retention failed')), RETENTION_EVERY_MS);
  retentionTimer.unref();
  await applyRetention();

  return {
    engine,
    ids,
    writer,
    async ingest(projectId, events, now = Date.now(), idempotencyKey) {
      const rejected: Rejection[] = [];
      const good: PendingEvent[] = [];
      const keyOf = idempotencyKey === undefined ? null : batchImportKeys(projectId, idempotencyKey, events);
      events.forEach((raw, index) => {
        try {
          const e = prepareApiEvent(raw, projectId, ids, now);
          if (keyOf) e.importKey = keyOf(index);
          good.push(e);
        } catch (err) {
          if (!(err instanceof EventRejected)) throw err;
          rejected.push({ index, code: err.code, error: err.message });
        }
      });
      const { duplicates } = await writer.submit(good);
      return { accepted: good.length, rejected, replayed: duplicates };
    },
    submit: (events) => writer.submit(events),
    visitors: (projectId, range, page) => engine.visitors(projectId, range, page),
    views: (projectId, range, page) => engine.views(projectId, range, page),
    timeseries: (projectId, range, interval) => engine.timeseries(projectId, range, interval),
    agents: (projectId, range) => engine.agents(projectId, range),
    compact,
    applyRetention,
    async close() {
      clearInterval(compactTimer);
      clearInterval(retentionTimer);
      await writer.close();
      if (compacting) await compacting.catch(() => {});
      await engine.close();
    },
  };
}
