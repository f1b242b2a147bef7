// Authentication is declared where each route is registered (config.access) and enforced by one
// hook before anything is parsed: this walks Fastify's whole route table and sends every route a
// stranger's request with a bad body and bad parameters. Each answers 401 — or, for a route declared
// public, its public answer, never a 5xx. A new public route must be added to PUBLIC below on purpose,
// and a route that declares nothing stops the server from starting.
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { authPlugin } from '../../src/http/auth.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

/** The routes anyone may call (method and route pattern). */
const PUBLIC = new Set([
  'GET /healthz',
  'GET /readyz',
  'GET /metrics',
  'GET /openapi.json',
  'GET /v1/analytics/script.js',
  'POST /v1/analytics/:projectId/collect',
  'OPTIONS /v1/analytics/:projectId/collect*',
  'POST /v1/triggers/:projectId/github',
  'POST /v1/triggers/:projectId/gitlab',
  'GET /api/setup',
  'POST /api/setup',
  'POST /api/login',
  'GET /api/session',
]);
/** Route prefixes of plugins declared public as a whole: the reference UI and the dashboard's pages. */
const PUBLIC_PREFIXES = ['GET /docs', 'GET /projects', 'GET /keys', 'GET /usage', 'GET /setup', 'GET /login', 'GET /assets', 'GET /favicon.svg', 'GET /'];

let server: TestServer;
let projectId: string;
beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
  projectId = await server.createProject();
});
afterAll(async () => server?.close());

function fill(url: string, value: (name: string) => string): string {
  return url.replace(/:(\w+)/g, (_m, name: string) => value(name)).replace(/\*$/, 'x');
}

describe('every route', () => {
  it('declares its access, and every one that is not public answers a stranger 401 before reading anything', async () => {
    const routes = server.app.routeAccess();
    expect(routes.length).toBeGreaterThan(40);
    expect(routes.filter((r) => r.access === undefined)).toEqual([]);
    const checked: string[] = [];
    for (const { method, url, access } of routes) {
      const name = `${method} ${url}`;
      const isPublic = access === 'public';
      if (isPublic) {
        const asGet = method === 'HEAD' ? `GET ${url}` : name; // Fastify adds HEAD beside each GET
        expect(PUBLIC.has(asGet) || PUBLIC_PREFIXES.some((p) => asGet === p || asGet.startsWith(`${p}/`) || asGet.startsWith(`${p}*`)), `${name} is public`).toBe(true);
      }
      // Bad parameters: an over-long id and one with a NUL; a bad JSON body of the wrong type.
      for (const params of [(n: string) => (n === 'projectId' ? projectId : 'x'.repeat(300)), () => '%00', () => 'job_nope']) {
        const res = await fetch(server.url + fill(url, params), {
          method,
          headers: method === 'GET' || method === 'HEAD' ? {} : { 'content-type': 'application/json', 'content-length': '9' },
          body: method === 'GET' || method === 'HEAD' ? undefined : '{"bad": }',
        });
        await res.arrayBuffer();
        expect(res.status, name).toBeLessThan(500);
        if (!isPublic) {
          expect(res.status, name).toBe(401);
          if (method !== 'HEAD') expect(res.headers.get('www-authenticate') ?? res.headers.get('content-type'), name).toBeTruthy();
        }
      }
      checked.push(name);
    }
    // The two routes that used to validate before they authenticated.
    expect(checked).toContain('GET /v2/agent/:projectId/usage');
    expect(checked).toContain('GET /v2/agent/:projectId/job/:id/changes');
  });

  it('/usage and /changes give a stranger 401, not 400, for bad input', async () => {
    for (const path of [`/v2/agent/${projectId}/usage?days=-5`, `/v2/agent/${projectId}/job/${'x'.repeat(200)}/changes`]) {
      const res = await server.api('GET', path);
      expect(res.status, path).toBe(401);
      expect(res.body.code).toBe('missing_api_key');
    }
  });
});

describe('a route without an access declaration', () => {
  it('stops the server at start, naming it', async () => {
    const app = Fastify();
    for (const name of ['keys', 'users', 'projects']) await app.register(fp(async (s) => void s.decorate(name, { sessions: {} }), { name }));
    await app.register(authPlugin, { recheckMs: 2_000 });
    app.get('/forgotten', async () => 'oops');
    await expect(app.ready()).rejects.toThrow('Routes without an access declaration (config.access): GET /forgotten');
  });
});
