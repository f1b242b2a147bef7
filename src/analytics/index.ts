// Visitor analytics: classify → visitor id → group-commit writer → engine (DuckDB file in the data dir).
import path from 'node:path';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';
import { DAY_MS, type Range } from './dates.ts';
import type { AgentRow, AnalyticsEngine, Page, PagedCounts, TimeseriesPoint } from './engine.ts';
import { DuckDbEngine } from './engines/duckdb.ts';
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
  /** Validates and stores a batch of server-side events; resolves once the good ones are durable. */
  ingest(projectId: string, events: unknown[], now?: number): Promise<{ accepted: number; rejected: Rejection[] }>;
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

/** Recent rows are folded into the query layout every COMPACT_EVERY_MS, or at once past COMPACT_ROWS. */
const COMPACT_ROWS = 1_000_000;
const COMPACT_EVERY_MS = 10_000;
const RETENTION_EVERY_MS = 3_600_000;

export function analyticsFile(config: Config): string {
  return path.join(config.dataDir, 'analytics.duckdb');
}

export async function createAnalytics(deps: AnalyticsDeps): Promise<Analytics> {
  const { config, log } = deps;
  const engine =
    deps.engine ??
    (config.clickhouseUrl
      ? await (await import('./engines/clickhouse.ts')).createClickHouseEngine(config.clickhouseUrl)
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
    async ingest(projectId, events, now = Date.now()) {
      const rejected: Rejection[] = [];
      const good: PendingEvent[] = [];
      events.forEach((raw, index) => {
        try {
          good.push(prepareApiEvent(raw, projectId, ids, now));
        } catch (err) {
          if (!(err instanceof EventRejected)) throw err;
          rejected.push({ index, code: err.code, error: err.message });
        }
      });
      await writer.submit(good);
      return { accepted: good.length, rejected };
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
