// Webhooks from code hosts that start agent jobs: POST /v1/triggers/{projectId}/{host}, one route per
// host whose adapter sends webhooks (src/codehost/index.ts). Not authenticated by API key: each
// delivery is verified by its host's signature, so this scope reads bodies as bytes and parses them
// only after the signature checks out. Nothing is read before the project, its secret and the
// signature header are known (the onRequest hook); then a body whose signature was already checked
// (GitLab's token) up to FOLIO_TRIGGER_BODY_LIMIT, one whose signature covers every byte (GitHub's
// HMAC) only up to FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Refusal } from '../../jobs/triggers/receiver.ts';
import { DeliveryAnswer as DeliveryAnswerSchema, DeliveryRefusal, TriggerParams } from '../../contracts/triggers.ts';
import { docLink, TRIGGER_HOSTS, type TriggerHost } from '../../contracts/common.ts';
import { ACCESS } from '../auth.ts';
import { triggerAdapter } from '../../codehost/index.ts';
import { HTTP_STATUS } from '../error-status.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The code host a trigger route receives deliveries from. */
    triggerHost?: TriggerHost;
  }
}

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { receiver } = app.triggers;
  const { bodyLimitBytes, unverifiedBodyLimitBytes } = app.config.triggers;
  /** The most read of a delivery's body: all of it only where the signature could be checked before reading it. */
  const bodyLimitOf = (host: TriggerHost) => {
    const adapter = triggerAdapter(host);
    if (!adapter.signsBody) return { bytes: bodyLimitBytes, reason: `The delivery is larger than FOLIO_TRIGGER_BODY_LIMIT (${bodyLimitBytes} bytes).` };
    const reason = `The delivery is larger than FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT (${unverifiedBodyLimitBytes} bytes), the most Folio reads before its ${adapter.signatureHeader} can be checked.`;
    return { bytes: unverifiedBodyLimitBytes, reason };
  };
  /** Deliveries refused while their body was read, before the handler ran. */
  const refusalOf = (code: string | undefined, host: TriggerHost): Refusal | undefined => {
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { code: 'payload_too_large', reason: bodyLimitOf(host).reason };
    if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return { code: 'invalid_request', reason: 'The Content-Length header does not match the body.' };
    return undefined;
  };

  // This scope only: every body is kept as the bytes that were signed (each route sets its limit).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const hostOf = (request: FastifyRequest): TriggerHost => request.routeOptions.config.triggerHost!;
  const projectIdOf = (request: FastifyRequest) => (request.params as { projectId: string }).projectId;

  // Those refusals are answered like every other delivery (outcome, reason, deliveryId) and counted;
  // any other error goes on to the API's error handler.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const refusal = refusalOf(error.code, hostOf(request));
    if (!refusal) throw error;
    const answer = receiver.refused(projectIdOf(request), hostOf(request), request.headers, refusal, HTTP_STATUS);
    // The rest of the body is not read: the connection ends with the answer.
    return reply.code(answer.statusCode).header('connection', 'close').send(answer.body);
  });

  // Before the body is read: the project, its secret and the signature header must check out, so an
  // unknown project's or an unsigned delivery's body is never read.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = await receiver.admit(projectIdOf(request), hostOf(request), request.headers, HTTP_STATUS);
    if (refusal) return reply.code(refusal.statusCode).header('connection', 'close').send(refusal.body);
  });

  for (const host of TRIGGER_HOSTS) {
    const adapter = triggerAdapter(host);
    app.post(
      `/v1/triggers/:projectId/${host}`,
      {
        bodyLimit: bodyLimitOf(host).bytes,
        // Public: each delivery is verified by its host's signature (receiver.ts).
        config: { ...ACCESS.public, triggerHost: host },
        schema: {
          tags: ['Code-change triggers'],
          summary: `Receive a ${adapter.name} webhook`,
          description: `${adapter.description} See ${docLink('triggers')}.`,
          security: [],
          params: TriggerParams,
          response: {
            200: DeliveryAnswerSchema,
            201: DeliveryAnswerSchema,
            202: DeliveryAnswerSchema,
            ...Object.fromEntries([400, 401, 404, 413, 429, 502, 503].map((s) => [s, DeliveryRefusal])),
          },
        },
      },
      async (request, reply) => {
        const answer = await receiver.receive({
          projectId: request.params.projectId,
          host,
          headers: request.headers,
          contentType: request.headers['content-type'],
          body: Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0),
        }, HTTP_STATUS);
        if (answer.headers) reply.headers(answer.headers);
        // The status is HTTP_STATUS's for a refusal, the receiver's for what it did; its body fits the schema of that status.
        return (reply as FastifyReply).code(answer.statusCode).send(answer.body);
      },
    );
  }
};

export const triggerRoutes = fp(routes, { name: 'trigger-routes', dependencies: ['triggers', 'config', 'folio-auth'], encapsulate: true });
