// The dashboard in the browser: the built web app (web/dist) with @fastify/static — hashed assets
// cached for a year, index.html for the app's own routes never cached — and the security headers of
// every dashboard response (helmet), for the pages and the /api routes registered beside them.
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import fastifyStatic from '@fastify/static';
import helmet from '@fastify/helmet';
import { ApiError } from '../../errors.ts';

export const DEFAULT_WEB_ROOT = fileURLToPath(new URL('../../../web/dist/', import.meta.url));

/** The web app's client-side routes: each is answered with index.html. */
const APP_ROUTES = ['/', '/setup', '/login', '/projects', '/projects/*'];

/**
 * Security headers: a strict Content-Security-Policy (scripts only from this origin, no framing, no
 * plugins), X-Frame-Options DENY, nosniff, no referrer. `upgrade-insecure-requests` is left out and
 * HSTS belongs to the TLS proxy in front: plain HTTP on a LAN is a supported deployment.
 */
const HELMET = {
  contentSecurityPolicy: {
    useDefaults: false,
    directives: {
      defaultSrc: ["'self'"],
      scriptSrc: ["'self'"],
      // React and Chart.js set style attributes.
      styleSrc: ["'self'", "'unsafe-inline'"],
      imgSrc: ["'self'", 'data:'],
      connectSrc: ["'self'"],
      fontSrc: ["'self'"],
      frameAncestors: ["'none'"],
      baseUri: ["'self'"],
      formAction: ["'self'"],
      objectSrc: ["'none'"],
    },
  },
  frameguard: { action: 'deny' as const },
  referrerPolicy: { policy: 'no-referrer' as const },
  strictTransportSecurity: false,
};

/** The dashboard's Content-Security-Policy as a header value, from the same directives helmet sends. */
const CSP = Object.entries(HELMET.contentSecurityPolicy.directives)
  .map(([name, values]) => `${name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)} ${values.join(' ')}`)
  .join('; ');

/** Paths that are never the dashboard's: an unknown one there is the API's JSON 404. */
const NOT_DASHBOARD = /^\/(v\d+|api|assets|docs|openapi\.json|metrics|healthz|readyz)(\/|$)/;

/**
 * A browser asking for an address nobody serves gets the dashboard with status 404, whose router
 * shows its own not-found page; API clients (no text/html in Accept) keep the JSON 404. False: not
 * the dashboard's to answer.
 */
export function dashboardNotFound(request: FastifyRequest, reply: FastifyReply, webRoot = DEFAULT_WEB_ROOT): boolean {
  const index = path.join(path.resolve(webRoot), 'index.html');
  const page = (request.method === 'GET' || request.method === 'HEAD') && /\btext\/html\b/.test(request.headers.accept ?? '');
  if (!page || NOT_DASHBOARD.test(request.url.split('?')[0]) || !existsSync(index)) return false;
  void reply
    .code(404)
    .headers({ 'content-type': 'text/html; charset=utf-8', 'content-security-policy': CSP, 'x-frame-options': 'DENY', 'x-content-type-options': 'nosniff', 'referrer-policy': 'no-referrer', 'cache-control': 'no-cache' })
    .send(readFileSync(index));
  return true;
}

/** Helmet's headers for the routes of the plugin that registers this one (the dashboard's scope). */
export const dashboardHeaders = fp(async (app) => {
  await app.register(helmet, HELMET);
});

export const webAppRoutes: FastifyPluginAsync<{ webRoot?: string }> = async (app, opts) => {
  const root = path.resolve(opts.webRoot ?? DEFAULT_WEB_ROOT);
  const hide = { schema: { hide: true } };

  await app.register(fastifyStatic, {
    root: path.join(root, 'assets'),
    prefix: '/assets/',
    // Names carry a content hash: a file never changes under its name.
    immutable: true,
    maxAge: '365d',
    index: false,
    schemaHide: true,
  });

  const index = (reply: FastifyReply) => {
    // Checked per request: the build may land after the server started (npm run build:web).
    if (!existsSync(path.join(root, 'index.html'))) {
      throw new ApiError(503, 'dashboard_not_built', 'The dashboard is not built; run "npm run build:web" (npm ci does it).');
    }
    return reply.header('cache-control', 'no-cache').sendFile('index.html', root, { cacheControl: false });
  };
  for (const route of APP_ROUTES) app.get(route, hide, (_request, reply) => index(reply));
  app.get('/favicon.svg', hide, (_request, reply) => reply.sendFile('favicon.svg', root, { maxAge: '1d' }));
};
