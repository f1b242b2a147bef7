// The dashboard's settings of code-change triggers (operators only, by session): watched
// repositories, filters and template; the webhook secret, shown once when made; recent deliveries.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import type { Services } from '../../services.ts';
import { badRequest, notFound } from '../../errors.ts';
import { DeliveriesQuery, TriggerDeliveryList, TriggerSettings, TriggerSettingsBody, TriggerSettingsWithSecret } from '../../contracts/triggers.ts';
import { errorResponses } from '../../contracts/common.ts';
import { TriggerSettingsError, triggerSettingsView, updateTriggerSettings } from '../../jobs/triggers/settings.ts';
import { nulPath } from '../nul.ts';
import { ACCESS } from '../auth.ts';

const Params = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }) });
type Params = { projectId: string };

export const triggerSettingsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { projects } = services;
  const { store } = services.triggers;
  const hide = { hide: true } as const;

  app.addHook('preValidation', async (request) => {
    const where = nulPath(request.body, '/body');
    if (where) throw badRequest('invalid_request', 'Text must not contain NUL characters (\\u0000).', [{ message: 'contains NUL', path: where }]);
  });

  // Signed in first (before the body is read), then the project must exist.
  const projectExists = async (request: FastifyRequest) => {
    const { projectId } = request.params as Params;
    if (!(await projects.get(projectId))) throw notFound(`Project "${projectId}" does not exist.`, 'project_not_found');
  };
  const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

  app.get('/api/projects/:projectId/triggers', { schema: { ...hide, params: Params, response: { 200: TriggerSettings, ...errorResponses(401, 404) } }, config: ACCESS.operator, onRequest: projectExists }, async (request) =>
    triggerSettingsView(store, request.params.projectId, baseUrlOf(request)),
  );

  app.put(
    '/api/projects/:projectId/triggers',
    { schema: { ...hide, params: Params, body: TriggerSettingsBody, response: { 200: TriggerSettings, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator, onRequest: projectExists },
    async (request) => {
      try {
        await updateTriggerSettings(store, request.params.projectId, request.body);
      } catch (err) {
        if (err instanceof TriggerSettingsError) throw badRequest('invalid_trigger_settings', err.message);
        throw err;
      }
      return triggerSettingsView(store, request.params.projectId, baseUrlOf(request));
    },
  );

  // A new secret replaces the old one at once; it is in this answer only, never stored in plain text.
  app.post('/api/projects/:projectId/triggers/secret', { schema: { ...hide, params: Params, response: { 201: TriggerSettingsWithSecret, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator, onRequest: projectExists }, async (request, reply) => {
    const secret = await store.rotateSecret(request.params.projectId);
    reply.header('cache-control', 'no-store');
    return reply.code(201).send({ secret, ...(await triggerSettingsView(store, request.params.projectId, baseUrlOf(request))) });
  });

  app.get(
    '/api/projects/:projectId/triggers/deliveries',
    { schema: { ...hide, params: Params, querystring: DeliveriesQuery, response: { 200: TriggerDeliveryList, ...errorResponses(400, 401, 404) } }, config: ACCESS.operator, onRequest: projectExists },
    async (request) => ({ deliveries: await store.recentDeliveries(request.params.projectId, request.query.limit ?? 50) }),
  );
};
