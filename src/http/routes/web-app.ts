// The dashboard in the browser: the built web app (web/dist) with @fastify/static — hashed assets
// cached for a year, index.html for the app's own routes never cached — and the security headers of
// every dashboard response (helmet), for the pages and the /api routes registered beside them.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import fp from 'fastify-plugin';
import type { FastifyPluginAsync, FastifyReply } from 'fastify';
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
