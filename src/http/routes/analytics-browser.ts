// The browser side of visitor analytics: the page-view script and its keyless collect endpoint.
// Collect takes no key, so three checks stand in for one: CORS from the project's site origins only
// (@fastify/cors, per project), a small body, and a per-client rate (@fastify/rate-limit, per IP).
import cors, { type FastifyCorsOptions } from '@fastify/cors';
import rateLimit from '@fastify/rate-limit';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { ApiError, notFound } from '../../errors.ts';
import { docLink, errorResponses, ProjectParams } from '../../contracts/common.ts';
import { CollectBody } from '../../contracts/analytics.ts';
import { BROWSER_SCRIPT, BROWSER_SCRIPT_ETAG } from '../../analytics/index.ts';
import { ACCESS, publicByDefault } from '../auth.ts';

const COLLECT_BODY_LIMIT = 4 * 1024;
const tags = ['Analytics'];

/** GET /v1/analytics/script.js: the same bytes for every site, cached by browsers and CDNs. */
export const browserScriptRoute: FastifyPluginAsyncTypebox = async (app) => {
  app.get(
    '/v1/analytics/script.js',
    { schema: { tags, summary: 'Browser script', description: `Small, dependency-free page-view script; see ${docLink('analytics')}.`, security: [] }, config: ACCESS.public },
    async (request, reply) => {
      reply
        .header('content-type', 'text/javascript; charset=utf-8')
        .header('cache-control', 'public, max-age=3600, stale-while-revalidate=86400')
        .header('etag', BROWSER_SCRIPT_ETAG)
        .header('access-control-allow-origin', '*')
        .header('x-content-type-options', 'nosniff');
      if (request.headers['if-none-match'] === BROWSER_SCRIPT_ETAG) return reply.code(304).send();
      return reply.send(BROWSER_SCRIPT);
    },
  );
};

/**
 * POST /v1/analytics/{projectId}/collect and its CORS preflight; registered with that path as the
 * prefix, so @fastify/cors's catch-all OPTIONS route stays under it.
 */
const collect: FastifyPluginAsyncTypebox = async (app) => {
  const { analytics, projects } = app;

  /**
   * The CORS answer for one request: the page's own origin when it is one of the project's site
   * origins; otherwise a 404 (no such project) or a 403, before anything else runs. A preflight of
   * a longer path under the prefix gets no CORS headers and a 404.
   */
  async function corsFor(request: FastifyRequest): Promise<FastifyCorsOptions> {
    const params = request.params as { projectId?: string; '*'?: string };
    if (request.method === 'OPTIONS' && params['*'] !== '') return { origin: false };
    const project = params.projectId ? await projects.get(params.projectId) : undefined;
    if (!project) throw notFound(`Project "${String(params.projectId).slice(0, 100)}" does not exist.`, 'project_not_found');
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || origin === '' || origin === 'null') {
      throw new ApiError(403, 'origin_not_allowed', 'Page views are accepted from the browser script only: the request has no Origin.');
    }
    if (!project.siteOrigins.includes(origin.toLowerCase())) {
      throw new ApiError(403, 'origin_not_allowed', `Origin ${origin.slice(0, 200)} is not one of this project's site origins.`);
    }
    return { origin, methods: 'POST', allowedHeaders: 'content-type', maxAge: 86_400, strictPreflight: false };
  }
  // Its catch-all OPTIONS route (the preflight) is public like the endpoint.
  publicByDefault(app);
  await app.register(cors, { delegator: corsFor });

  const perMinute = app.config.rateLimits.collectPerMinute;
  if (perMinute > 0) {
    await app.register(rateLimit, {
      global: false,
      enableDraftSpec: true, // RateLimit-* headers, as on the rest of the API
      errorResponseBuilder: (_request, context) =>
        new ApiError(429, 'rate_limited', `Rate limit exceeded: at most ${context.max} page views per client per minute.`),
    });
  }

  // Browsers post page views as text/plain (a CORS "simple" request, also what sendBeacon sends).
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: COLLECT_BODY_LIMIT }, (_request, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ApiError(400, 'invalid_json', 'The body is not valid JSON.'), undefined);
    }
  });

  app.post(
    '/',
    {
      prefixTrailingSlash: 'no-slash',
      schema: {
        tags,
        summary: 'Record a page view (browser script)',
        description:
          "No key. Accepted only from the project's site origins (CORS), at most 4 KB per request and a per-client rate; bots and crawlers are dropped. Body `{path, referrer?, visitorId?}` as JSON or text/plain.",
        params: ProjectParams,
        body: CollectBody,
        security: [],
        response: { ...errorResponses(400, 403, 404, 413, 415, 429) },
      },
      bodyLimit: COLLECT_BODY_LIMIT,
      config: { ...ACCESS.public, ...(perMinute > 0 ? { rateLimit: { max: perMinute, timeWindow: 60_000 } } : {}) },
    },
    async (request, reply) => {
      await analytics.collect(request.params.projectId, request.body, {
        userAgent: request.headers['user-agent'] ?? '',
        ip: request.ip,
        accept: request.headers.accept,
      });
      return reply.code(204).send();
    },
  );
};

export const collectRoutes = fp(collect, { name: 'collect-routes', dependencies: ['analytics', 'projects', 'config', 'folio-auth'], encapsulate: true });
