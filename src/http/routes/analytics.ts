// Visitor analytics API for key holders: the reports (src/analytics/reports/, one route each), the
// server-side events endpoint and the bulk import (raw access logs, NDJSON). The
// browser script and its keyless collect endpoint are in analytics-browser.ts.
import { createGunzip } from 'node:zlib';
import type { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { Static, TSchema } from 'typebox';
import type { AnalyticsReadLimit } from '../../analytics/read-limit.ts';
import { ApiError, badRequest, rateLimitHeaders } from '../../errors.ts';
import { errorResponses, ProjectParams } from '../../contracts/common.ts';
import { EventsBody, EventsResponse, ImportResponse, LogImportQuery, type RangeQuery, type TimeseriesQuery } from '../../contracts/analytics.ts';
import { DAY_MS, MAX_EVENTS_PER_REQUEST, parseRange, type Range } from '../../analytics/index.ts';
import { fieldsFrom } from '../../analytics/log-import.ts';
import { ImportError } from '../../analytics/import-error.ts';
import type { Report, ReportParams } from '../../analytics/reports/report.ts';
import type { ClassificationRules } from '../../analytics/classify.ts';
import { agents } from '../../analytics/reports/agents.ts';
import { aiCompanies, knownCompany } from '../../analytics/reports/ai-companies.ts';
import { notFound } from '../../analytics/reports/not-found.ts';
import { referrers } from '../../analytics/reports/referrers.ts';
import { timeseries } from '../../analytics/reports/timeseries.ts';
import { views } from '../../analytics/reports/views.ts';
import { visitors } from '../../analytics/reports/visitors.ts';
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

const tags = ['Analytics'];

/** Each route takes its own media types (the stream parsers are not for the events API). */
const onlyMediaTypes = (...types: string[]) =>
  async function checkMediaType(request: FastifyRequest) {
    const type = mediaTypeOf(request);
    if (type !== '' && !types.includes(type)) throw new ApiError(415, 'unsupported_media_type', `Send the body as ${types.join(' or ')}.`);
  };

/**
 * The query's date range, checked (by `check` too, when the route has more to say), then one read
 * counted against the project's hourly limit: a refused request costs no read.
 */
async function rangeOf(
  reads: AnalyticsReadLimit,
  request: { params: { projectId: string }; query: { dateFrom?: string; dateTo?: string } },
  reply: FastifyReply,
  check: (range: Range) => void = () => {},
): Promise<Range> {
  const range = parseRange(request.query);
  check(range);
  const info = await reads.take(request.params.projectId);
  if (info) reply.headers(rateLimitHeaders(info));
  return range;
}

type App = Parameters<FastifyPluginAsyncTypebox>[0];

/**
 * A report's route, `GET /v1/analytics/{projectId}/<name>`: read access, the report's query and
 * answer (its schemas), the usual refusals; each call is one read of the project's hourly limit.
 */
function reportRoute<Q extends TSchema, R extends TSchema, Result>(
  app: App,
  report: Report<Q, R, Result>,
  check?: (range: Range, query: Static<Q>, rules: ClassificationRules) => void,
): void {
  const response = { 200: report.response, ...errorResponses(400, 401, 403, 429) };
  app.get<{ Params: Static<typeof ProjectParams>; Querystring: Static<Q> }>(
    `/v1/analytics/:projectId/${report.name}`,
    { schema: { tags, operationId: reportOperationId(report.name), summary: report.summary, description: report.description, params: ProjectParams, querystring: report.query, response }, config: ACCESS.read },
    async (request, reply) => {
      const query = request.query as Static<Q> & RangeQuery;
      const range = await rangeOf(app.analyticsReads, { params: request.params, query }, reply, (r) => check?.(r, query, app.analytics.rules));
      // The query's other parameters (page, interval) go to the report as they are.
      const params = { ...query, projectId: request.params.projectId, range } as ReportParams<Q>;
      return report.wire(await app.analytics.run(report, params));
    },
  );
}

/** A report's operationId from its name (not-found → getNotFound), so a new report needs no entry in operation-ids.ts. */
const reportOperationId = (name: string) => `get${name.replace(/(^|-)([a-z])/g, (_, _dash: string, c: string) => c.toUpperCase())}`;

/** Hourly series are limited to 31 days. */
function hourlyWithin31Days(range: Range, query: TimeseriesQuery): void {
  if (query.interval === 'hour' && (range.from === null || range.to === null || range.to - range.from > MAX_HOUR_RANGE_MS)) {
    throw badRequest('range_too_large', 'interval=hour needs dateFrom and dateTo at most 31 days apart.', [
      { message: 'hourly series are limited to 31 days', path: '/querystring/interval' },
    ]);
  }
}

/** The reports (src/analytics/reports/), one line each, in the API reference's order. */
const analyticsReports: FastifyPluginAsyncTypebox = async (app) => {
  reportRoute(app, visitors);
  reportRoute(app, views);
  reportRoute(app, timeseries, hourlyWithin31Days);
  reportRoute(app, referrers);
  reportRoute(app, notFound);
  reportRoute(app, agents);
  reportRoute(app, aiCompanies, knownCompany);
};

/** Server-side events, and the streamed bulk import (raw access logs, NDJSON). */
const analyticsIngest: FastifyPluginAsyncTypebox = async (app) => {
  const { analytics } = app;
  // Bulk bodies are handed over as streams, never buffered whole: raw logs (read by the log reader's
  // worker thread) and NDJSON.
  app.addContentTypeParser([...NDJSON_TYPES, LOG_TYPE], (_request, payload, done) => done(null, payload));

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
          'Used by `folio analytics import --url`. Raw access log (`text/plain`, streamed, optionally `Content-Encoding: gzip`): combined-format or JSON lines as the web server wrote them, read by the same reader as `folio analytics import` without a server; `format` and `map` say how, lines that answered 404 or 410 for a document are not-found views, and lines that are neither page views nor not-found views (assets, other errors, redirects, non-GET) are counted in `skipped`. NDJSON (`application/x-ndjson`, streamed): one object per line `{t, p, ua, ip?, v?, r?, a?, k?, s?}` (t in ms, k a 16-hex content key: a key seen before is not stored again; s the HTTP status, 404/410 making it a not-found view). Every row goes through the same checks as the events API, and a row imported before is not stored again; answered once every row is durable.',
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

export const analyticsRoutes = fp(
  async (app) => {
    await app.register(analyticsReports);
    await app.register(analyticsIngest);
  },
  { name: 'analytics-routes', dependencies: ['analytics', 'analyticsReads', 'folio-auth'], encapsulate: true },
);
