// Visitor analytics API: server-side events, the browser script and its collect endpoint, bulk log
// import, and the visitors / views / timeseries / agents queries.
import type { Readable } from 'node:stream';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { ApiError, badRequest, notFound, rateLimitHeaders, tooManyRequests } from '../../errors.ts';
import { errorResponses, ProjectParams } from '../../contracts/common.ts';
import {
  AgentsResponse,
  CollectBody,
  EventsBody,
  EventsResponse,
  ImportResponse,
  PagedQuery,
  RangeQuery,
  TimeseriesQuery,
  TimeseriesResponse,
  ViewsResponse,
  VisitorsResponse,
} from '../../contracts/analytics.ts';
import { RateLimitedError, takeRateSlot, type RateInfo } from '../../store/rate-limits.ts';
import { BROWSER_SCRIPT, BROWSER_SCRIPT_ETAG, DAY_MS, MAX_EVENTS_PER_REQUEST, parseRange, type Range } from '../../analytics/index.ts';

type ProjectRequest<Q = unknown, B = unknown> = FastifyRequest<{ Params: { projectId: string }; Querystring: Q; Body: B }>;

const COLLECT_BODY_LIMIT = 4 * 1024;
/** The bulk endpoint's compact batch (analytics/bulk.ts). */
const COMPACT_TYPE = 'application/vnd.folio.views+json';
const COMPACT_BODY_LIMIT = 64 * 1024 * 1024;
const MAX_HOUR_RANGE_MS = 31 * DAY_MS;
/** The same rule as the job API: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY = /^[\x21-\x7e]{1,255}$/;

function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const key = request.headers['idempotency-key'];
  if (key === undefined) return undefined;
  if (typeof key !== 'string' || !IDEMPOTENCY_KEY.test(key)) {
    throw badRequest('invalid_idempotency_key', 'Idempotency-Key must be 1 to 255 visible ASCII characters.', [
      { message: 'invalid Idempotency-Key', path: '/headers/idempotency-key' },
    ]);
  }
  return key;
}

/** Fixed one-minute windows per client IP (per process) for the keyless collect endpoint. */
class ClientRateLimiter {
  private windows = new Map<string, { start: number; count: number }>();
  private readonly limit: number;
  constructor(limit: number) {
    this.limit = limit;
  }
  take(client: string, now = Date.now()): RateInfo | null {
    if (this.limit <= 0) return null;
    if (this.windows.size > 100_000) for (const [k, w] of this.windows) if (now - w.start >= 60_000) this.windows.delete(k);
    let w = this.windows.get(client);
    if (!w || now - w.start >= 60_000) this.windows.set(client, (w = { start: now, count: 0 }));
    const resetSeconds = Math.max(1, Math.ceil((w.start + 60_000 - now) / 1000));
    if (w.count >= this.limit) {
      throw new ApiError(429, 'rate_limited', `Rate limit exceeded: at most ${this.limit} page views per client per minute.`, {
        headers: { 'retry-after': String(resetSeconds), ...rateLimitHeaders({ limit: this.limit, remaining: 0, resetSeconds }) },
      });
    }
    w.count++;
    return { limit: this.limit, remaining: this.limit - w.count, resetSeconds };
  }
}

function originsOf(siteOrigins: string | null | undefined): string[] {
  if (!siteOrigins) return [];
  try {
    const v = JSON.parse(siteOrigins) as unknown;
    return Array.isArray(v) ? v.filter((o): o is string => typeof o === 'string').map((o) => o.replace(/\/+$/, '').toLowerCase()) : [];
  } catch {
    return [];
  }
}

export const analyticsRoutes: FastifyPluginAsync<{ services: Services }> = async (app, { services }) => {
  const { analytics } = services;
  const read = app.requireKey('read');
  const write = app.requireKey('write');
  const tags = ['Analytics'];
  const collectLimiter = new ClientRateLimiter(services.config.rateLimits.collectPerMinute);

  // Browsers post page views as text/plain (a CORS "simple" request, also what sendBeacon sends).
  app.addContentTypeParser('text/plain', { parseAs: 'string', bodyLimit: COLLECT_BODY_LIMIT }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ApiError(400, 'invalid_json', 'The body is not valid JSON.'), undefined);
    }
  });
  // The bulk import endpoint streams NDJSON: the body is handed over as a stream, never buffered whole.
  app.addContentTypeParser(['application/x-ndjson', 'application/jsonl'], (_req, payload, done) => done(null, payload));
  // A compact batch is one JSON document (bounded).
  app.addContentTypeParser(COMPACT_TYPE, { parseAs: 'string', bodyLimit: COMPACT_BODY_LIMIT }, (_req, body, done) => {
    try {
      done(null, JSON.parse(body as string));
    } catch {
      done(new ApiError(400, 'invalid_json', 'The body is not valid JSON.'), undefined);
    }
  });

  /** The text/plain parser above is for the browser's collect endpoint only: the others answer 415. */
  const onlyMediaTypes = (...types: string[]) =>
    function checkMediaType(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
      const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type === '' || types.includes(type)) return done();
      done(new ApiError(415, 'unsupported_media_type', `Send the body as ${types.join(' or ')}.`));
    };

  /** Counts one analytics read against the project's hourly limit. */
  async function countRead(projectId: string, reply: FastifyReply): Promise<void> {
    const limit = services.config.rateLimits.analyticsReadsPerHour;
    if (limit <= 0) return;
    try {
      const info = await services.store.db.transaction().execute(async (trx) => {
        await services.store.dialect.lockProject(trx, projectId);
        return takeRateSlot(trx, projectId, 'analytics_read', limit, 'analytics reads');
      });
      if (info) reply.headers(rateLimitHeaders(info));
    } catch (err) {
      if (err instanceof RateLimitedError) throw tooManyRequests(err.message, err.info);
      throw err;
    }
  }

  async function rangeOf(request: { params: { projectId: string }; query: { dateFrom?: string; dateTo?: string } }, reply: FastifyReply): Promise<Range> {
    const range = parseRange(request.query);
    await countRead(request.params.projectId, reply);
    return range;
  }

  // ------------------------------------------------------------------ queries

  app.get<{ Params: { projectId: string }; Querystring: PagedQuery }>(
    '/v1/analytics/:projectId/visitors',
    {
      schema: {
        tags,
        summary: 'Get unique visitors',
        description:
          'Exact distinct visitors per path and site-wide, split into human and AI; `total` is deduplicated across both. `dateFrom` inclusive, `dateTo` exclusive; ordered by total descending, then path ascending.',
        params: ProjectParams,
        querystring: PagedQuery,
        response: { 200: VisitorsResponse, ...errorResponses(400, 401, 403, 429) },
      },
      onRequest: read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      const r = await analytics.visitors(request.params.projectId, range, { limit: request.query.limit, offset: request.query.offset });
      return { totals: r.totals, visitors: r.rows, hasMore: r.hasMore };
    },
  );

  app.get<{ Params: { projectId: string }; Querystring: PagedQuery }>(
    '/v1/analytics/:projectId/views',
    {
      schema: {
        tags,
        summary: 'Get page views',
        description: 'Page-view counts per path and site-wide, split into human and AI. Same parameters and order as the visitors operation.',
        params: ProjectParams,
        querystring: PagedQuery,
        response: { 200: ViewsResponse, ...errorResponses(400, 401, 403, 429) },
      },
      onRequest: read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      const r = await analytics.views(request.params.projectId, range, { limit: request.query.limit, offset: request.query.offset });
      return { totals: r.totals, views: r.rows, hasMore: r.hasMore };
    },
  );

  app.get<{ Params: { projectId: string }; Querystring: { dateFrom?: string; dateTo?: string; interval: 'day' | 'hour' } }>(
    '/v1/analytics/:projectId/timeseries',
    {
      schema: {
        tags,
        summary: 'Visitors over time',
        description: 'Distinct human and AI visitors and page views per UTC day or hour, for charts. `interval=hour` needs both bounds, at most 31 days apart.',
        params: ProjectParams,
        querystring: TimeseriesQuery,
        response: { 200: TimeseriesResponse, ...errorResponses(400, 401, 403, 429) },
      },
      onRequest: read,
    },
    async (request, reply) => {
      const range = parseRange(request.query);
      if (request.query.interval === 'hour' && (range.from === null || range.to === null || range.to - range.from > MAX_HOUR_RANGE_MS)) {
        throw badRequest('range_too_large', 'interval=hour needs dateFrom and dateTo at most 31 days apart.', [
          { message: 'hourly series are limited to 31 days', path: '/querystring/interval' },
        ]);
      }
      await countRead(request.params.projectId, reply);
      const series = await analytics.timeseries(request.params.projectId, range, request.query.interval);
      return { interval: request.query.interval, series: series.map((p) => ({ ...p, start: new Date(p.start).toISOString() })) };
    },
  );

  app.get<{ Params: { projectId: string }; Querystring: { dateFrom?: string; dateTo?: string } }>(
    '/v1/analytics/:projectId/agents',
    {
      schema: {
        tags,
        summary: 'AI agents and crawlers',
        description: 'Distinct visitors and views per agent: AI assistants and coding agents (category ai), search and training crawlers, other bots.',
        params: ProjectParams,
        querystring: RangeQuery,
        response: { 200: AgentsResponse, ...errorResponses(400, 401, 403, 429) },
      },
      onRequest: read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      return { agents: await analytics.agents(request.params.projectId, range) };
    },
  );

  // ------------------------------------------------------------------ ingest

  app.post<{ Params: { projectId: string }; Body: EventsBody }>(
    '/v1/analytics/:projectId/events',
    {
      schema: {
        tags,
        summary: 'Send page views (server side)',
        description:
          'Up to 1,000 events per request, each `{timestamp?, path, userAgent, ip?, visitorId?, referrer?, accept?}`. Good events are stored durably before the 202, even when others are rejected. With an `Idempotency-Key` header (1–255 visible ASCII characters), a retry of the same batch (same key, same body) stores nothing again and gets the same `{accepted, rejected}`, with `Idempotent-Replayed: true`.',
        params: ProjectParams,
        body: EventsBody,
        response: { 202: EventsResponse, ...errorResponses(400, 401, 403, 404, 413, 415) },
      },
      // The key first: a stranger learns nothing about media types.
      onRequest: [write, onlyMediaTypes('application/json')],
    },
    async (request, reply) => {
      const { events } = request.body;
      const idempotencyKey = idempotencyKeyOf(request);
      if (events.length > MAX_EVENTS_PER_REQUEST) {
        throw badRequest('too_many_events', `Send at most ${MAX_EVENTS_PER_REQUEST} events per request; this one has ${events.length}.`, [
          { message: `at most ${MAX_EVENTS_PER_REQUEST} events`, path: '/body/events' },
        ]);
      }
      const { accepted, rejected, replayed } = await analytics.ingest(request.params.projectId, events, Date.now(), idempotencyKey);
      if (replayed > 0) reply.header('idempotent-replayed', 'true');
      return reply.code(202).send({ accepted, rejected });
    },
  );

  app.post(
    '/v1/analytics/:projectId/import',
    {
      schema: {
        tags,
        summary: 'Bulk import (NDJSON stream or compact batch)',
        description:
          'Used by `folio analytics import`. NDJSON (`application/x-ndjson`, streamed): one object per line `{t, p, ua, ip?, v?, r?, a?, k?}` (t in ms, k a 16-hex content key: a key seen before is not stored again). Compact batch (`application/vnd.folio.views+json`): `{strings, t, p, ua, ip, r?, a?, k?}` with the distinct strings once and the rows as index and time-delta arrays (see docs/analytics.md). Every row goes through the same checks as the events API; answered once every row is durable.',
        params: ProjectParams,
        response: { 200: ImportResponse, ...errorResponses(400, 401, 403, 413, 415) },
      },
      onRequest: [write, onlyMediaTypes('application/x-ndjson', 'application/jsonl', COMPACT_TYPE)],
      bodyLimit: Number.MAX_SAFE_INTEGER,
    },
    async (request: ProjectRequest, reply) => {
      const projectId = request.params.projectId;
      const type = (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();
      if (type === COMPACT_TYPE) return reply.code(200).send(await analytics.importBatch(projectId, request.body));
      const stream = request.body as Readable | undefined;
      if (!stream || typeof (stream as Readable).pipe !== 'function') {
        throw new ApiError(415, 'unsupported_media_type', 'Send the body as NDJSON with "Content-Type: application/x-ndjson".');
      }
      return reply.code(200).send(await analytics.importStream(projectId, stream));
    },
  );

  // ------------------------------------------------------------------ browser script and collect

  app.get(
    '/v1/analytics/script.js',
    { schema: { tags, summary: 'Browser script', description: 'Small, dependency-free page-view script; see docs/analytics.md.', security: [] } },
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

  async function allowedOrigin(request: FastifyRequest<{ Params: { projectId: string } }>): Promise<string> {
    const project = await services.projects.get(request.params.projectId);
    if (!project) throw notFound(`Project "${request.params.projectId}" does not exist.`, 'project_not_found');
    const origin = request.headers.origin;
    if (typeof origin !== 'string' || origin === '' || origin === 'null') {
      throw new ApiError(403, 'origin_not_allowed', 'Page views are accepted from the browser script only: the request has no Origin.');
    }
    const allowed = originsOf((project as { site_origins?: string | null }).site_origins);
    if (!allowed.includes(origin.toLowerCase())) {
      throw new ApiError(403, 'origin_not_allowed', `Origin ${origin.slice(0, 200)} is not one of this project's site origins.`);
    }
    return origin;
  }

  function corsHeaders(reply: FastifyReply, origin: string) {
    reply.header('access-control-allow-origin', origin).header('vary', 'Origin');
  }

  app.options<{ Params: { projectId: string } }>(
    '/v1/analytics/:projectId/collect',
    { schema: { hide: true, params: ProjectParams } },
    async (request, reply) => {
      const origin = await allowedOrigin(request);
      corsHeaders(reply, origin);
      reply
        .header('access-control-allow-methods', 'POST')
        .header('access-control-allow-headers', 'content-type')
        .header('access-control-max-age', '86400');
      return reply.code(204).send();
    },
  );

  app.post<{ Params: { projectId: string }; Body: CollectBody }>(
    '/v1/analytics/:projectId/collect',
    {
      schema: {
        tags,
        summary: 'Record a page view (browser script)',
        description:
          'No key. Accepted only from the project\'s site origins (CORS), at most 4 KB per request and a per-client rate; bots and crawlers are dropped. Body `{path, referrer?, visitorId?}` as JSON or text/plain.',
        params: ProjectParams,
        body: CollectBody,
        security: [],
        response: { ...errorResponses(400, 403, 404, 413, 415, 429) },
      },
      bodyLimit: COLLECT_BODY_LIMIT,
    },
    async (request, reply) => {
      const origin = await allowedOrigin(request);
      corsHeaders(reply, origin);
      const ip = request.ip;
      const info = collectLimiter.take(ip);
      if (info) reply.headers(rateLimitHeaders(info));
      await analytics.collect(request.params.projectId, request.body, { userAgent: request.headers['user-agent'] ?? '', ip, accept: request.headers.accept });
      return reply.code(204).send();
    },
  );
};
