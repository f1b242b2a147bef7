// Requests to user-configured URLs (webhook receivers, a repository's host, the code-host API derived
// from it) never reach loopback, private, link-local, unique-local or metadata addresses unless the
// operator allows the network: refused when the URL is saved, and again at connect time on the
// address actually used (a name that changes its answer cannot slip through) and on every redirect.
import http from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkUrlHost, OutboundRefusedError, refusal, resolveAllowed, UnresolvedHostError, type Resolve } from '../../src/net/address-policy.ts';
import { createGuardedFetch, refusalOf } from '../../src/net/guarded-fetch.ts';
import { codeHostAccess, CodeHostError, createCodeHost } from '../../src/codehost/index.ts';
import { operatorApi } from '../fixtures/git-server.ts';
import { ProjectsService } from '../../src/admin/projects.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { waitForJob } from '../agent/e2e-helpers.ts';

const NONE = { allow: [] };

/** Names a test resolver knows; anything else does not resolve. */
function resolver(table: Record<string, string[] | (() => string[])>): Resolve {
  return async (host) => {
    const entry = table[host];
    if (!entry) throw new Error(`ENOTFOUND ${host}`);
    return (typeof entry === 'function' ? entry() : entry).map((address) => ({ address, family: address.includes(':') ? 6 : 4 }));
  };
}

/** An HTTP server on `host` that records requests and answers with `handle`. */
async function listen(host: string, handle: (req: http.IncomingMessage, res: http.ServerResponse) => void) {
  const hits: string[] = [];
  const server = http.createServer((req, res) => {
    hits.push(`${req.method} ${req.url}`);
    handle(req, res);
  });
  await new Promise<void>((r) => server.listen(0, host, r));
  const port = (server.address() as { port: number }).port;
  return { hits, port, close: () => new Promise((r) => server.close(r)) };
}

describe('the address policy', () => {
  it.each([
    ['127.0.0.1', 'a loopback address'],
    ['127.255.0.9', 'a loopback address'],
    ['::1', 'a loopback address'],
    ['::ffff:127.0.0.1', 'a loopback address'],
    ['::ffff:7f00:1', 'a loopback address'],
    ['169.254.169.254', 'a link-local address (cloud metadata services live there)'],
    ['fe80::1', 'a link-local address (cloud metadata services live there)'],
    ['10.1.2.3', 'a private address'],
    ['172.16.0.1', 'a private address'],
    ['192.168.1.1', 'a private address'],
    ['fd00:ec2::254', 'a unique-local address'],
    ['100.100.100.200', 'a carrier-grade NAT address'],
    ['0.0.0.0', 'the unspecified address'],
    ['::', 'the unspecified address'],
    ['224.0.0.1', 'a multicast address'],
    ['255.255.255.255', 'the broadcast address'],
  ])('refuses %s as %s', (ip, why) => {
    expect(refusal(ip, NONE)).toBe(why);
  });

  it('allows public addresses, and networks the operator lists', () => {
    expect(refusal('93.184.216.34', NONE)).toBeNull();
    expect(refusal('2606:4700::1111', NONE)).toBeNull();
    const intranet = { allow: ['10.0.0.0/8', '192.168.1.5', 'fd00::/8'] };
    expect(refusal('10.20.30.40', intranet)).toBeNull();
    expect(refusal('192.168.1.5', intranet)).toBeNull();
    expect(refusal('192.168.1.6', intranet)).toBe('a private address');
    expect(refusal('fd12::1', intranet)).toBeNull();
    expect(refusal('127.0.0.1', intranet)).toBe('a loopback address');
  });

  it('refuses a name if any of its addresses is refused, and localhost without asking', async () => {
    const resolve = resolver({ 'mixed.test': ['93.184.216.34', '127.0.0.1'], 'public.test': ['93.184.216.34'] });
    await expect(resolveAllowed('mixed.test', NONE, resolve)).rejects.toThrow('mixed.test (127.0.0.1) is a loopback address');
    await expect(resolveAllowed('public.test', NONE, resolve)).resolves.toEqual({ address: '93.184.216.34', family: 4 });
    await expect(resolveAllowed('localhost', NONE, resolve)).rejects.toThrow(/loopback/);
    await expect(resolveAllowed('db.localhost', NONE, resolve)).rejects.toThrow(/loopback/);
    // A name with no address is not refused but unresolved: deliveries retry it, and saving accepts it.
    await expect(resolveAllowed('nowhere.test', NONE, resolve)).rejects.toBeInstanceOf(UnresolvedHostError);
    await expect(checkUrlHost(new URL('https://nowhere.test/hook'), NONE, resolve)).resolves.toBeUndefined();
    await expect(checkUrlHost(new URL('https://mixed.test/hook'), NONE, resolve)).rejects.toBeInstanceOf(OutboundRefusedError);
  });
});

describe('guarded fetch', () => {
  let loopback: Awaited<ReturnType<typeof listen>>;
  let redirector: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    loopback = await listen('127.0.0.1', (_req, res) => res.end('internal'));
    // The one server the policy below allows (127.0.0.2), redirecting to the loopback one.
    redirector = await listen('127.0.0.2', (req, res) => {
      res.writeHead(req.url === '/temp' ? 307 : 302, { location: `http://127.0.0.1:${loopback.port}/secret` });
      res.end();
    });
  });
  afterAll(async () => {
    await loopback.close();
    await redirector.close();
  });

  const refusedBy = async (fetch: typeof globalThis.fetch, url: string) => refusalOf(await fetch(url).then(() => null, (e: unknown) => e))?.message;

  it('refuses loopback in every spelling, names that resolve to it, metadata and private addresses', async () => {
    const f = createGuardedFetch(NONE, { resolve: resolver({ 'evil.test': ['127.0.0.1'] }) });
    const p = loopback.port;
    for (const url of [
      `http://127.0.0.1:${p}/`,
      `http://[::1]:${p}/`,
      `http://0x7f000001:${p}/`,
      `http://2130706433:${p}/`,
      `http://0177.0.0.1:${p}/`,
      `http://127.1:${p}/`,
      `http://[::ffff:127.0.0.1]:${p}/`,
      `http://localhost:${p}/`,
      `http://evil.test:${p}/`,
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.1/',
      'http://[fd00::1]/',
    ]) {
      expect(await refusedBy(f, url), url).toMatch(/is (a|the) .*address/);
    }
    expect(loopback.hits).toEqual([]);
  });

  it('checks the address it connects to, not an earlier answer (DNS rebinding)', async () => {
    let calls = 0;
    // First answer public (what a check at save time would have seen), then loopback.
    const rebinding = resolver({ 'rebind.test': () => (calls++ === 0 ? ['93.184.216.34'] : ['127.0.0.1']) });
    await resolveAllowed('rebind.test', NONE, rebinding);
    const f = createGuardedFetch(NONE, { resolve: rebinding });
    expect(await refusedBy(f, `http://rebind.test:${loopback.port}/`)).toMatch(/rebind.test \(127.0.0.1\) is a loopback address/);
    expect(loopback.hits).toEqual([]);
  });

  it('checks every redirect', async () => {
    const f = createGuardedFetch({ allow: ['127.0.0.2/32'] });
    expect(await refusedBy(f, `http://127.0.0.2:${redirector.port}/`)).toMatch(/127.0.0.1 is a loopback address/);
    expect(await refusedBy(f, `http://127.0.0.2:${redirector.port}/temp`)).toMatch(/127.0.0.1 is a loopback address/);
    expect(redirector.hits).toEqual(['GET /', 'GET /temp']);
    expect(loopback.hits).toEqual([]);
  });

  it('the code-host API derived from a repository URL goes through it; an operator-set API URL does not', async () => {
    const derived = createCodeHost(codeHostAccess('github', `http://127.0.0.1:${loopback.port}/acme/docs`, 't', { operator: operatorApi(null), outbound: NONE }));
    const err = await derived.findOpen('folio/x', 'main').catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'code_host_address_refused' });
    expect((err as Error).message).toMatch(/^The code host's API: 127.0.0.1 is a loopback address/);
    const gitlab = createCodeHost(codeHostAccess('gitlab', 'https://gitlab.internal.test/acme/docs', 't', { operator: operatorApi(null), outbound: NONE, resolve: resolver({ 'gitlab.internal.test': ['10.9.8.7'] }) }));
    await expect(gitlab.findOpen('folio/x', 'main')).rejects.toMatchObject({ code: 'code_host_address_refused' });
    expect(loopback.hits).toEqual([]);
    // GITHUB_API_URL is the operator's own setting: trusted, so an intranet API works without
    // FOLIO_OUTBOUND_ALLOW — for repositories on its host only.
    const elsewhere = createCodeHost(codeHostAccess('github', 'https://github.example/acme/docs', 't', { operator: operatorApi(`http://127.0.0.1:${loopback.port}`), outbound: NONE, resolve: resolver({}) }));
    await expect(elsewhere.findOpen('folio/x', 'main')).rejects.toBeInstanceOf(CodeHostError);
    expect(loopback.hits).toEqual([]);
    const operatorSet = createCodeHost(codeHostAccess('github', `http://127.0.0.1:${loopback.port}/acme/docs`, 't', { operator: operatorApi(`http://127.0.0.1:${loopback.port}`), outbound: NONE }));
    await operatorSet.findOpen('folio/x', 'main').catch(() => undefined);
    expect(loopback.hits.length).toBe(1);
  });
});

describe('webhook URLs and repository hosts of a project', () => {
  let server: TestServer;
  let b: Browser;
  let internal: Awaited<ReturnType<typeof listen>>;
  let allowedReceiver: Awaited<ReturnType<typeof listen>>;
  let movingReceiver: Awaited<ReturnType<typeof listen>>;
  beforeAll(async () => {
    internal = await listen('127.0.0.1', (_req, res) => res.end('ok'));
    allowedReceiver = await listen('127.0.0.2', (_req, res) => {
      res.writeHead(307, { location: `http://127.0.0.1:${internal.port}/hook` });
      res.end();
    });
    // An allowed receiver whose 301 and 302 point at an allowed address: following would reach /final.
    movingReceiver = await listen('127.0.0.2', (req, res) => {
      if (req.url === '/final') return void res.end('ok');
      res.writeHead(req.url === '/moved' ? 301 : 302, { location: '/final' });
      res.end();
    });
    // Operator settings: only 127.0.0.2 is allowed; http repositories allowed so the host check is what refuses.
    server = await startTestServer({
      jobHandler: new ScriptedHandler(),
      env: { FOLIO_OUTBOUND_ALLOW: '127.0.0.2/32', FOLIO_GIT_PROTOCOLS: 'https,http', FOLIO_WEBHOOK_ATTEMPTS: '2', FOLIO_WEBHOOK_RETRY_BASE: '10ms' },
    });
    b = await setUp(server);
  });
  afterAll(async () => {
    await server.close();
    await internal.close();
    await allowedReceiver.close();
    await movingReceiver.close();
  });

  it('a webhook URL on an internal address gets a clear 400 when it is saved', async () => {
    const project = (await b.req('POST', '/api/projects', { body: { name: 'W', repositoryUrl: 'https://github.com/acme/docs' } })).body;
    for (const webhookUrl of [
      'http://127.0.0.1:9/hook',
      'http://[::1]/hook',
      'http://0x7f000001/hook',
      'http://2130706433/hook',
      'http://localhost:8080/hook',
      'http://169.254.169.254/latest/meta-data/',
      'http://10.0.0.5/hook',
      'https://192.168.0.1/hook',
      'http://[fd00::5]/hook',
    ]) {
      const res = await b.req('PATCH', `/api/projects/${project.id}`, { body: { webhookUrl } });
      expect(res.status, webhookUrl).toBe(400);
      expect(res.body).toMatchObject({ code: 'invalid_project', details: [{ path: '/body/webhookUrl' }] });
      expect(res.body.error).toMatch(/^Webhook URL: .* is (a|the) .*address.*; Folio does not connect there unless the operator allows that network \(FOLIO_OUTBOUND_ALLOW\)\.$/);
    }
    for (const webhookUrl of ['ftp://example.com/x', 'https://user:pw@example.com/x', 'not a url']) {
      expect((await b.req('PATCH', `/api/projects/${project.id}`, { body: { webhookUrl } })).status, webhookUrl).toBe(400);
    }
    expect((await b.req('GET', `/api/projects/${project.id}`)).body.webhookUrl).toBeNull();
  });

  it('a name that resolves to an internal address is refused when saved', async () => {
    const projects = new ProjectsService(server.services.store.db, server.services.config, resolver({ 'hooks.evil.test': ['127.0.0.1'], 'hooks.ok.test': ['93.184.216.34'] }));
    await expect(projects.create({ name: 'N', repositoryUrl: 'https://github.com/acme/docs', webhookUrl: 'https://hooks.evil.test/x' })).rejects.toThrow(
      /hooks.evil.test \(127.0.0.1\) is a loopback address/,
    );
    await expect(projects.create({ name: 'N', repositoryUrl: 'https://github.com/acme/docs', webhookUrl: 'https://hooks.ok.test/x' })).resolves.toBeTruthy();
  });

  it('a delivery redirected to an internal address is refused and not retried', async () => {
    const projectId = await server.createProject({ webhookUrl: `http://127.0.0.2:${allowedReceiver.port}/hook` });
    const key = await server.createKey(projectId);
    const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body;
    // job.active and job.completed: each refused after its one attempt.
    const deliveries = await eventually(async () => {
      const list = (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}/webhooks`, { key })).body.deliveries;
      return list.length === 2 && list.every((d: { status: string }) => d.status === 'failed') ? list : null;
    });
    for (const d of deliveries) {
      expect(d).toMatchObject({ attempts: 1, lastStatusCode: null });
      expect(d.lastError).toMatch(/127.0.0.1 is a loopback address/);
    }
    expect(allowedReceiver.hits).toEqual(['POST /hook', 'POST /hook']);
    expect(internal.hits).toEqual([]);
  });

  it('a delivery answered with 301 or 302 is a failed attempt: not followed, not retried', async () => {
    for (const [path, status] of [['/moved', 301], ['/found', 302]] as const) {
      const projectId = await server.createProject({ webhookUrl: `http://127.0.0.2:${movingReceiver.port}${path}` });
      const key = await server.createKey(projectId);
      const job = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'x' } })).body;
      // job.active and job.completed: each failed after its one attempt, though FOLIO_WEBHOOK_ATTEMPTS is 2.
      const deliveries = await eventually(async () => {
        const list = (await server.api('GET', `/v2/agent/${projectId}/job/${job.id}/webhooks`, { key })).body.deliveries;
        return list.length === 2 && list.every((d: { status: string }) => d.status === 'failed') ? list : null;
      });
      for (const d of deliveries) {
        expect(d).toMatchObject({ attempts: 1, lastStatusCode: status });
        expect(d.lastError).toBe(`HTTP ${status}: the receiver redirects; set the webhook URL to the final address.`);
      }
    }
    expect(movingReceiver.hits).toEqual(['POST /moved', 'POST /moved', 'POST /found', 'POST /found']);
  });

  it("a repository on an internal host fails its job before git connects", async () => {
    // The real agent, not the scripted one: a server of its own.
    const agent = await startTestServer({ env: { FOLIO_OUTBOUND_ALLOW: '', FOLIO_GIT_PROTOCOLS: 'https,http' } });
    try {
      const pid = await agent.createProject({ repositoryUrl: `http://127.0.0.1:${internal.port}/acme/docs.git`, codeHost: 'none' });
      const k = await agent.createKey(pid);
      const created = (await agent.api('POST', `/v2/agent/${pid}/job`, { key: k, body: { prompt: 'x' } })).body;
      const job = await waitForJob(agent, pid, created.id, k);
      expect(job.error.code).toBe('repository_address_refused');
      expect(job.error.message).toMatch(/^The repository's host: 127.0.0.1 is a loopback address/);
    } finally {
      await agent.close();
    }
    expect(internal.hits).toEqual([]);
  });
});
