// The Fastify application: validation, errors, docs, metrics and every area's routes. Not listening;
// see server.ts.
import { randomUUID } from 'node:crypto';
import Fastify, { LogController, type FastifyBaseLogger, type FastifyError, type FastifyInstance, type FastifySchema } from 'fastify';
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { registerServices, type HttpServices } from './services.ts';
import { ApiError, type ErrorBody, type ErrorDetail } from '../errors.ts';
import { docLink, ErrorBody as ErrorSchema } from '../contracts/common.ts';
import { Job, JobChanges, WebhookDelivery } from '../contracts/jobs.ts';
import { JobEventSchema } from '../contracts/job-events.ts';
import { registerMetrics } from './metrics.ts';
import { nulPath } from './nul.ts';
import { jobRoutes } from './routes/jobs.ts';
import { suggestionRoutes } from './routes/suggestions.ts';
import { jobEventRoutes } from './routes/job-events.ts';
import { analyticsRoutes } from './routes/analytics.ts';
import { browserScriptRoute, collectRoutes } from './routes/analytics-browser.ts';
import { dashboardRoutes } from './routes/dashboard.ts';
import { dashboardHeaders, dashboardNotFound, webAppRoutes } from './routes/web-app.ts';
import { nameOperations } from './operation-ids.ts';
import { ACCESS, authPlugin, publicScope } from './auth.ts';
import { httpErrorOf } from './error-status.ts';
import { triggerRoutes } from './routes/triggers.ts';
import { triggerSettingsRoutes } from './routes/trigger-settings.ts';
import { guideRoutes } from './routes/guides.ts';
import { FOLIO_VERSION } from '../version.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

export interface AppOptions {
  /** Log every request (off in tests and benchmarks). */
  logRequests?: boolean;
  /** The built dashboard (web/dist by default). */
  webRoot?: string;
}

/**
 * Bodies are validated strictly (no coercion, unknown fields refused); query and path values are
 * coerced, and a parameter given once is an array of one where the schema wants an array.
 */
function validators() {
  const common = { allErrors: false, removeAdditional: false, useDefaults: true, strict: false } as const;
  const body = addFormats(new Ajv({ ...common, coerceTypes: false }));
  const query = addFormats(new Ajv({ ...common, coerceTypes: 'array' }));
  return { body, query };
}

function detailsOf(err: FastifyError): ErrorDetail[] {
  const context = (err as { validationContext?: string }).validationContext ?? 'body';
  return (err.validation ?? []).map((v) => {
    const where = `/${context}${v.instancePath}`;
    if (v.keyword === 'additionalProperties') {
      const field = (v.params as { additionalProperty?: string }).additionalProperty;
      return { message: `unknown field "${field}"`, path: `${where}/${field}` };
    }
    if (v.keyword === 'required') {
      const field = (v.params as { missingProperty?: string }).missingProperty;
      return { message: `"${field}" is required`, path: `${where}/${field}` };
    }
    return { message: `${v.instancePath ? v.instancePath.slice(1) : context} ${v.message ?? 'is invalid'}`, path: where };
  });
}

function validationError(err: FastifyError): ApiError {
  const details = detailsOf(err);
  const first = details[0]?.message ?? 'the request is invalid';
  const context = (err as { validationContext?: string }).validationContext ?? 'body';
  const where = context === 'querystring' ? 'query parameter' : context === 'params' ? 'path parameter' : context === 'headers' ? 'header' : 'body';
  return new ApiError(400, 'invalid_request', `Invalid ${where}: ${first}.`, { details });
}

/** Maps anything thrown in a request to the API's error body. */
export function toApiError(err: FastifyError | ApiError | Error): ApiError {
  if (err instanceof ApiError) return err;
  const domain = httpErrorOf(err);
  if (domain) return domain;
  const fe = err as FastifyError;
  if (fe.validation) return validationError(fe);
  switch (fe.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new ApiError(413, 'payload_too_large', 'The request body is larger than this server accepts.');
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new ApiError(415, 'unsupported_media_type', 'Send the body as JSON with "Content-Type: application/json".');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new ApiError(400, 'invalid_json', 'The body is not valid JSON.');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new ApiError(400, 'invalid_json', 'The body is empty; send a JSON object.');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new ApiError(400, 'invalid_request', 'The Content-Length header does not match the body.');
  }
  if (fe.statusCode === 400 && err instanceof SyntaxError) {
    return new ApiError(400, 'invalid_json', 'The body is not valid JSON.');
  }
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError(fe.statusCode, 'bad_request', 'The request could not be processed as sent.');
  }
  return new ApiError(500, 'internal_error', 'Something went wrong on our side; it has been logged.');
}

/** Every route with its schema, hidden ones included (the fuzz test sends hostile input to each). */
export interface CatalogRoute {
  method: string;
  url: string;
  schema: FastifySchema | undefined;
}

declare module 'fastify' {
  interface FastifyInstance {
    routeCatalog: CatalogRoute[];
  }
}

/** Route patterns seen at registration, to tell 405 (known path, other method) from 404; and the catalog. */
function methodIndex(app: FastifyInstance) {
  const routes: { re: RegExp; methods: Set<string> }[] = [];
  const catalog: CatalogRoute[] = [];
  app.decorate('routeCatalog', catalog);
  app.addHook('onRoute', (route) => {
    for (const method of Array.isArray(route.method) ? route.method : [route.method]) catalog.push({ method, url: route.url, schema: route.schema });
    const pattern = '^' + route.url.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/\/:[^/]+/g, '/[^/]+').replace(/\*/g, '.*') + '/?$';
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    let entry = routes.find((r) => r.re.source === pattern);
    if (!entry) routes.push((entry = { re: new RegExp(pattern), methods: new Set() }));
    for (const m of methods) entry.methods.add(m);
  });
  return (path: string): string[] => {
    const allowed = new Set<string>();
    for (const r of routes) if (r.re.test(path)) for (const m of r.methods) allowed.add(m);
    return [...allowed];
  };
}

/** Fastify with Folio's limits: body size, request ids, trusted proxies, timeouts for hostile clients. */
function createFastify(config: HttpServices['config'], log: HttpServices['log'], opts: AppOptions): FastifyInstance {
  return Fastify({
    loggerInstance: log as unknown as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: !opts.logRequests }),
    bodyLimit: config.bodyLimitBytes,
    requestIdHeader: 'x-request-id',
    genReqId: () => randomUUID(),
    // A hop count becomes the function form, which Fastify's types accept.
    trustProxy: typeof config.trustProxy === 'number' ? ((hops: number) => (_addr: string, hop: number) => hop < hops)(config.trustProxy) : config.trustProxy,
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    // Hostile clients (docs/security.md): headers within headersMs, the whole request within
    // requestMs (Node answers 408 and closes), no connection silent for longer than idleMs.
    connectionTimeout: config.timeouts.idleMs,
    keepAliveTimeout: config.timeouts.keepAliveMs,
    requestTimeout: config.timeouts.requestMs,
    http: {
      headersTimeout: config.timeouts.headersMs,
      // Also here: Node checks headersTimeout <= requestTimeout when it creates the server.
      requestTimeout: config.timeouts.requestMs,
      // How often Node looks for requests past those limits (its default is 30 s).
      connectionsCheckingInterval: Math.min(30_000, Math.max(100, Math.floor(Math.min(config.timeouts.headersMs, config.timeouts.requestMs) / 4))),
    },
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 500 },
  });
}

/** Every error as the API's body: thrown ones by their code, unknown routes as 404, known paths with another method as 405. */
function answerErrors(app: FastifyInstance, webRoot: string | undefined): void {
  const allowedMethods = methodIndex(app);
  app.setErrorHandler((err: FastifyError, request, reply) => {
    const apiErr = toApiError(err);
    if (apiErr.status >= 500) request.log.error({ err }, 'request failed');
    reply.headers(apiErr.headers).code(apiErr.status).send(apiErr.toBody());
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    const methods = allowedMethods(path);
    // A route of this method that found nothing (e.g. a missing static file) is a 404, not a 405.
    const allowed = methods.includes(request.method) ? [] : methods;
    if (allowed.length > 0) {
      const body: ErrorBody = { error: `${request.method} is not supported here; use ${allowed.join(' or ')}.`, code: 'method_not_allowed' };
      return reply.code(405).header('allow', allowed.join(', ')).send(body);
    }
    if (dashboardNotFound(request, reply, webRoot)) return reply;
    const body: ErrorBody = { error: `There is no route ${request.method} ${path}.`, code: 'route_not_found' };
    return reply.code(404).send(body);
  });
}

/** Folio's mark (the dashboard's favicon) and the mark with the name, for the reference UI's top bar. */
const MARK = '<path d="M10 7h12v4h-8v4h7v4h-7v6h-4z" fill="#fff"/>';
const FAVICON_SVG = `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 32 32"><rect width="32" height="32" rx="7" fill="#1f4fd1"/>${MARK}</svg>`;
const LOGO_SVG =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 140 32" width="140" height="32"><rect width="32" height="32" rx="7" fill="#1f4fd1"/>${MARK}` +
  '<text x="42" y="23" font-family="system-ui, sans-serif" font-size="20" font-weight="600" fill="#fff">Folio API</text></svg>';

/** The OpenAPI document and its reference UI at /docs, under Folio's name and version. */
async function registerReference(app: FastifyInstance): Promise<void> {
  for (const schema of [ErrorSchema, Job, JobEventSchema, WebhookDelivery, JobChanges]) app.addSchema(schema);
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Folio API',
        version: FOLIO_VERSION,
        description: `Agent jobs on your docs repository, and visitor analytics that tell humans from AI. Errors are \`{error, code, details?}\`; see ${docLink('errors')}.`,
      },
      components: { securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer', description: 'An admin API key: folio_…' } } },
      security: [{ bearerAuth: [] }],
    },
    refResolver: { buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) ?? `def-${i}` },
  });
  await app.register(publicScope(swaggerUi), {
    routePrefix: '/docs',
    uiConfig: { docExpansion: 'list', deepLinking: true },
    theme: {
      title: `Folio API ${FOLIO_VERSION} reference`,
      favicon: [{ filename: 'folio.svg', rel: 'icon', sizes: 'any', type: 'image/svg+xml', content: FAVICON_SVG }],
    },
    logo: { type: 'image/svg+xml', content: LOGO_SVG, href: '/docs', target: '_self' },
    // The reference UI's own files only; plain HTTP stays usable (no upgrade-insecure-requests).
    staticCSP: "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; font-src 'self' data:; frame-ancestors 'none'; object-src 'none'; base-uri 'self'",
  });
  app.get('/openapi.json', { schema: { hide: true }, config: ACCESS.public }, async () => app.swagger());
}

/** Liveness (the process answers) and readiness (the store is reachable and migrated). */
function registerHealth(app: FastifyInstance): void {
  app.get('/healthz', { schema: { hide: true }, config: ACCESS.public }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true }, config: ACCESS.public }, async (_req, reply) => {
    if (await app.storeReady()) return { status: 'ready' };
    return reply.code(503).send({ error: 'The store is not reachable or not migrated yet.', code: 'not_ready' } satisfies ErrorBody);
  });
}

/** Every area's routes; the dashboard's pages and /api in one scope with the pages' security headers. */
async function registerRoutes(app: FastifyInstance, opts: AppOptions): Promise<void> {
  await app.register(jobRoutes);
  await app.register(suggestionRoutes);
  await app.register(jobEventRoutes);
  await app.register(analyticsRoutes);
  await app.register(browserScriptRoute);
  await app.register(collectRoutes, { prefix: '/v1/analytics/:projectId/collect' });
  await app.register(triggerRoutes);
  await app.register(async (dashboard) => {
    await dashboard.register(dashboardHeaders);
    await dashboard.register(dashboardRoutes);
    await dashboard.register(triggerSettingsRoutes);
    await dashboard.register(publicScope(webAppRoutes), { webRoot: opts.webRoot });
  });
  await app.register(guideRoutes);
}

export async function buildApp(services: HttpServices, opts: AppOptions = {}): Promise<FastifyInstance> {
  const app = createFastify(services.config, services.log, opts);
  const { body, query } = validators();
  app.setValidatorCompiler(({ schema, httpPart }) => (httpPart === 'body' ? body.compile(schema) : query.compile(schema)));
  app.removeContentTypeParser('text/plain');
  app.addHook('onRequest', async (request, reply) => {
    request.receivedAt = performance.now();
    reply.header('x-request-id', request.id).header('x-content-type-options', 'nosniff');
  });
  answerErrors(app, opts.webRoot);
  nameOperations(app);

  // First: its onRoute check and its one onRequest hook must see every route (docs/security.md §1).
  await registerServices(app, services);
  await app.register(authPlugin, { recheckMs: services.config.streams.recheckMs, metricsToken: services.config.metricsToken });
  // After authentication, so a stranger learns nothing from it either. Only a %00 in the URL decodes
  // to NUL in a path or query value (both are parsed by now); bodies are the routes' business (a
  // batch of events rejects such an event alone).
  app.addHook('onRequest', async (request) => {
    if (!request.url.includes('%00')) return;
    const where = nulPath(request.params, '/params') ?? nulPath(request.query, '/query');
    if (where) throw new ApiError(400, 'invalid_request', 'Text must not contain NUL characters (\\u0000).', { details: [{ message: 'contains NUL', path: where }] });
  });

  await registerReference(app);
  registerMetrics(app);
  registerHealth(app);
  await registerRoutes(app, opts);
  return app;
}
