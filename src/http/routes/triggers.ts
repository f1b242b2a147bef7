// Webhooks from code hosts that start agent jobs: POST /v1/triggers/{projectId}/github and
// /v1/triggers/{projectId}/gitlab. Not authenticated by API key: each delivery is verified by its
// host's signature over the raw body, so this scope reads bodies as bytes (bounded) and parses them
// only after the signature checks out.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { DeliveryAnswer as DeliveryAnswerSchema, DeliveryRefusal, TriggerParams } from '../../contracts/triggers.ts';
import { TRIGGER_HOSTS, type TriggerHost } from '../../contracts/common.ts';
import { ACCESS } from '../auth.ts';

export const triggerRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { receiver } = services.triggers;
  const bodyLimit = services.config.triggers.bodyLimitBytes;
  /** Deliveries refused while their body was read, before the handler ran. */
  const refusals: Record<string, { statusCode: number; code: string; reason: string }> = {
    FST_ERR_CTP_BODY_TOO_LARGE: { statusCode: 413, code: 'payload_too_large', reason: `The delivery is larger than FOLIO_TRIGGER_BODY_LIMIT (${bodyLimit} bytes).` },
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: { statusCode: 400, code: 'invalid_request', reason: 'The Content-Length header does not match the body.' },
  };

  // This scope only: every body is kept as the bytes that were signed.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit }, (_request, body, done) => done(null, body));

  const hostOf = (request: FastifyRequest): TriggerHost => (request.routeOptions.url?.endsWith('/gitlab') ? 'gitlab' : 'github');

  // Those refusals are answered like every other delivery (outcome, reason, deliveryId) and counted;
  // any other error goes on to the API's error handler.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const refusal = error.code ? refusals[error.code] : undefined;
    if (!refusal) throw error;
    const answer = receiver.refused(hostOf(request), request.headers, refusal);
    return reply.code(answer.statusCode).send(answer.body);
  });

  // Before the body is read: the project, its secret and the signature header must check out, so an
  // unknown project's or an unsigned delivery's body is never read.
  app.addHook('onRequest', async (request, reply) => {
    const { projectId } = request.params as { projectId: string };
    const refusal = await receiver.admit(projectId, hostOf(request), request.headers);
    if (refusal) return reply.code(refusal.statusCode).header('connection', 'close').send(refusal.body);
  });

  for (const host of TRIGGER_HOSTS) {
    const hostName = host === 'github' ? 'GitHub (and GitHub Enterprise Server)' : 'GitLab';
    app.post(
      `/v1/triggers/:projectId/${host}`,
      {
        bodyLimit,
        // Public: each delivery is verified by its host's signature over the raw body (receiver.ts).
        config: ACCESS.public,
        schema: {
          tags: ['Code-change triggers'],
          summary: `Receive a ${hostName} webhook`,
          description:
            host === 'github'
              ? 'Verified by `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the project\'s trigger secret). Acts on `pull_request` (merged; opened and new commits when enabled) and `push` to the default branch; `X-GitHub-Delivery` makes a redelivery do nothing. See docs/triggers.md.'
              : 'Verified by `X-Gitlab-Token` (the project\'s trigger secret). Acts on `Merge Request Hook` (merge; open and new commits when enabled) and `Push Hook` to the default branch; `Idempotency-Key` / `X-Gitlab-Event-UUID` make a redelivery do nothing. See docs/triggers.md.',
          security: [],
          params: TriggerParams,
          response: {
            200: DeliveryAnswerSchema,
            201: DeliveryAnswerSchema,
            202: DeliveryAnswerSchema,
            ...Object.fromEntries([400, 401, 404, 409, 413, 415, 429, 502, 503].map((s) => [s, DeliveryRefusal])),
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
        });
        if (answer.headers) reply.headers(answer.headers);
        // The receiver decides the status (each is documented above); its body fits the schema of that status.
        return (reply as FastifyReply).code(answer.statusCode).send(answer.body);
      },
    );
  }
};

