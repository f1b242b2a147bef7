// Visitor analytics API for key holders: the visitors / views / timeseries / agents queries, the
// server-side events endpoint and the bulk import (raw access logs, NDJSON). The
// browser script and its keyless collect endpoint are in analytics-browser.ts.
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Services } from '../../services.ts';
import { ApiError, badRequest, rateLimitHeaders, tooManyRequests } from '../../errors.ts';
import { errorResponses, ProjectParams } from '../../contracts/common.ts';
import {
  AgentsResponse,
  EventsBody,
  EventsResponse,
  ImportResponse,
  LogImportQuery,
  PagedQuery,
  RangeQuery,
  TimeseriesQuery,
  TimeseriesResponse,
  ViewsResponse,
  VisitorsResponse,
} from '../../contracts/analytics.ts';
import { RateLimitedError, takeRateSlot } from '../../store/rate-limits.ts';
import { DAY_MS, MAX_EVENTS_PER_REQUEST, parseRange, type Range } from '../../analytics/index.ts';
import { fieldsFrom } from '../../analytics/log-import.ts';
import { ImportError } from '../../analytics/import-error.ts';
import { idempotencyKeyOf } from '../idempotency-key.ts';
import { ACCESS } from '../auth.ts';

const NDJSON_TYPES = ['application/x-ndjson', 'application/jsonl'];
/** A raw access log: combined-format or JSON lines, as written by the web server. */
const LOG_TYPE = 'text/plain';
const MAX_HOUR_RANGE_MS = 31 * DAY_MS;

const mediaTypeOf = (request: FastifyRequest) => (request.headers['content-type'] ?? '').split(';')[0].trim().toLowerCase();

/** A raw log body, decompressed when it was sent with `Content-Encoding: gzip`. */
function logBody(request: FastifyRequest, body: Readable): Readable {
  const encoding = String(request.headers['content-encoding'] ?? 'identity').trim().toLowerCase();
  if (encoding === 'identity') return body;
  if (encoding === 'gzip' || encoding === 'x-gzip') return body.pipe(createGunzip());
  throw new ApiError(415, 'unsupported_content_encoding', 'Send the log as is or with "Content-Encoding: gzip".');
}

export const analyticsRoutes: FastifyPluginAsyncTypebox<{ services: Services }> = async (app, { services }) => {
  const { analytics } = services;
  const tags = ['Analytics'];

  // Bulk bodies are handed over as streams, never buffered whole: raw logs (read by the log reader's
  // worker thread) and NDJSON.
  app.addContentTypeParser([...NDJSON_TYPES, LOG_TYPE], (_request, payload, done) => done(null, payload));

  /** Each route takes its own media types (the stream parsers above are not for the events API). */
  const onlyMediaTypes = (...types: string[]) =>
    function checkMediaType(request: FastifyRequest, _reply: FastifyReply, done: (err?: Error) => void) {
      const type = mediaTypeOf(request);
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

  app.get(
    '/v1/analytics/:projectId/visitors',
    {
      schema: {
        tags,
        summary: 'Get unique visitors',
        description:
          'Exact distinct visitors per path and site-wide, split into human and AI; `total` is deduplicated across both. `dateFrom` inclusive, `dateTo` exclusive.',
        params: ProjectParams,
        querystring: PagedQuery,
        response: { 200: VisitorsResponse, ...errorResponses(400, 401, 403, 429) },
      },
      config: ACCESS.read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      const r = await analytics.visitors(request.params.projectId, range, { limit: request.query.limit, offset: request.query.offset });
      return { totals: r.totals, visitors: r.rows, hasMore: r.hasMore };
    },
  );

  app.get(
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
      config: ACCESS.read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      const r = await analytics.views(request.params.projectId, range, { limit: request.query.limit, offset: request.query.offset });
      return { totals: r.totals, views: r.rows, hasMore: r.hasMore };
    },
  );

  app.get(
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
      config: ACCESS.read,
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

  app.get(
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
      config: ACCESS.read,
    },
    async (request, reply) => {
      const range = await rangeOf(request, reply);
      return { agents: await analytics.agents(request.params.projectId, range) };
    },
  );

  // ------------------------------------------------------------------ ingest

  app.post(
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
      config: ACCESS.write,
      onRequest: [onlyMediaTypes('application/json')],
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
        summary: 'Bulk import (raw access log or NDJSON, streamed)',
        description:
          'Used by `folio analytics import --url`. Raw access log (`text/plain`, streamed, optionally `Content-Encoding: gzip`): combined-format or JSON lines as the web server wrote them, read by the same reader as `folio analytics import` without a server; `format` and `map` say how, and lines that are not page views (assets, errors, non-GET) are counted in `skipped`. NDJSON (`application/x-ndjson`, streamed): one object per line `{t, p, ua, ip?, v?, r?, a?, k?}` (t in ms, k a 16-hex content key: a key seen before is not stored again). Every row goes through the same checks as the events API, and a row imported before is not stored again; answered once every row is durable.',
        params: ProjectParams,
        querystring: LogImportQuery,
        response: { 200: ImportResponse, ...errorResponses(400, 401, 403, 413, 415, 429) },
      },
      config: ACCESS.write,
      onRequest: [onlyMediaTypes(LOG_TYPE, ...NDJSON_TYPES)],
      bodyLimit: Number.MAX_SAFE_INTEGER,
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const type = mediaTypeOf(request);
      const stream = request.body as Readable | undefined;
      if (!stream || typeof stream.pipe !== 'function') {
        throw new ApiError(415, 'unsupported_media_type', 'Send a raw log as text/plain, or NDJSON as application/x-ndjson.');
      }
      if (type !== LOG_TYPE) return reply.code(200).send(await analytics.importStream(projectId, stream));
      let fields: Record<string, string[]>;
      try {
        fields = fieldsFrom(request.query.map);
      } catch (err) {
        if (err instanceof ImportError) throw badRequest('invalid_field_map', err.message, [{ message: 'NAME=FIELD', path: '/querystring/map' }]);
        throw err;
      }
      return reply.code(200).send(await analytics.importLog(projectId, logBody(request, stream), { format: request.query.format, fields }));
    },
  );
};
