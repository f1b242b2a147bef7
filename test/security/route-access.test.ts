// Authentication is declared where each route is registered (config.access) and enforced by one
// hook before anything is parsed: this walks Fastify's whole route table and sends every route a
// stranger's request with a bad body and bad parameters. Each answers 401 — or, for a route declared
// public, its public answer, never a 5xx. A new public route must be added to docs/security.md's list
// of anonymous answers on purpose, and a route that declares nothing stops the server from starting.
import Fastify from 'fastify';
import fp from 'fastify-plugin';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { authPlugin } from '../../src/http/auth.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ROOT } from '../helpers/process.ts';

/**
 * The routes reachable without a key or session, as docs/security.md lists them (§1a): each
 * `METHOD /path` of the first column of that table, `{param}` as Fastify's `:param`, a trailing `*`
 * a prefix. The table is the list: a route missing from it, or a row naming no such route, fails.
 */
function documentedAnonymousRoutes(): string[] {
  const doc = readFileSync(path.join(ROOT, 'docs/security.md'), 'utf8');
  const section = doc.slice(doc.indexOf('### 1a.'), doc.indexOf('### 1b.'));
  const rows = section.split('\n').filter((l) => l.startsWith('| `'));
  return rows.flatMap((row) => [...row.split('|')[1].matchAll(/`([A-Z]+ \/[^`]*)`/g)].map((m) => m[1].replace(/\{(\w+)\}/g, ':$1')));
}
const DOCUMENTED = documentedAnonymousRoutes();
const covers = (entry: string, name: string) => (entry.endsWith('*') ? name.startsWith(entry.slice(0, -1)) : name === entry);
const documented = (name: string) => DOCUMENTED.some((d) => covers(d, name));

let server: TestServer;
let projectId: string;
beforeAll(async () => {
  // With a metrics token, so /metrics is there: its own token, a stranger's 401.
  server = await startTestServer({ workers: 0, env: { FOLIO_METRICS_TOKEN: 'route-access-metrics-token' } });
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
      const asGet = method === 'HEAD' ? `GET ${url}` : name; // Fastify adds HEAD beside each GET
      // Neither a key nor a session: listed in docs/security.md with what it reveals.
      if (isPublic || access === 'metrics') expect(documented(asGet), `${name} is reachable without a key or session: list it in docs/security.md §1a`).toBe(true);
      else expect(documented(asGet), `${name} needs a key or a session but docs/security.md §1a lists it`).toBe(false);
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
    // Every row of the list names a route reachable without a key or session.
    const anonymous = routes.filter((r) => r.access === 'public' || r.access === 'metrics').map((r) => `${r.method} ${r.url}`);
    for (const d of DOCUMENTED) expect(anonymous.some((name) => covers(d, name)), `docs/security.md §1a lists ${d}`).toBe(true);
    expect(DOCUMENTED).toEqual(expect.arrayContaining(['GET /api/setup', 'POST /api/setup', 'GET /metrics', 'GET /docs/guides/:name']));
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
