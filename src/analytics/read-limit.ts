// The hourly limit of analytics reads per project (FOLIO_RATE_LIMIT_ANALYTICS_READS): each query
// takes a slot in its own short transaction, under the project's lock, so several processes together
// cannot overshoot. Over the limit: RateLimitedError (rate_limited, with the limit's hints).
import type { StoreDialect } from '../store/dialect.ts';
import { takeRateSlot, type RateInfo } from '../store/rate-limits.ts';

export class AnalyticsReadLimit {
  private readonly dialect: StoreDialect;
  private readonly perHour: number;
  /** `perHour` 0: unlimited. */
  constructor(dialect: StoreDialect, perHour: number) {
    this.dialect = dialect;
    this.perHour = perHour;
  }

  /** Counts one read; the limit's state for the response headers, or null when unlimited. */
  async take(projectId: string): Promise<RateInfo | null> {
    if (this.perHour <= 0) return null;
    return this.dialect.db.transaction().execute(async (trx) => {
      await this.dialect.lockProject(trx, projectId);
      return takeRateSlot(trx, projectId, 'analytics_read', this.perHour, 'analytics reads');
    });
  }
}
