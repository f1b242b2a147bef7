// Visitor analytics: built by the analytics work (issue 4). This entry point is what services.ts calls.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';

export interface AnalyticsDeps {
  config: Config;
  log: Logger;
  db: Kysely<Database>;
  dialect: StoreDialect;
}

export interface Analytics {
  close(): Promise<void>;
}

export async function createAnalytics(_deps: AnalyticsDeps): Promise<Analytics> {
  return { close: async () => {} };
}
