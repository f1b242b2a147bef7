// The OpenAPI `operationId` of every documented operation, in one table: generated clients name their
// methods after it (the names follow Folio's own client, src/client/client.ts). The routes stay as they
// are; `nameOperations` sets the id where each route is registered. The analytics reports name their
// own (routes/analytics.ts: get + the report's name). A documented route missing here
// fails test/http/reference.test.ts, and so does an entry no route has. The upstream documents Folio
// is wire-compatible with (shared/reference/upstream-openapi) name no operationIds, so none is kept.
import type { FastifyInstance } from 'fastify';

/** `METHOD url` (Fastify's `:param` form) → operationId. */
export const OPERATION_IDS: Readonly<Record<string, string>> = {
  'POST /v2/agent/:projectId/job': 'createJob',
  'GET /v2/agent/:projectId/job/:id': 'getJob',
  'POST /v2/agent/:projectId/job/:id/message': 'sendMessage',
  'POST /v2/agent/:projectId/job/:id/archive': 'archiveJob',
  'GET /v2/agent/:projectId/job/:id/changes': 'getJobChanges',
  'GET /v2/agent/:projectId/job/:id/impact': 'getJobImpact',
  'GET /v2/agent/:projectId/job/:id/messages': 'listJobMessages',
  'GET /v2/agent/:projectId/job/:id/events': 'listJobEvents',
  'GET /v2/agent/:projectId/jobs': 'listJobs',
  'GET /v2/agent/:projectId/usage': 'getUsage',
  'GET /v2/agent/:projectId/job/:id/webhooks': 'listWebhookDeliveries',
  'POST /v2/agent/:projectId/job/:id/webhooks/:deliveryId/redeliver': 'redeliverWebhook',
  'GET /v2/agent/:projectId/suggestions': 'listSuggestions',
  'POST /v2/agent/:projectId/suggestions/:suggestionId/job': 'startSuggestion',
  'POST /v1/analytics/:projectId/events': 'ingestEvents',
  'POST /v1/analytics/:projectId/import': 'importLog',
  'GET /v1/analytics/script.js': 'getBrowserScript',
  'POST /v1/analytics/:projectId/collect': 'collectPageView',
  'POST /v1/triggers/:projectId/github': 'receiveGitHubWebhook',
  'POST /v1/triggers/:projectId/gitlab': 'receiveGitLabWebhook',
};

/** Sets each route's operationId from the table as it is registered (before the reference reads it). */
export function nameOperations(app: FastifyInstance): void {
  app.addHook('onRoute', (route) => {
    if (Array.isArray(route.method) || !route.schema || (route.schema as { hide?: boolean }).hide) return;
    const id = OPERATION_IDS[`${route.method} ${route.url}`];
    if (id && !(route.schema as { operationId?: string }).operationId) route.schema = { ...route.schema, operationId: id } as typeof route.schema;
  });
}
