// The analytics store's housekeeping while the service runs: rows not compacted yet are folded into
// the query layout on a timer (or at once when many are waiting), and events older than the retention
// period are deleted hourly.
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { DAY_MS } from './dates.ts';
import type { AnalyticsEngine } from './engine.ts';

/** Recent rows are folded into the query layout every COMPACT_EVERY_MS, or at once past COMPACT_ROWS. */
const COMPACT_ROWS = 1_000_000;
const COMPACT_EVERY_MS = 10_000;
const RETENTION_EVERY_MS = 3_600_000;

export interface Maintenance {
  /** One compaction at a time; rejects when it fails. */
  compact(): Promise<void>;
  /** Compacts when COMPACT_ROWS rows are waiting, logging a failure instead of throwing. */
  compactIfMany(): void;
  /** Deletes events older than config.analytics.retentionDays (no-op when 0). */
  applyRetention(now?: number): Promise<void>;
  /** Stops the timers (a compaction may still start from compactIfMany, e.g. on the writer's last flush). */
  stopTimers(): void;
  /** Waits for a compaction under way. */
  settle(): Promise<void>;
}

/** Starts the timers (unref'd: they never keep the process alive) and applies retention once. */
export async function startMaintenance(engine: AnalyticsEngine, config: Config, log: Logger): Promise<Maintenance> {
  let compacting: Promise<void> | null = null;
  const compact = (): Promise<void> => {
    compacting ??= engine.compact().finally(() => {
      compacting = null;
    });
    return compacting;
  };
  const compactInBackground = () => void compact().catch((err) => log.error({ err }, 'analytics compaction failed'));
  const compactTimer = setInterval(() => {
    if (engine.pendingRows() > 0) compactInBackground();
  }, COMPACT_EVERY_MS);
  compactTimer.unref();

  const applyRetention = async (now = Date.now()) => {
    const days = config.analytics.retentionDays;
    if (days <= 0) return;
    await engine.deleteBefore(Math.floor(now / DAY_MS) - days);
  };
  const retentionTimer = setInterval(() => void applyRetention().catch((err) => log.error({ err }, 'analytics retention failed')), RETENTION_EVERY_MS);
  retentionTimer.unref();
  await applyRetention();

  return {
    compact,
    compactIfMany: () => {
      if (engine.pendingRows() >= COMPACT_ROWS) compactInBackground();
    },
    applyRetention,
    stopTimers() {
      clearInterval(compactTimer);
      clearInterval(retentionTimer);
    },
    async settle() {
      if (compacting) await compacting.catch(() => {});
    },
  };
}
