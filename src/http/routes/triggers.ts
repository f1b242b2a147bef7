// Webhooks from code hosts that start agent jobs: POST /v1/triggers/{projectId}/github and
// /v1/triggers/{projectId}/gitlab. Not authenticated by API key: each delivery is verified by its
// host's signature, so this scope reads bodies as bytes and parses them only after the signature
// checks out. Nothing is read before the project, its secret and the signature header are known
// (the onRequest hook); then a GitLab body (its token already compared) up to
// FOLIO_TRIGGER_BODY_LIMIT, a GitHub body (its HMAC covers every byte, so it cannot be checked
// before the end) only up to FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Refusal } from '../../jobs/triggers/receiver.ts';
import { DeliveryAnswer as DeliveryAnswerSchema, DeliveryRefusal, TriggerParams } from '../../contracts/triggers.ts';
import { TRIGGER_HOSTS, type TriggerHost } from '../../contracts/common.ts';
import { ACCESS } from '../auth.ts';

const routes: FastifyPluginAsyncTypebox = async (app) => {
  const { receiver } = app.triggers;
  const { bodyLimitBytes, unverifiedBodyLimitBytes } = app.config.triggers;
  /** The most read of a delivery's body: GitLab's is read once its token checked out; GitHub's is read unverified. */
  const bodyLimits: Record<TriggerHost, { bytes: number; reason: string }> = {
    gitlab: { bytes: bodyLimitBytes, reason: `The delivery is larger than FOLIO_TRIGGER_BODY_LIMIT (${bodyLimitBytes} bytes).` },
    github: {
      bytes: unverifiedBodyLimitBytes,
      reason: `The delivery is larger than FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT (${unverifiedBodyLimitBytes} bytes), the most Folio reads before its X-Hub-Signature-256 can be checked.`,
    },
  };
  /** Deliveries refused while their body was read, before the handler ran. */
  const refusalOf = (code: string | undefined, host: TriggerHost): Refusal | undefined => {
    if (code === 'FST_ERR_CTP_BODY_TOO_LARGE') return { statusCode: 413, code: 'payload_too_large', reason: bodyLimits[host].reason };
    if (code === 'FST_ERR_CTP_INVALID_CONTENT_LENGTH') return { statusCode: 400, code: 'invalid_request', reason: 'The Content-Length header does not match the body.' };
    return undefined;
  };

  // This scope only: every body is kept as the bytes that were signed (each route sets its limit).
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  const hostOf = (request: FastifyRequest): TriggerHost => (request.routeOptions.url?.endsWith('/gitlab') ? 'gitlab' : 'github');
  const projectIdOf = (request: FastifyRequest) => (request.params as { projectId: string }).projectId;

  // Those refusals are answered like every other delivery (outcome, reason, deliveryId) and counted;
  // any other error goes on to the API's error handler.
  app.setErrorHandler(async (error: FastifyError, request, reply) => {
    const refusal = refusalOf(error.code, hostOf(request));
    if (!refusal) throw error;
    const answer = receiver.refused(projectIdOf(request), hostOf(request), request.headers, refusal);
    // The rest of the body is not read: the connection ends with the answer.
    return reply.code(answer.statusCode).header('connection', 'close').send(answer.body);
  });

  // Before the body is read: the project, its secret and the signature header must check out, so an
  // unknown project's or an unsigned delivery's body is never read.
  app.addHook('onRequest', async (request, reply) => {
    const refusal = await receiver.admit(projectIdOf(request), hostOf(request), request.headers);
    if (refusal) return reply.code(refusal.statusCode).header('connection', 'close').send(refusal.body);
  });

  for (const host of TRIGGER_HOSTS) {
    const hostName = host === 'github' ? 'GitHub (and GitHub Enterprise Server)' : 'GitLab';
    app.post(
      `/v1/triggers/:projectId/${host}`,
      {
        bodyLimit: bodyLimits[host].bytes,
        // Public: each delivery is verified by its host's signature over the raw body (receiver.ts).
        config: ACCESS.public,
        schema: {
          tags: ['Code-change triggers'],
          summary: `Receive a ${hostName} webhook`,
          description:
            host === 'github'
              ? 'Verified by `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the project\'s trigger secret). Acts on `pull_request` (merged; opened and new commits when enabled) and `push` to the default branch; a redelivery (`X-GitHub-Delivery`) or a replay of the same change under a new id does nothing. Bodies over `FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT` (read before the signature can be checked) get 413. See docs/triggers.md.'
              : 'Verified by `X-Gitlab-Token` (the project\'s trigger secret). Acts on `Merge Request Hook` (merge; open and new commits when enabled) and `Push Hook` to the default branch; a redelivery (`Idempotency-Key` / `X-Gitlab-Event-UUID`) or a replay of the same change under a new id does nothing. See docs/triggers.md.',
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

export const triggerRoutes = fp(routes, { name: 'trigger-routes', dependencies: ['triggers', 'config', 'folio-auth'], encapsulate: true });
