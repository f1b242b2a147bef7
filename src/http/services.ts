// The narrow services the routes depend on, each a decorator of the app registered as a named plugin
// (the way fastify/demo registers its repositories): a route plugin declares the ones it uses in its
// `dependencies`, and Fastify refuses to start when one is missing. Routes reach nothing else: no
// file under src/http imports src/store (test/platform/layers.test.ts).
import fp from 'fastify-plugin';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import type { Services } from '../services.ts';
import type { JobsService } from '../jobs/service.ts';
import type { JobEventsService } from '../jobs/event-streams.ts';
import type { WebhookOutbox } from '../jobs/webhooks.ts';
import type { Analytics } from '../analytics/index.ts';
import type { AnalyticsReadLimit } from '../analytics/read-limit.ts';
import type { TriggersService } from '../jobs/triggers/service.ts';
import type { UsersService } from '../admin/users.ts';
import type { KeysService } from '../admin/keys.ts';
import type { ProjectsService } from '../admin/projects.ts';
import type { ServiceMetrics } from '../jobs/metrics.ts';
import type { SuggestionsService } from '../suggestions/service.ts';

/** What the HTTP layer may use of a process's services. */
export type HttpServices = Pick<Services, 'config' | 'jobs' | 'jobEvents' | 'webhooks' | 'analytics' | 'triggers' | 'users' | 'keys' | 'projects' | 'metrics' | 'storeReady' | 'log' | 'analyticsReads' | 'suggestions'>;

declare module 'fastify' {
  interface FastifyInstance {
    config: Config;
    jobs: JobsService;
    jobEvents: JobEventsService;
    webhooks: WebhookOutbox;
    analytics: Analytics;
    analyticsReads: AnalyticsReadLimit;
    triggers: TriggersService;
    users: UsersService;
    keys: KeysService;
    projects: ProjectsService;
    metrics: ServiceMetrics;
    suggestions: SuggestionsService;
    /** Whether the store is reachable and migrated (/readyz). */
    storeReady: () => Promise<boolean>;
  }
}

const NAMES = ['config', 'jobs', 'jobEvents', 'webhooks', 'analytics', 'triggers', 'users', 'keys', 'projects', 'metrics', 'storeReady', 'analyticsReads', 'suggestions'] as const satisfies readonly (keyof HttpServices)[];

/** Registers each service as its own named plugin, so route plugins can declare what they need. */
export async function registerServices(app: FastifyInstance, services: HttpServices): Promise<void> {
  for (const name of NAMES) {
    await app.register(
      fp(async (scope) => void scope.decorate(name, services[name] as never), { name, fastify: '5.x' }),
    );
  }
}
