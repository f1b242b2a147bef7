// The dashboard's admin API (projects, API keys) and operator sessions on the job API.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';
import { Browser, setUp } from './session.ts';

let server: TestServer;
let b: Browser;
beforeAll(async () => {
  server = await startTestServer({ jobHandler: new ScriptedHandler(), workers: 1 });
  b = await setUp(server);
});
afterAll(async () => {
  await server?.close();
});

const expectError = (res: { status: number; body: any }, status: number, code: string) => {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  expect(res.body.code).toBe(code);
  expect(res.body.error.length).toBeGreaterThan(10);
};

const PROJECT = { name: 'Acme docs', repositoryUrl: 'https://github.com/acme/docs' };

describe('projects', () => {
  it('refuses every admin route without a session', async () => {
    const anon = new Browser(server);
    expectError(await anon.req('GET', '/api/projects'), 401, 'not_signed_in');
    expectError(await anon.req('POST', '/api/projects', { body: PROJECT }), 401, 'not_signed_in');
    expectError(await anon.req('GET', '/api/projects/prj_x'), 401, 'not_signed_in');
    expectError(await anon.req('PATCH', '/api/projects/prj_x', { body: { name: 'x' } }), 401, 'not_signed_in');
    expectError(await anon.req('GET', '/api/projects/prj_x/keys'), 401, 'not_signed_in');
    expectError(await anon.req('POST', '/api/projects/prj_x/keys', { body: {} }), 401, 'not_signed_in');
    expectError(await anon.req('POST', '/api/projects/prj_x/keys/key_x/revoke'), 401, 'not_signed_in');
    // An API key is not a dashboard session.
    const projectId = await server.createProject();
    const key = await server.createKey(projectId);
    expectError(await anon.req('GET', '/api/projects', { headers: { authorization: `Bearer ${key}` } }), 401, 'not_signed_in');
  });

  it('creates a project with defaults and returns the script tag to paste', async () => {
    const res = await b.req('POST', '/api/projects', { body: PROJECT });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      name: 'Acme docs',
      repositoryUrl: 'https://github.com/acme/docs',
      baseBranch: 'main',
      codeHost: 'github',
      defaultModel: null,
      draftPrs: false,
      webhookUrl: null,
      hasWebhookSecret: false,
      siteOrigins: [],
      checks: 'warn',
      redirectHosts: [],
    });
    expect(res.body.id).toMatch(/^prj_/);
    expect(res.body.scriptTag).toBe(`<script defer src="${server.url}/v1/analytics/script.js" data-project="${res.body.id}"></script>`);
    const list = await b.req('GET', '/api/projects');
    expect(list.body.projects.map((p: { id: string }) => p.id)).toContain(res.body.id);
    const one = await b.req('GET', `/api/projects/${res.body.id}`);
    expect(one.body).toEqual(res.body);
  });

  it('refuses bad project input', async () => {
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, repositoryUrl: 'not a url' } }), 400, 'invalid_project');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, baseBranch: 'a..b' } }), 400, 'invalid_project');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, name: '   ' } }), 400, 'invalid_project');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, siteOrigins: ['https://docs.example.com/path'] } }), 400, 'invalid_project');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, webhookUrl: 'ftp://x' } }), 400, 'invalid_project');
    const checks = await b.req('POST', '/api/projects', { body: { ...PROJECT, checks: 'sometimes' } });
    expectError(checks, 400, 'invalid_project');
    expect(checks.body.error).toBe('Checks must be strict, warn or off, got "sometimes".');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, checks: 1 } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, checks: 'x'.repeat(100) } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, defaultModel: 'anthropic/not-allowed-model' } }), 400, 'invalid_model');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, codeHost: 'bitbucket' } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, draftPrs: 'yes' } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects', { body: { ...PROJECT, owner: 'me' } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects', { body: { name: 'x' } }), 400, 'invalid_request');
    const nul = await b.req('POST', '/api/projects', { body: { ...PROJECT, name: 'Acme\u0000docs' } });
    expectError(nul, 400, 'invalid_request');
    expect(nul.body.details).toEqual([{ message: 'contains NUL', path: '/body/name' }]);
    expectError(await b.req('POST', '/api/login', { body: { email: 'a\u0000@example.com', password: 'whatever password' } }), 400, 'invalid_request');
  });

  it('updates settings: draft PRs, webhook, origins, model; secrets are never returned', async () => {
    const created = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const session = (await b.req('GET', '/api/session')).body;
    const model = session.models.default;
    const res = await b.req('PATCH', `/api/projects/${created.id}`, {
      body: {
        name: 'Renamed',
        baseBranch: 'develop',
        draftPrs: true,
        webhookUrl: 'https://hooks.example.com/folio',
        webhookSecret: 's3cret-value',
        siteOrigins: ['https://docs.example.com/', 'http://localhost:3000'],
        defaultModel: model,
        repoToken: 'ghp_secret_token',
        checks: 'strict',
      },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      name: 'Renamed',
      baseBranch: 'develop',
      draftPrs: true,
      webhookUrl: 'https://hooks.example.com/folio',
      hasWebhookSecret: true,
      hasRepoToken: true,
      siteOrigins: ['https://docs.example.com', 'http://localhost:3000'],
      defaultModel: model,
      checks: 'strict',
    });
    expect(res.text).not.toContain('s3cret-value');
    expect(res.text).not.toContain('ghp_secret_token');
    // Empty strings remove optional settings.
    const cleared = await b.req('PATCH', `/api/projects/${created.id}`, { body: { webhookUrl: '', webhookSecret: '', defaultModel: '' } });
    expect(cleared.body).toMatchObject({ webhookUrl: null, hasWebhookSecret: false, defaultModel: null });
  });

  it('redirect hosts: host names, normalised and without repeats; anything else is refused with one clear sentence', async () => {
    const created = (await b.req('POST', '/api/projects', { body: { ...PROJECT, redirectHosts: ['Status.Example.COM.', 'bücher.example', 'status.example.com'] } })).body;
    expect(created.redirectHosts).toEqual(['status.example.com', 'xn--bcher-kva.example']);
    const cleared = await b.req('PATCH', `/api/projects/${created.id}`, { body: { redirectHosts: [] } });
    expect(cleared.body.redirectHosts).toEqual([]);
    for (const bad of ['https://evil.example', 'evil.example/phish', 'evil.example:443', '*.example.com', '10.0.0.1', '[::1]', '', 'a b', 'user@evil.example']) {
      const res = await b.req('PATCH', `/api/projects/${created.id}`, { body: { redirectHosts: ['ok.example', bad] } });
      expectError(res, 400, 'invalid_project');
      expect(res.body.error).toMatch(/^Redirect host ".*" must be a host name such as status\.example\.com: no scheme, port, path, wildcard or IP address\.$/);
      expect(res.body.details).toEqual([{ message: res.body.error, path: '/body/redirectHosts' }]);
    }
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { redirectHosts: 'evil.example' } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { redirectHosts: Array.from({ length: 51 }, (_, i) => `h${i}.example`) } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { redirectHosts: ['x'.repeat(301)] } }), 400, 'invalid_request');
    // Nothing half-written: the list is as the last good change left it.
    expect((await b.req('GET', `/api/projects/${created.id}`)).body.redirectHosts).toEqual([]);
  });

  it('refuses bad updates and unknown projects', async () => {
    const created = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: {} }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { repositoryUrl: 'nope' } }), 400, 'invalid_project');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { checks: 'STRICT' } }), 400, 'invalid_project');
    expect((await b.req('PATCH', `/api/projects/${created.id}`, { body: { checks: 'off' } })).body.checks).toBe('off');
    // The site build's settings: on/off, one line of shell each, 10 to 3600 seconds.
    const build = await b.req('PATCH', `/api/projects/${created.id}`, { body: { build: 'sometimes' } });
    expectError(build, 400, 'invalid_project');
    expect(build.body.error).toBe('Build must be on or off, got "sometimes".');
    const twoLines = await b.req('PATCH', `/api/projects/${created.id}`, { body: { buildCommand: 'make docs\nrm -rf /' } });
    expectError(twoLines, 400, 'invalid_project');
    expect(twoLines.body.details).toEqual([{ message: "The build's command must be one line of at most 2000 characters, without control characters.", path: '/body/buildCommand' }]);
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { buildSetup: 'x'.repeat(2001) } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { buildTimeoutSeconds: 5 } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { buildTimeoutSeconds: '60' } }), 400, 'invalid_request');
    const set = await b.req('PATCH', `/api/projects/${created.id}`, { body: { build: 'off', buildSetup: 'pip install -r requirements.txt', buildCommand: 'mkdocs build --strict', buildTimeoutSeconds: 600 } });
    expect(set.body).toMatchObject({ build: 'off', buildSetup: 'pip install -r requirements.txt', buildCommand: 'mkdocs build --strict', buildTimeoutSeconds: 600 });
    const cleared = await b.req('PATCH', `/api/projects/${created.id}`, { body: { build: 'on', buildSetup: '', buildCommand: null, buildTimeoutSeconds: null } });
    expect(cleared.body).toMatchObject({ build: 'on', buildSetup: null, buildCommand: null, buildTimeoutSeconds: null });
    // Which review comments act, and the name that calls the agent.
    expect((await b.req('GET', `/api/projects/${created.id}`)).body).toMatchObject({ reviewComments: 'mention', reviewMention: '@folio' });
    const review = await b.req('PATCH', `/api/projects/${created.id}`, { body: { reviewComments: 'always' } });
    expectError(review, 400, 'invalid_project');
    expect(review.body.error).toBe('Review comments must be mention or every, got "always".');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { reviewMention: 'folio' } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { reviewMention: '@a b' } }), 400, 'invalid_request');
    expect((await b.req('PATCH', `/api/projects/${created.id}`, { body: { reviewComments: 'every', reviewMention: '@docs-bot' } })).body).toMatchObject({ reviewComments: 'every', reviewMention: '@docs-bot' });
    expectError(await b.req('PATCH', `/api/projects/${created.id}`, { body: { color: 'red' } }), 400, 'invalid_request');
    expectError(await b.req('PATCH', '/api/projects/prj_unknown', { body: { name: 'x' } }), 404, 'project_not_found');
    expectError(await b.req('GET', '/api/projects/prj_unknown'), 404, 'project_not_found');
    expect((await b.req('GET', `/api/projects/${created.id}`)).body.repositoryUrl).toBe(PROJECT.repositoryUrl);
  });
});

describe('API keys', () => {
  it('creates a key shown once, lists it by prefix, and it works against the API', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const created = await b.req('POST', `/api/projects/${project.id}/keys`, { body: { name: 'CI', scope: 'write', expiresInDays: 30 } });
    expect(created.status).toBe(201);
    expect(created.headers.get('cache-control')).toBe('no-store');
    expect(created.body.key).toMatch(/^folio_[A-Za-z0-9]{40}$/);
    expect(created.body).toMatchObject({ name: 'CI', scope: 'write', projectId: project.id, revokedAt: null, lastUsedAt: null });
    const expiresIn = Date.parse(created.body.expiresAt) - Date.now();
    expect(expiresIn).toBeGreaterThan(29.9 * 86_400_000);
    expect(expiresIn).toBeLessThanOrEqual(30 * 86_400_000);
    expect(created.body.key.startsWith(created.body.prefix)).toBe(true);

    const list = await b.req('GET', `/api/projects/${project.id}/keys`);
    expect(list.body.keys).toHaveLength(1);
    expect(list.body.keys[0]).toMatchObject({ id: created.body.id, prefix: created.body.prefix, scope: 'write' });
    expect(list.text).not.toContain(created.body.key);
    expect(list.body.keys[0]).not.toHaveProperty('hash');

    const api = await server.api('GET', `/v2/agent/${project.id}/jobs`, { key: created.body.key });
    expect(api.status).toBe(200);
    await expect.poll(async () => (await b.req('GET', `/api/projects/${project.id}/keys`)).body.keys[0].lastUsedAt).not.toBeNull();
  });

  it('creates read-only and never-expiring keys with defaults', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const read = (await b.req('POST', `/api/projects/${project.id}/keys`, { body: { name: 'Reader', scope: 'read', expiresInDays: null } })).body;
    expect(read).toMatchObject({ scope: 'read', expiresAt: null });
    const dflt = await b.req('POST', `/api/projects/${project.id}/keys`, { body: {} });
    expect(dflt.body).toMatchObject({ name: 'API key', scope: 'write', expiresAt: null });
    const write = await server.api('POST', `/v2/agent/${project.id}/job`, { key: read.key, body: { prompt: 'x' } });
    expect(write.status).toBe(403);
    expect(write.body.code).toBe('insufficient_scope');
  });

  it('refuses bad key input', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const url = `/api/projects/${project.id}/keys`;
    expectError(await b.req('POST', url, { body: { scope: 'admin' } }), 400, 'invalid_request');
    expectError(await b.req('POST', url, { body: { expiresInDays: 0 } }), 400, 'invalid_request');
    expectError(await b.req('POST', url, { body: { expiresInDays: 1.5 } }), 400, 'invalid_request');
    expectError(await b.req('POST', url, { body: { name: '' } }), 400, 'invalid_request');
    expectError(await b.req('POST', url, { body: { name: '   ' } }), 400, 'invalid_key');
    expectError(await b.req('POST', url, { body: { key: 'folio_mine' } }), 400, 'invalid_request');
    expectError(await b.req('POST', '/api/projects/prj_unknown/keys', { body: {} }), 404, 'project_not_found');
    expectError(await b.req('GET', '/api/projects/prj_unknown/keys'), 404, 'project_not_found');
    expect((await b.req('GET', url)).body.keys).toEqual([]);
  });

  it('revokes a key: the API refuses it at once; revoking is idempotent and scoped to the project', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const other = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const key = (await b.req('POST', `/api/projects/${project.id}/keys`, { body: { name: 'to revoke' } })).body;
    expectError(await b.req('POST', `/api/projects/${other.id}/keys/${key.id}/revoke`), 404, 'key_not_found');
    expectError(await b.req('POST', `/api/projects/${project.id}/keys/key_unknown/revoke`), 404, 'key_not_found');
    expectError(await b.req('POST', `/api/projects/${project.id}/keys/${key.id}/revoke`, { csrf: false }), 403, 'csrf_token_missing');
    expect((await server.api('GET', `/v2/agent/${project.id}/jobs`, { key: key.key })).status).toBe(200);

    const revoked = await b.req('POST', `/api/projects/${project.id}/keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body.revokedAt).not.toBeNull();
    const again = await b.req('POST', `/api/projects/${project.id}/keys/${key.id}/revoke`);
    expect(again.body.revokedAt).toBe(revoked.body.revokedAt);

    const refused = await server.api('GET', `/v2/agent/${project.id}/jobs`, { key: key.key });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('revoked_api_key');
    expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });
});

describe('operator sessions on the job API', () => {
  it('lists, creates, follows up and archives jobs with the session and CSRF token', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const jobs = `/v2/agent/${project.id}`;
    expect((await b.req('GET', `${jobs}/jobs`)).body).toMatchObject({ jobs: [], hasMore: false });
    expectError(await b.req('POST', `${jobs}/job`, { body: { prompt: 'Document the CLI' }, csrf: false }), 403, 'csrf_token_missing');
    expectError(await b.req('POST', `${jobs}/job`, { body: { prompt: 'Document the CLI' }, headers: { 'x-csrf-token': 'nope' } }), 403, 'csrf_token_invalid');
    const created = await b.req('POST', `${jobs}/job`, { body: { prompt: 'Document the CLI' } });
    expect(created.status).toBe(201);
    await expect.poll(async () => (await b.req('GET', `${jobs}/job/${created.body.id}`)).body.status).toBe('completed');
    const events = await b.req('GET', `${jobs}/job/${created.body.id}/events`);
    expect(events.status).toBe(200);
    expect(events.body.events.map((e: { type: string }) => e.type)).toContain('test.turn');
    const msg = await b.req('POST', `${jobs}/job/${created.body.id}/message`, { body: { prompt: 'Also the config' } });
    expect(msg.status).toBe(200);
    const archived = await b.req('POST', `${jobs}/job/${created.body.id}/archive`);
    expect(archived.body.status).toBe('archived');
    // Operators may use every project, but not one that does not exist.
    expectError(await b.req('POST', '/v2/agent/prj_unknown/job', { body: { prompt: 'x' } }), 404, 'project_not_found');
  });

  it('reads and ingests analytics with the session; ingesting needs the CSRF token', async () => {
    const project = (await b.req('POST', '/api/projects', { body: PROJECT })).body;
    const events = { events: [{ path: '/docs/a', userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36', ip: '203.0.113.5' }] };
    expectError(await b.req('POST', `/v1/analytics/${project.id}/events`, { body: events, csrf: false }), 403, 'csrf_token_missing');
    const ingested = await b.req('POST', `/v1/analytics/${project.id}/events`, { body: events });
    expect(ingested.status).toBe(202);
    const visitors = await b.req('GET', `/v1/analytics/${project.id}/visitors`);
    expect(visitors.status).toBe(200);
    expect(visitors.body.totals).toEqual({ human: 1, ai: 0, total: 1 });
    const anon = await new Browser(server).req('GET', `/v1/analytics/${project.id}/visitors`);
    expect(anon.status).toBe(401);
  });

  it('keeps Bearer behaviour unchanged', async () => {
    const a = await server.createProject();
    const c = await server.createProject();
    const keyA = await server.createKey(a);
    const none = await server.api('GET', `/v2/agent/${a}/jobs`);
    expect(none.status).toBe(401);
    expect(none.body.code).toBe('missing_api_key');
    expect(none.headers.get('www-authenticate')).toMatch(/^Bearer/);
    const wrong = await server.api('GET', `/v2/agent/${c}/jobs`, { key: keyA });
    expect(wrong.status).toBe(403);
    expect(wrong.body.code).toBe('wrong_project');
    const expired = await server.createKey(a, 'write', Date.now() - 1000);
    expect((await server.api('GET', `/v2/agent/${a}/jobs`, { key: expired })).body.code).toBe('expired_api_key');
    expect((await server.api('GET', `/v2/agent/${a}/jobs`, { key: 'folio_' + 'x'.repeat(40) })).body.code).toBe('invalid_api_key');
    // A Bearer key wins over a cookie: a bad key is refused even with a valid session.
    const bad = await b.req('GET', `/v2/agent/${a}/jobs`, { headers: { authorization: 'Bearer folio_unknownunknownunknownunknownunknown12' } });
    expect(bad.status).toBe(401);
    // A stale session cookie alone gets the API's usual 401.
    const stale = new Browser(server);
    stale.cookie = 'folio_session=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const res = await stale.req('GET', `/v2/agent/${a}/jobs`);
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('missing_api_key');
  });
});
