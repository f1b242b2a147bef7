// Serving the built web app: content types, SPA routes, caching, traversal, and a missing build.
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { toApiError } from '../../src/http/app.ts';
import { dashboardHeaders, webAppRoutes } from '../../src/http/routes/web-app.ts';

let server: TestServer;
let root: string;
let app: FastifyInstance;
let missing: FastifyInstance;

async function appFor(webRoot: string): Promise<FastifyInstance> {
  const a = Fastify();
  a.setErrorHandler((err: FastifyError, _req, reply) => {
    const e = toApiError(err);
    void reply.headers(e.headers).code(e.status).send(e.toBody());
  });
  // As the real app: paths the router resolves outside every route get its 404 body.
  a.setNotFoundHandler((_req, reply) => void reply.code(404).send({ error: 'There is no such route.', code: 'route_not_found' }));
  await a.register(dashboardHeaders);
  await a.register(webAppRoutes, { webRoot });
  await a.ready();
  return a;
}

beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
  root = tempDir('folio-web-');
  mkdirSync(path.join(root, 'assets'));
  writeFileSync(path.join(root, 'index.html'), '<!doctype html><title>Folio</title><div id="root"></div>');
  writeFileSync(path.join(root, 'assets', 'index-abc123.js'), 'console.log("folio")');
  writeFileSync(path.join(root, 'assets', 'index-abc123.css'), 'body{}');
  writeFileSync(path.join(root, 'favicon.svg'), '<svg xmlns="http://www.w3.org/2000/svg"/>');
  writeFileSync(path.join(path.dirname(root), 'outside-secret.txt'), 'secret');
  app = await appFor(root);
  missing = await appFor(path.join(root, 'does-not-exist'));
});
afterAll(async () => {
  await app?.close();
  await missing?.close();
  await server?.close();
  rmSync(root, { recursive: true, force: true });
  rmSync(path.join(path.dirname(root), 'outside-secret.txt'), { force: true });
});

describe('dashboard static files', () => {
  it('serves index.html for the app\'s routes with security headers and no caching', async () => {
    for (const url of ['/', '/setup', '/login', '/projects', '/projects/prj_1/keys', '/projects/prj_1/jobs/job_1']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(200);
      expect(res.headers['content-type']).toBe('text/html; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-cache');
      expect(res.headers['content-security-policy']).toContain("script-src 'self'");
      expect(res.headers['x-frame-options']).toBe('DENY');
      expect(res.body).toContain('<div id="root">');
    }
  });

  it('serves hashed assets with their content type and long caching, and answers 304 to a matching ETag', async () => {
    const js = await app.inject({ url: '/assets/index-abc123.js' });
    expect(js.statusCode).toBe(200);
    expect(js.headers['content-type']).toMatch(/^(text|application)\/javascript; charset=utf-8$/);
    expect(js.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(js.body).toBe('console.log("folio")');
    const css = await app.inject({ url: '/assets/index-abc123.css' });
    expect(css.headers['content-type']).toBe('text/css; charset=utf-8');
    const svg = await app.inject({ url: '/favicon.svg' });
    expect(svg.headers['content-type']).toBe('image/svg+xml');
    const again = await app.inject({ url: '/assets/index-abc123.js', headers: { 'if-none-match': js.headers.etag as string } });
    expect(again.statusCode).toBe(304);
    expect(again.body).toBe('');
    const head = await app.inject({ method: 'HEAD', url: '/' });
    expect(head.statusCode).toBe(200);
  });

  it('answers 404 with the error body for unknown assets and path traversal', async () => {
    for (const url of ['/assets/nope.js', '/assets/../../outside-secret.txt', '/assets/%2e%2e/%2e%2e/outside-secret.txt', '/assets/..%2f..%2foutside-secret.txt']) {
      const res = await app.inject({ url });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().code, url).toBe('route_not_found');
      expect(res.body).not.toContain('secret');
    }
  });

  it('says clearly when the dashboard is not built', async () => {
    const res = await missing.inject({ url: '/' });
    expect(res.statusCode).toBe(503);
    expect(res.json()).toEqual({ error: expect.stringContaining('npm run build:web'), code: 'dashboard_not_built' });
  });

  it('is mounted on the real server next to the API', async () => {
    const res = await fetch(`${server.url}/projects/anything`);
    expect([200, 503]).toContain(res.status);
    const api = await fetch(`${server.url}/v2/agent/prj_x/jobs`);
    expect(api.status).toBe(401);
    for (const url of ['/assets/..%2f..%2fpackage.json', '/assets/%2e%2e/%2e%2e/package.json']) {
      const res = await fetch(server.url + url);
      expect(res.status, url).toBe(404);
      expect(await res.text()).not.toContain('"devDependencies"');
    }
    const unknown = await fetch(`${server.url}/nothing-here`);
    expect(unknown.status).toBe(404);
    expect((await unknown.json()).code).toBe('route_not_found');
  });

  it('refuses a NUL in a file path with 400 on the real server, before any file is looked up', async () => {
    for (const url of ['/assets/%00', '/assets/index-abc123.js%00.html', '/assets/..%00/..%00/package.json', '/assets/%2e%2e%2f%00package.json']) {
      const res = await fetch(server.url + url);
      const text = await res.text();
      expect(res.status, url).toBe(400);
      expect(JSON.parse(text), url).toMatchObject({ code: 'invalid_request', details: [{ message: 'contains NUL' }] });
      expect(text).not.toContain('"devDependencies"');
    }
  });
});
