// The narrow services the routes depend on, each a decorator of the app registered as a named plugin
// (the way fastify/demo registers its repositories): a route plugin declares the ones it uses in its
// `dependencies`, and Fastify refuses to start when one is missing. Routes reach nothing else: no
// file under src/http imports src/store (test/platform/layers.test.ts).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Services } from '../services.ts';
import type { JobsApi } from '../jobs/service.ts';

/** The services routes may depend on, stated once: each is a decorator of the app under its name (`storeReady`: whether the store is reachable and migrated, for /readyz). */
const NAMES = ['config', 'jobs', 'jobEvents', 'webhooks', 'analytics', 'triggers', 'users', 'keys', 'projects', 'metrics', 'storeReady', 'analyticsReads', 'suggestions', 'impact'] as const satisfies readonly (keyof Services)[];
type ServiceName = (typeof NAMES)[number];

/** What the HTTP layer may use of a process's services: the decorators, and the logger. */
export type HttpServices = Pick<Services, ServiceName | 'log'>;

declare module 'fastify' {
  interface FastifyInstance extends Omit<Pick<Services, ServiceName>, 'jobs'> {
    /** Jobs without the transactions that commit with other areas' records (those are the triggers' and suggestions'). */
    jobs: JobsApi;
  }
}

/** Registers each service as its own named plugin, so route plugins can declare what they need. */
export async function registerServices(app: FastifyInstance, services: HttpServices): Promise<void> {
  for (const name of NAMES) {
    await app.register(
      fp(async (scope) => void scope.decorate(name, services[name] as never), { name, fastify: '5.x' }),
    );
  }
}
