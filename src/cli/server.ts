// `folio serve`, `folio worker`, `folio migrate`, `folio healthcheck`: running Folio, bringing its
// stores up to date, and telling a container runtime whether it is healthy.
// The server, the services and the stores are imported when a command runs, so that the other
// commands start fast.
import type { Command } from 'commander';
import type { Logger } from 'pino';
import { loadConfig, type Config } from '../config.ts';
import { UsageError } from './errors.ts';
import { printResult } from './output.ts';
import { checkHealth, recordServe, startWorkerBeat } from './health.ts';

/**
 * After the start: the dashboard, the model and the data, as log lines (next-steps.ts); and, for a
 * person at a terminal, the same as plain lines on stderr, which JSON logs would bury.
 */
async function logNextSteps(log: Logger, config: Config, opts: { listenUrl?: string; setupRequired?: boolean }): Promise<void> {
  const { startupLines } = await import('./next-steps.ts');
  const lines = startupLines(config, opts);
  for (const line of lines) log[line.level](line.fields, line.msg);
  if (process.stderr.isTTY) process.stderr.write(`\n${lines.map((l) => `  ${l.level === 'warn' ? '! ' : ''}${l.msg}`).join('\n')}\n\n`);
}

export function registerServerCommands(program: Command): void {
  program
    .command('serve')
    .description('Run the HTTP API (and agent workers unless --no-workers).')
    .option('--no-workers', 'run the API only; start workers with `folio worker`')
    .action(async (opts: { workers: boolean }) => {
      const config = loadConfig();
      const { startServer, closeOnSignals } = await import('../http/server.ts');
      const server = await startServer(config, { workers: opts.workers ? undefined : 0, logRequests: config.accessLog });
      const { log, users } = server.services;
      log.info({ url: server.url, workers: opts.workers ? server.services.config.workers : 0 }, 'Folio is listening');
      recordServe(config, server.url);
      await logNextSteps(log, config, { listenUrl: server.url, setupRequired: await users.setupRequired() });
      closeOnSignals(server);
    });

  program
    .command('worker')
    .description('Run agent workers only (no HTTP API).')
    .action(async () => {
      const config = loadConfig();
      const { createServices } = await import('../services.ts');
      const { exitOnSignals } = await import('../http/server.ts');
      const services = await createServices(config, { workers: Math.max(1, config.workers) });
      services.log.info({ workers: Math.max(1, config.workers) }, 'Folio workers running');
      const stopBeat = startWorkerBeat(config, () => services.storeReady());
      await logNextSteps(services.log, config, {});
      exitOnSignals(services, () => {
        stopBeat();
        return services.close();
      });
    });

  program
    .command('migrate')
    .description('Apply pending database migrations.')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const config = loadConfig();
      const { openStore, migrate } = await import('../store/database.ts');
      const { migrateAnalytics } = await import('../analytics/index.ts');
      const { AnalyticsLockedError } = await import('../analytics/engines/duckdb/index.ts');
      const store = await openStore(config, { migrate: false });
      let applied: string[];
      try {
        applied = await migrate(store.dialect, config.secret);
      } finally {
        await store.close();
      }
      let analytics: { store: string; applied: number[] };
      try {
        analytics = await migrateAnalytics(config);
      } catch (err) {
        if (err instanceof AnalyticsLockedError) throw new UsageError(`${err.message.split(' Send the data')[0]} Stop the server first, or let it migrate the file when it starts.`);
        throw err;
      }
      printResult(opts.json, { applied, analytics }, () =>
        [
          applied.length ? `State store, applied: ${applied.join(', ')}` : 'State store: already up to date.',
          analytics.applied.length ? `Analytics (${analytics.store}), applied: ${analytics.applied.join(', ')}` : `Analytics (${analytics.store}): already up to date.`,
        ].join('\n'),
      );
    });

  program
    .command('healthcheck')
    .description("Exit 0 if this data directory's `folio serve` answers or its `folio worker` beats (the image's HEALTHCHECK).")
    .action(async () => {
      process.stdout.write(`${await checkHealth(loadConfig())}\n`);
    });
}
