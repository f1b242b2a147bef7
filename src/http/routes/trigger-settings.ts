// The dashboard's settings of code-change triggers (operators only, by session): watched
// repositories, filters and template; the webhook secret, shown once when made; recent deliveries.
// Signed in first (before the body is read); the triggers service checks that the project exists.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { Type } from 'typebox';
import { DeliveriesQuery, TriggerDeliveryList, TriggerSettings, TriggerSettingsBody, TriggerSettingsWithSecret } from '../../contracts/triggers.ts';
import { errorResponses } from '../../contracts/common.ts';
import { refuseNulInBody } from '../nul.ts';
import { ACCESS } from '../auth.ts';

const Params = Type.Object({ projectId: Type.String({ minLength: 1, maxLength: 64 }) });
const hide = { hide: true } as const;
const baseUrlOf = (request: FastifyRequest) => `${request.protocol}://${request.host}`;

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { triggers } = app;
  app.addHook('preValidation', refuseNulInBody);

  app.get(
    '/api/projects/:projectId/triggers',
    { schema: { ...hide, params: Params, response: { 200: TriggerSettings, ...errorResponses(401, 404) } }, config: ACCESS.operator },
    async (request) => triggers.settings(request.params.projectId, baseUrlOf(request)),
  );

  app.put(
    '/api/projects/:projectId/triggers',
    { schema: { ...hide, params: Params, body: TriggerSettingsBody, response: { 200: TriggerSettings, ...errorResponses(400, 401, 403, 404) } }, config: ACCESS.operator },
    async (request) => triggers.update(request.params.projectId, request.body, baseUrlOf(request)),
  );

  // A new secret replaces the old one at once; it is in this answer only, never stored in plain text.
  app.post(
    '/api/projects/:projectId/triggers/secret',
    { schema: { ...hide, params: Params, response: { 201: TriggerSettingsWithSecret, ...errorResponses(401, 403, 404) } }, config: ACCESS.operator },
    async (request, reply) => {
      const answer = await triggers.rotateSecret(request.params.projectId, baseUrlOf(request));
      return reply.header('cache-control', 'no-store').code(201).send(answer);
    },
  );

  app.get(
    '/api/projects/:projectId/triggers/deliveries',
    { schema: { ...hide, params: Params, querystring: DeliveriesQuery, response: { 200: TriggerDeliveryList, ...errorResponses(400, 401, 404) } }, config: ACCESS.operator },
    async (request) => ({ deliveries: await triggers.deliveries(request.params.projectId, request.query.limit ?? 50) }),
  );
};

export const triggerSettingsRoutes = fp(routes, { name: 'trigger-settings-routes', dependencies: ['triggers', 'folio-auth'], encapsulate: true });
