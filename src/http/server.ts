// Starts a Folio server: services, the app, listening, graceful shutdown.
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { createServices, type Services, type ServicesOptions } from '../services.ts';
import { buildApp } from './app.ts';

export interface RunningServer {
  readonly url: string;
  readonly app: FastifyInstance;
  readonly services: Services;
  /** Stops accepting, lets in-flight requests finish, stops workers (releasing leases), closes stores. */
  close(): Promise<void>;
}

export async function startServer(config: Config, opts: ServicesOptions & { logRequests?: boolean } = {}): Promise<RunningServer> {
  const services = await createServices(config, opts);
  let app: FastifyInstance;
  try {
    app = await buildApp(services, { logRequests: opts.logRequests });
    await app.listen({ port: config.port, host: config.host });
  } catch (err) {
    await services.close();
    throw err;
  }
  const addr = app.server.address();
  const port = typeof addr === 'object' && addr ? addr.port : config.port;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  let closing: Promise<void> | null = null;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`,
    app,
    services,
    close() {
      closing ??= (async () => {
        // Requests in flight get FOLIO_SHUTDOWN_TIMEOUT to finish; connections still open then (a
        // client stalled mid-body, a slow reader) are cut, so a shutdown never waits on a client.
        let timer: NodeJS.Timeout | undefined;
        const cut = new Promise<void>((resolve) => {
          timer = setTimeout(() => {
            services.log.warn({ afterMs: config.timeouts.shutdownMs }, 'closing the connections still open');
            app.server.closeAllConnections();
            resolve();
          }, config.timeouts.shutdownMs);
        });
        await Promise.race([app.close(), cut]);
        clearTimeout(timer);
        // Workers stop here: their runs are aborted and their leases released for another process.
        await services.close();
      })();
      return closing;
    },
  };
}

/** Closes the server on SIGTERM/SIGINT (see exitOnSignals). */
export function closeOnSignals(server: RunningServer): void {
  exitOnSignals(server.services, () => server.close());
}

/**
 * Runs `close` on SIGTERM/SIGINT and exits; a second signal exits at once, and so does a shutdown
 * that takes longer than FOLIO_SHUTDOWN_TIMEOUT plus a grace period for releasing leases.
 */
export function exitOnSignals(services: Pick<Services, 'log' | 'config'>, close: () => Promise<void>): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    services.log.info({ signal }, 'shutting down');
    setTimeout(() => {
      services.log.error('shutdown did not finish in time; exiting');
      process.exit(1);
    }, services.config.timeouts.shutdownMs + 10_000).unref();
    close().then(
      () => process.exit(0),
      (err) => {
        services.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
