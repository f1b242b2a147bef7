// The agent-job API: create, get, follow up, archive, list.
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import fp from 'fastify-plugin';
import { notFound, rateLimitHeaders } from '../../errors.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';
import { errorResponses, ProjectParams } from '../../contracts/common.ts';
import {
  CreateJobBody,
  DeliveryParams,
  JobList,
  JobMessageList,
  JobParams,
  ListJobsQuery,
  MessageBody,
  UsageQuery,
  UsageReport,
  WebhookDeliveryList,
  type Job,
} from '../../contracts/jobs.ts';
import { ImpactQuery, JobImpact } from '../../contracts/impact.ts';
import { DEFAULT_DAYS } from '../../analytics/impact-windows.ts';
import { requestHash, type IdempotencyRequest, type WriteResult } from '../../jobs/service.ts';
import { ACCESS } from '../auth.ts';

const JobRef = Type.Ref('AgentJob');
const tags = ['Agent jobs'];

/** The Idempotency-Key of a POST, bound to what the request asks for. */
function idempotencyOf(request: FastifyRequest): IdempotencyRequest | undefined {
  const key = idempotencyKeyOf(request);
  if (key === undefined) return undefined;
  return { key, hash: requestHash(request.method, request.routeOptions.url ?? request.url, { params: request.params, body: request.body }) };
}

function sendWrite(reply: FastifyReply, result: WriteResult) {
  if (result.rate) reply.headers(rateLimitHeaders(result.rate));
  if (result.replayed) reply.header('idempotent-replayed', 'true');
  return reply.code(result.statusCode).send(result.job);
}

/** Create, follow up, archive: each one write of the jobs service, which takes the rate-limit slot. */
const jobWrites: FastifyPluginAsyncTypebox = async (app) => {
  const { jobs } = app;

  app.post(
    '/v2/agent/:projectId/job',
    {
      schema: {
        tags,
        summary: 'Create agent job',
        description:
          'Creates a job that runs in the background. Poll the job until it is completed, archived or failed; `prLink` holds the pull request. `maxCostUsd` or `maxTokens` limit what it may spend (Folio); 402 `monthly_budget_exceeded` once the project\'s monthly budget is spent.',
        params: ProjectParams,
        body: CreateJobBody,
        response: { 201: JobRef, ...errorResponses(400, 401, 402, 403, 404, 413, 415, 422, 429) },
      },
      config: ACCESS.write,
    },
    async (request, reply) => sendWrite(reply, await jobs.create(request.params.projectId, request.body, idempotencyOf(request))),
  );

  app.post(
    '/v2/agent/:projectId/job/:id/message',
    {
      schema: {
        tags,
        summary: 'Send follow-up message',
        description: 'Queues a follow-up instruction. The job becomes active again if it had finished. At most 100 per project per hour; 402 `monthly_budget_exceeded` once the project\'s monthly budget is spent.',
        params: JobParams,
        body: MessageBody,
        response: { 200: JobRef, ...errorResponses(400, 401, 402, 403, 404, 409, 413, 415, 422, 429) },
      },
      config: ACCESS.write,
    },
    async (request, reply) =>
      sendWrite(reply, await jobs.sendMessage(request.params.projectId, request.params.id, request.body.prompt, idempotencyOf(request))),
  );

  app.post(
    '/v2/agent/:projectId/job/:id/archive',
    {
      schema: {
        tags,
        summary: 'Archive agent job',
        description: 'Archives the job (terminal). Stops a running job. Idempotent.',
        params: JobParams,
        response: { 200: JobRef, ...errorResponses(400, 401, 403, 404) },
      },
      config: ACCESS.write,
    },
    async (request) => jobs.archive(request.params.projectId, request.params.id),
  );
};

/** A job, its changes and its messages. */
const jobReads: FastifyPluginAsyncTypebox = async (app) => {
  const { jobs, impact, analyticsReads } = app;
  /** JSON of the cached job views (by the route's response schema); a view is never changed. */
  const serializedViews = new WeakMap<Job, string>();

  app.get(
    '/v2/agent/:projectId/job/:id',
    {
      schema: { tags, summary: 'Get agent job', params: JobParams, response: { 200: JobRef, ...errorResponses(400, 401, 403, 404) } },
      config: ACCESS.read,
    },
    // A cached view is serialised once (docs/benchmarks.md, "Performance shortcuts kept").
    async (request, reply) => {
      const { projectId, id } = request.params;
      const cached = jobs.cachedView(projectId, id, request.receivedAt);
      if (!cached) return jobs.get(projectId, id, request.receivedAt);
      let body = serializedViews.get(cached);
      if (body === undefined) serializedViews.set(cached, (body = reply.serialize(cached) as string));
      return reply.header('content-type', 'application/json; charset=utf-8').send(body);
    },
  );

  app.get(
    '/v2/agent/:projectId/job/:id/changes',
    {
      schema: {
        tags,
        summary: 'Get a job\'s changes',
        description:
          'The diff of the job branch against the commit it forked from (whole files, bounded in size), the files changed, and the docs checks of the last turn with their results.',
        params: JobParams,
        response: { 200: Type.Ref('AgentJobChanges'), ...errorResponses(400, 401, 403, 404) },
      },
      config: ACCESS.read,
    },
    async (request) => jobs.changes(request.params.projectId, request.params.id),
  );

  app.get(
    '/v2/agent/:projectId/job/:id/impact',
    {
      schema: {
        tags,
        summary: "The effect of a merged job on its pages",
        description:
          "For a job whose pull request was merged (the merge time from the code host): the pages it added, edited, moved or removed (site paths from the docs framework's site model, old and new addresses of a moved page) and the redirects it added, each with exact counts for equal windows of whole UTC days before and after the day of the merge (that day in neither: part of it came before the merge, part after) — distinct human and AI visitors, views, humans who arrived from an AI answer, distinct not-found visitors on the old addresses — and the same for all of them together (visitors deduplicated across pages). `days` (1–90, default 14) is each window's length in days, clipped to the whole days over since the merge's day and to the whole days of recorded traffic before it (`clipped` says why). 409 `impact_not_ready` (the message says why) while the job has no pull request, it is open or closed unmerged, or until the first whole day after the merge's day is over (24 to 48 hours after the merge). Counts as one analytics read against the project's hourly limit (429 `rate_limited`) when it reads the traffic: an answer computed in the last minute is served again without one, and a 409 costs none.",
        params: JobParams,
        querystring: ImpactQuery,
        response: { 200: JobImpact, ...errorResponses(400, 401, 403, 404, 409, 429, 503) },
      },
      config: ACCESS.read,
    },
    async (request, reply) => {
      // Reading the project's traffic is one analytics read against the hourly limit (FOLIO_RATE_LIMIT_ANALYTICS), as a report is.
      return impact.impact(request.params.projectId, request.params.id, request.query.days ?? DEFAULT_DAYS, async () => {
        const rate = await analyticsReads.take(request.params.projectId);
        if (rate) reply.headers(rateLimitHeaders(rate));
      });
    },
  );

  app.get(
    '/v2/agent/:projectId/job/:id/messages',
    {
      schema: {
        tags,
        summary: 'List a job\'s messages',
        description: 'The prompt and every follow-up in order, with when each was handled and the agent\'s summary.',
        params: JobParams,
        response: {
          200: JobMessageList,
          ...errorResponses(401, 403, 404),
        },
      },
      config: ACCESS.read,
    },
    async (request) => ({ messages: await jobs.messages(request.params.projectId, request.params.id) }),
  );
};

/** A project's job list and its token usage. */
const projectReads: FastifyPluginAsyncTypebox = async (app) => {
  const { jobs } = app;

  app.get(
    '/v2/agent/:projectId/jobs',
    {
      schema: {
        tags,
        summary: 'List agent jobs',
        description: 'Newest first. Pass `nextCursor` as `cursor` while `hasMore` is true.',
        params: ProjectParams,
        querystring: ListJobsQuery,
        response: { 200: JobList, ...errorResponses(400, 401, 403) },
      },
      config: ACCESS.read,
    },
    async (request) => jobs.list(request.params.projectId, request.query),
  );

  app.get(
    '/v2/agent/:projectId/usage',
    {
      schema: {
        tags,
        summary: 'Token usage and cost',
        description:
          'Tokens the model reported for the project\'s jobs and their estimated cost (FOLIO_MODEL_PRICES), per UTC day and per job, over the last `days` days.',
        params: ProjectParams,
        querystring: UsageQuery,
        response: { 200: UsageReport, ...errorResponses(400, 401, 403) },
      },
      config: ACCESS.read,
    },
    async (request) => jobs.usage(request.params.projectId, request.query.days ?? 30),
  );

};

/** A job's webhook deliveries, and sending one again. */
const webhookDeliveries: FastifyPluginAsyncTypebox = async (app) => {
  const { jobs, webhooks } = app;

  app.get(
    '/v2/agent/:projectId/job/:id/webhooks',
    {
      schema: {
        tags,
        summary: "List a job's webhook deliveries",
        description: 'Every status change announced to the project\'s webhook URL, oldest first, with its attempts and outcome.',
        params: JobParams,
        response: { 200: WebhookDeliveryList, ...errorResponses(400, 401, 403, 404) },
      },
      config: ACCESS.read,
    },
    async (request) => {
      await jobs.get(request.params.projectId, request.params.id); // 404 for another project's job
      return { deliveries: await webhooks.list(request.params.id) };
    },
  );

  app.post(
    '/v2/agent/:projectId/job/:id/webhooks/:deliveryId/redeliver',
    {
      schema: {
        tags,
        summary: 'Send a webhook delivery again',
        description: 'Queues the delivery again with the same id and body and a fresh set of attempts. A pending delivery is left as it is.',
        params: DeliveryParams,
        response: { 200: Type.Ref('WebhookDelivery'), ...errorResponses(400, 401, 403, 404) },
      },
      config: ACCESS.write,
    },
    async (request) => {
      const { projectId, id, deliveryId } = request.params;
      await jobs.get(projectId, id);
      const delivery = await webhooks.redeliver(id, deliveryId);
      if (!delivery) throw notFound(`Webhook delivery "${deliveryId}" does not exist for this job.`, 'delivery_not_found');
      return delivery;
    },
  );
};

export const jobRoutes = fp(
  async (app) => {
    await app.register(jobWrites);
    await app.register(jobReads);
    await app.register(projectReads);
    await app.register(webhookDeliveries);
  },
  { name: 'job-routes', dependencies: ['jobs', 'webhooks', 'impact', 'analyticsReads', 'folio-auth'], encapsulate: true },
);
