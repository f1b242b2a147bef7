// The HTTP server under hostile clients: authentication before the body, timeouts that cut slow and
// stalled clients, bounded numbers, a cap on live event streams, security headers, and a shutdown
// that ends even with stalled clients while releasing job leases.
import net from 'node:net';
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { runCli, startProcess } from '../helpers/process.ts';
import { backendDatabases } from '../helpers/backend.ts';
import { setUp } from '../dashboard/session.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';

/**
 * Sends raw bytes on a new connection (`trickle` more, one every 200 ms, until it closes); resolves
 * with everything the server wrote, whether it closed the connection, and after how many ms — once it
 * closes, once `until` matches, or after `waitMs`.
 */
function raw(url: string, chunks: string[], waitMs = 15_000, until?: RegExp, trickle?: string): Promise<{ text: string; closed: boolean; ms: number }> {
  const { hostname, port } = new URL(url);
  const start = performance.now();
  return new Promise((resolve) => {
    const socket = net.connect(Number(port), hostname);
    let text = '';
    let drip: NodeJS.Timeout | undefined;
    const settle = (closed: boolean) => {
      clearTimeout(timer);
      clearInterval(drip);
      resolve({ text, closed, ms: performance.now() - start });
    };
    const timer = setTimeout(() => {
      socket.destroy();
      settle(false);
    }, waitMs);
    socket.on('data', (d) => {
      text += d.toString();
      if (until?.test(text)) {
        socket.destroy();
        settle(false);
      }
    });
    socket.on('close', () => settle(true));
    socket.on('error', () => undefined);
    socket.on('connect', () => {
      for (const c of chunks) socket.write(c);
      if (trickle !== undefined) drip = setInterval(() => socket.write(trickle), 200);
    });
  });
}

describe('authentication before the body', () => {
  let server: TestServer;
  let projectId: string;
  beforeAll(async () => {
    server = await startTestServer({ jobHandler: new ScriptedHandler() });
    projectId = await server.createProject();
  });
  afterAll(() => server.close());

  it('a stranger gets 401 whatever the body: no 400, 413 or 415 details', async () => {
    const cases: { path: string; body: string; type: string }[] = [
      { path: `/v2/agent/${projectId}/job`, body: '{not json', type: 'application/json' },
      { path: `/v2/agent/${projectId}/job`, body: JSON.stringify({ prompt: '' }), type: 'application/json' },
      { path: `/v2/agent/${projectId}/job`, body: 'x'.repeat(2 * 1024 * 1024), type: 'application/json' },
      { path: `/v2/agent/${projectId}/job`, body: '<a/>', type: 'application/xml' },
      { path: `/v1/analytics/${projectId}/events`, body: 'text', type: 'text/plain' },
      { path: `/v1/analytics/${projectId}/import`, body: 'x'.repeat(100), type: 'application/x-ndjson' },
    ];
    for (const c of cases) {
      const res = await server.api('POST', c.path, { body: c.body, headers: { 'content-type': c.type } });
      expect(res.status, `${c.path} ${c.type}`).toBe(401);
      expect(res.body.code).toBe('missing_api_key');
      expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    const wrongKey = await server.api('POST', `/v2/agent/${projectId}/job`, { body: '{not json', headers: { authorization: 'Bearer folio_' + 'x'.repeat(40) } });
    expect(wrongKey.status).toBe(401);
  });

  it("the dashboard's /api routes give a stranger 401 whatever the body, and wait for no body", async () => {
    // Every route that needs a signed-in operator: all of /api but the sign-in itself.
    const anonymous = new Set(['POST /api/setup', 'GET /api/setup', 'POST /api/login', 'GET /api/session']);
    const routes = server.app.routeCatalog.filter((r) => r.url.startsWith('/api/') && !['GET', 'HEAD'].includes(r.method) && !anonymous.has(`${r.method} ${r.url}`));
    expect(routes.map((r) => `${r.method} ${r.url}`)).toEqual(expect.arrayContaining(['POST /api/projects', 'PATCH /api/projects/:projectId', 'POST /api/keys', 'PUT /api/projects/:projectId/triggers', 'POST /api/logout']));
    const bodies = [
      { body: '{not json', type: 'application/json' },
      { body: JSON.stringify({ name: '' }), type: 'application/json' },
      { body: JSON.stringify({ name: 'x'.repeat(2 * 1024 * 1024) }), type: 'application/json' },
      { body: '<a/>', type: 'application/xml' },
      { body: 'name=x', type: 'text/plain' },
    ];
    for (const route of routes) {
      const url = route.url.replace(/:([A-Za-z]+)/g, (_m, name: string) => (name === 'projectId' ? projectId : 'x'));
      for (const c of bodies) {
        const res = await server.api(route.method, url, { body: c.body, headers: { 'content-type': c.type } });
        expect(res.status, `${route.method} ${url} ${c.type} ${c.body.length}`).toBe(401);
        expect(res.body.code).toBe('not_signed_in');
      }
      const { text } = await raw(
        server.url,
        [`${route.method} ${url} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"name":`],
        10_000,
        /not_signed_in.*\}/,
      );
      expect(text, `${route.method} ${url}`).toMatch(/^HTTP\/1.1 401/);
    }
  });

  it('answers 401 without waiting for a body that never comes', async () => {
    const { text } = await raw(
      server.url,
      [`POST /v2/agent/${projectId}/job HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n{"prompt":`],
      10_000,
      /missing_api_key.*\}/,
    );
    expect(text).toMatch(/^HTTP\/1.1 401/);
    expect(text).toContain('missing_api_key');
  });
});

describe('timeouts', () => {
  /**
   * Each test runs a server whose timeouts are all a minute but the one it is about, set to a second
   * or less: a connection cut within a few seconds was cut by that setting and no other.
   */
  const MINUTE = { FOLIO_HEADERS_TIMEOUT: '60s', FOLIO_REQUEST_TIMEOUT: '60s', FOLIO_IDLE_TIMEOUT: '60s', FOLIO_KEEPALIVE_TIMEOUT: '60s' };
  /** Well below the minute of the other settings, generous above the one under test. */
  const WITHIN_MS = 5_000;
  async function withServer(small: Record<string, string>, test: (server: TestServer, projectId: string, key: string) => Promise<void>): Promise<void> {
    const server = await startTestServer({ jobHandler: new ScriptedHandler(), env: { ...MINUTE, ...small } });
    try {
      const projectId = await server.createProject();
      await test(server, projectId, await server.createKey(projectId));
    } finally {
      await server.close();
    }
  }

  it('FOLIO_HEADERS_TIMEOUT cuts off a client whose headers never finish', async () => {
    await withServer({ FOLIO_HEADERS_TIMEOUT: '500ms' }, async (server, projectId, key) => {
      const { closed, ms } = await raw(server.url, [`GET /v2/agent/${projectId}/jobs HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\n`], 30_000);
      expect(closed).toBe(true);
      expect(ms).toBeLessThan(WITHIN_MS);
    });
  });

  it('FOLIO_REQUEST_TIMEOUT cuts off a client that sends its headers and keeps the body coming too slowly, with 408', async () => {
    await withServer({ FOLIO_HEADERS_TIMEOUT: '1s', FOLIO_REQUEST_TIMEOUT: '1s' }, async (server, projectId, key) => {
      // A byte every 200 ms: never idle, headers long complete; only the request's deadline ends it.
      const { text, closed, ms } = await raw(
        server.url,
        [`POST /v2/agent/${projectId}/job HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n{"prompt":"`],
        30_000,
        undefined,
        'x',
      );
      expect(closed).toBe(true);
      expect(ms).toBeLessThan(WITHIN_MS);
      expect(text).toMatch(/^HTTP\/1.1 408/);
      expect((await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs).toEqual([]);
    });
  });

  it('FOLIO_IDLE_TIMEOUT closes a connection that goes silent mid-request', async () => {
    await withServer({ FOLIO_IDLE_TIMEOUT: '1s' }, async (server, projectId, key) => {
      const { closed, ms } = await raw(
        server.url,
        [`POST /v2/agent/${projectId}/job HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"prompt":`],
        30_000,
      );
      expect(closed).toBe(true);
      expect(ms).toBeLessThan(WITHIN_MS);
      expect((await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs).toEqual([]);
    });
  });

  it('FOLIO_KEEPALIVE_TIMEOUT closes a kept-alive connection that stays idle after its response', async () => {
    await withServer({ FOLIO_KEEPALIVE_TIMEOUT: '300ms' }, async (server) => {
      const { text, closed, ms } = await raw(server.url, [`GET /healthz HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n`], 30_000);
      expect(text).toMatch(/^HTTP\/1.1 200/);
      expect(closed).toBe(true);
      // Node keeps the socket about a second past the setting (its keep-alive buffer): still far below a minute.
      expect(ms).toBeLessThan(WITHIN_MS);
    });
  });
});

describe('bounded numbers and streams', () => {
  let server: TestServer;
  let projectId: string;
  let key: string;
  let jobId: string;
  beforeAll(async () => {
    server = await startTestServer({ jobHandler: new ScriptedHandler(), env: { FOLIO_MAX_STREAMS_PER_KEY: '2', FOLIO_MAX_STREAMS_PER_PROJECT: '3' } });
    projectId = await server.createProject();
    key = await server.createKey(projectId);
    jobId = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body.id;
  });
  afterAll(() => server.close());

  it('refuses infinite, huge, negative and fractional numbers with 400, never 500', async () => {
    const events = `/v2/agent/${projectId}/job/${jobId}/events`;
    const urls = [
      ...['Infinity', '-Infinity', '1e309', '-1', '9007199254740993', '2147483648', '1.5', 'NaN', 'x'].map((v) => `${events}?after=${encodeURIComponent(v)}`),
      `${events}?limit=1e309`,
      `/v2/agent/${projectId}/jobs?limit=Infinity`,
      `/v1/analytics/${projectId}/visitors?offset=1e309`,
      `/v1/analytics/${projectId}/visitors?offset=10000001`,
      `/v1/analytics/${projectId}/visitors?limit=-0.5`,
      `/v1/analytics/${projectId}/views?dateFrom=275760-09-14`,
      `/v1/analytics/${projectId}/timeseries?dateFrom=9999-99-99`,
    ];
    for (const url of urls) {
      const res = await server.api('GET', url, { key });
      expect(res.status, `${url}: ${res.text}`).toBe(400);
      expect(res.body.code).toMatch(/^invalid_/);
    }
    for (const id of ['99999999999999999999999', '-1', '1e3', '2147483648']) {
      const res = await server.api('GET', events, { key, headers: { accept: 'text/event-stream', 'last-event-id': id } });
      expect(res.status, id).toBe(400);
    }
  });

  it('caps live event streams per key and per project with 429', async () => {
    const other = await server.createKey(projectId);
    const streams: AbortController[] = [];
    const open = async (k: string) => {
      const controller = new AbortController();
      const res = await fetch(`${server.url}/v2/agent/${projectId}/job/${jobId}/events`, {
        headers: { authorization: `Bearer ${k}`, accept: 'text/event-stream' },
        signal: controller.signal,
      });
      if (res.status === 200) streams.push(controller);
      else await res.text();
      return res;
    };
    try {
      expect((await open(key)).status).toBe(200);
      expect((await open(key)).status).toBe(200);
      const perKey = await open(key);
      expect(perKey.status).toBe(429);
      expect(perKey.headers.get('retry-after')).toBe('5');
      expect((await open(other)).status).toBe(200);
      const perProject = await open(other);
      expect(perProject.status).toBe(429);
      // Pages of events are not streams: still served.
      expect((await server.api('GET', `/v2/agent/${projectId}/job/${jobId}/events`, { key })).status).toBe(200);
      // A closed stream frees its place.
      streams.shift()!.abort();
      await eventually(async () => {
        const res = await open(key);
        return res.status === 200;
      });
    } finally {
      for (const s of streams) s.abort();
    }
  });
});

describe('security headers', () => {
  let server: TestServer;
  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
  });
  afterAll(() => server.close());

  it('the dashboard has a strict CSP, no framing, nosniff and no referrer; the API has nosniff', async () => {
    const page = await fetch(`${server.url}/projects`);
    await page.text();
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain('unsafe-eval');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    expect(page.headers.get('x-content-type-options')).toBe('nosniff');
    expect(page.headers.get('referrer-policy')).toBe('no-referrer');
    const b = await setUp(server);
    const api = await b.req('GET', '/api/projects');
    expect(api.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    const job = await server.api('GET', '/v2/agent/prj_x/jobs');
    expect(job.headers.get('x-content-type-options')).toBe('nosniff');
    const docs = await fetch(`${server.url}/docs/static/index.html`);
    await docs.text();
    expect(docs.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
  });
});

describe('graceful shutdown', () => {
  it('SIGTERM ends the process within the shutdown timeout despite stalled clients, and releases job leases', async () => {
    const SHUTDOWN_MS = 1_000;
    const dataDir = tempDir();
    const databases = await backendDatabases();
    try {
      const env = { ...databases.env, FOLIO_DATA_DIR: dataDir };
      const project = JSON.parse((await runCli(['project', 'create', '--name', 'G', '--repository', 'https://github.com/acme/docs', '--json'], env)).stdout);
      const key = JSON.parse((await runCli(['key', 'create', '--project', project.id, '--json'], env)).stdout).key;
      const child = await startProcess('test/fixtures/serve-with-handler.ts', [], {
        ...env,
        PORT: '0',
        LOG_LEVEL: 'warn',
        ANTHROPIC_API_KEY: 'x',
        TEST_TURN_MS: '120000',
        FOLIO_SHUTDOWN_TIMEOUT: `${SHUTDOWN_MS}ms`,
        FOLIO_REQUEST_TIMEOUT: '10m',
        FOLIO_HEADERS_TIMEOUT: '10m',
        FOLIO_IDLE_TIMEOUT: '10m',
      });
      try {
        const job = (await (await fetch(`${child.url}/v2/agent/${project.id}/job`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: '{"prompt":"long"}' })).json()) as { id: string };
        // The job runs (its turn lasts two minutes); a client stalls mid-body; another holds a live stream.
        const config = loadConfig({ ...env });
        const store = await openStore(config, { migrate: false });
        try {
          await eventually(async () => (await store.db.selectFrom('jobs').select('lease_owner').where('id', '=', job.id).executeTakeFirst())?.lease_owner);
        } finally {
          await store.close();
        }
        const stalled = raw(child.url, [
          `POST /v2/agent/${project.id}/job HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${key}\r\nContent-Type: application/json\r\nContent-Length: 50\r\n\r\n{"pro`,
        ]);
        const stream = fetch(`${child.url}/v2/agent/${project.id}/job/${job.id}/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream' } }).then((r) => r.text()).catch(() => '');
        await new Promise((r) => setTimeout(r, 300));
        const signalled = performance.now();
        child.proc.kill('SIGTERM');
        const code = await Promise.race([child.exited, new Promise<'still running'>((r) => setTimeout(() => r('still running'), 20_000))]);
        // Exit 0 is the graceful path (the fallback after FOLIO_SHUTDOWN_TIMEOUT + 10 s exits 1), within
        // the setting and a few seconds for the workers to release their leases; every other timeout is 10 minutes.
        expect(code).toBe(0);
        expect(performance.now() - signalled).toBeLessThan(SHUTDOWN_MS + 5_000);
        await stalled;
        await stream;
        const after = await openStore(config, { migrate: false });
        try {
          const row = await after.db.selectFrom('jobs').select(['status', 'lease_owner', 'lease_expires_at']).where('id', '=', job.id).executeTakeFirstOrThrow();
          expect(row).toEqual({ status: 'active', lease_owner: null, lease_expires_at: null });
        } finally {
          await after.close();
        }
      } finally {
        if (child.proc.exitCode === null) child.proc.kill('SIGKILL');
      }
    } finally {
      await databases.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  }, 60_000);
});

