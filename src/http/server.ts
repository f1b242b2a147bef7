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
        await app.close();
        await services.close();
      })();
      return closing;
    },
  };
}

/** Closes the server on SIGTERM/SIGINT; a second signal exits at once. */
export function closeOnSignals(server: RunningServer): void {
  let stopping = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) process.exit(1);
    stopping = true;
    server.services.log.info({ signal }, 'shutting down');
    server.close().then(
      () => process.exit(0),
      (err) => {
        server.services.log.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
}
