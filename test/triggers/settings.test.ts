// The dashboard's trigger settings: operators only; the secret is shown once, stored only sealed
// and never returned again; every bad setting gets a 400 that says what is wrong.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { sendGitHub } from '../fixtures/code-host-sender.ts';
import { endpoint } from './helpers.ts';

describe('trigger settings in the dashboard API', () => {
  let server: TestServer;
  let b: Browser;
  let projectId: string;
  const path = () => `/api/projects/${projectId}/triggers`;

  beforeAll(async () => {
    server = await startTestServer({ workers: 0 });
    b = await setUp(server);
    projectId = await server.createProject();
  });
  afterAll(async () => {
    await server?.close();
  });

  it('needs an operator session', async () => {
    expect((await server.api('GET', path())).status).toBe(401);
    const key = await server.createKey(projectId);
    expect((await server.api('GET', path(), { key })).status).toBe(401);
    expect((await b.req('GET', '/api/projects/prj_nope/triggers')).status).toBe(404);
  });

  it('shows the endpoints and the default template; makes a secret shown once and stored sealed', async () => {
    const empty = await b.req('GET', path());
    expect(empty.status).toBe(200);
    expect(empty.body).toMatchObject({ hasSecret: false, customTemplate: false, repositories: [] });
    expect(empty.body.endpoints.github).toBe(`${server.url}/v1/triggers/${projectId}/github`);
    expect(empty.body.endpoints.gitlab).toBe(`${server.url}/v1/triggers/${projectId}/gitlab`);
    expect(empty.body.template).toContain('{{changes}}');

    const made = await b.req('POST', `${path()}/secret`);
    expect(made.status).toBe(201);
    expect(made.headers.get('cache-control')).toBe('no-store');
    const secret: string = made.body.secret;
    expect(secret).toMatch(/^fts_[A-Za-z0-9_-]{43}$/);
    expect(made.body.hasSecret).toBe(true);

    const again = await b.req('GET', path());
    expect(again.text).not.toContain(secret);
    expect(again.body.hasSecret).toBe(true);
    const row = await server.services.store.db.selectFrom('trigger_settings').selectAll().where('project_id', '=', projectId).executeTakeFirstOrThrow();
    expect(row.secret!.startsWith('enc:v1:')).toBe(true);
    expect(row.secret).not.toContain(secret);

    // The secret verifies deliveries; a new one replaces it at once.
    expect((await sendGitHub(endpoint(server, projectId, 'github'), secret, 'ping', {})).status).toBe(200);
    const rotated = (await b.req('POST', `${path()}/secret`)).body.secret;
    expect(rotated).not.toBe(secret);
    expect((await sendGitHub(endpoint(server, projectId, 'github'), secret, 'ping', {})).status).toBe(401);
    expect((await sendGitHub(endpoint(server, projectId, 'github'), rotated, 'ping', {})).status).toBe(200);

    const recent = await b.req('GET', `${path()}/deliveries?limit=10`);
    expect(recent.status).toBe(200);
    // The delivery signed with the old secret is counted, not recorded (anyone could have sent it).
    expect(recent.body.deliveries.map((d: any) => d.statusCode)).toEqual([200, 200]);
    expect(recent.text).not.toContain(rotated);
    // The settings show how many were refused (written by the receiver in batches).
    expect(empty.body).toMatchObject({ refusedDeliveries: 0, lastRefusedAt: null });
    await server.services.triggers.receiver.saveRefusals();
    const counted = await b.req('GET', path());
    expect(counted.body).toMatchObject({ refusedDeliveries: 1, lastRefusedAt: expect.any(String) });
  });

  it('stores repositories, filters and the template; tokens are sealed, kept and removed', async () => {
    const put = await b.req('PUT', path(), {
      body: {
        template: 'Docs for {{title}} ({{url}}):\n{{changes}}',
        repositories: [
          { host: 'github', repositoryUrl: 'https://github.com/Acme/API.git', events: ['merged', 'opened'], paths: ['src/**', ' src/** '], labels: ['docs-needed'], token: 'ghp_watch_token_123' },
          { host: 'gitlab', repositoryUrl: 'https://gitlab.example.com/group/sub/api/', events: ['push'] },
        ],
      },
    });
    expect(put.status, put.text).toBe(200);
    expect(put.body.customTemplate).toBe(true);
    expect(put.body.repositories).toMatchObject([
      { host: 'github', repositoryUrl: 'https://github.com/Acme/API', fullPath: 'acme/api', events: ['merged', 'opened'], paths: ['src/**'], labels: ['docs-needed'], hasToken: true },
      { host: 'gitlab', repositoryUrl: 'https://gitlab.example.com/group/sub/api', fullPath: 'group/sub/api', events: ['push'], paths: [], hasToken: false },
    ]);
    expect(put.text).not.toContain('ghp_watch_token_123');
    const stored = await server.services.store.db.selectFrom('trigger_repositories').select('token').where('project_id', '=', projectId).execute();
    expect(stored.find((r) => r.token)!.token!.startsWith('enc:v1:')).toBe(true);

    const [gh, gl] = put.body.repositories;
    const kept = await b.req('PUT', path(), { body: { repositories: [{ id: gh.id, host: 'github', repositoryUrl: gh.repositoryUrl, events: ['merged'] }, { ...gl, id: gl.id, fullPath: undefined, hasToken: undefined, createdAt: undefined }] } });
    expect(kept.status, kept.text).toBe(200);
    expect(kept.body.repositories[0]).toMatchObject({ id: gh.id, hasToken: true, events: ['merged'] });
    expect(kept.body.customTemplate).toBe(true);
    const removed = await b.req('PUT', path(), { body: { template: null, repositories: [{ id: gh.id, host: 'github', repositoryUrl: gh.repositoryUrl, events: ['merged'], token: null }] } });
    expect(removed.body.repositories).toHaveLength(1);
    expect(removed.body.repositories[0].hasToken).toBe(false);
    expect(removed.body.customTemplate).toBe(false);
  });

  it('refuses bad settings with 400 and a sentence that says what is wrong', async () => {
    const repo = { host: 'github', repositoryUrl: 'https://github.com/acme/api', events: ['merged'] };
    const cases: [unknown, RegExp][] = [
      [{ repositories: [{ ...repo, repositoryUrl: 'ftp://github.com/acme/api' }] }, /not a repository web address/],
      [{ repositories: [{ ...repo, repositoryUrl: 'https://github.com/acme' }] }, /owner and a repository|owner\/name/],
      [{ repositories: [{ ...repo, repositoryUrl: 'https://github.com/a/b/c' }] }, /owner\/name/],
      [{ repositories: [{ ...repo, events: [] }] }, /events|Invalid body/],
      [{ repositories: [{ ...repo, events: ['deleted'] }] }, /Invalid body/],
      [{ repositories: [repo, { ...repo, repositoryUrl: 'https://github.com/ACME/api.git' }] }, /listed twice/],
      [{ repositories: [{ ...repo, paths: ['x'.repeat(201)] }] }, /Invalid body|200 characters/],
      [{ repositories: [{ ...repo, labels: Array.from({ length: 21 }, (_, i) => `l${i}`) }] }, /Invalid body|at most 20/],
      [{ repositories: [{ ...repo, token: '   ' }] }, /token/],
      [{ repositories: [{ ...repo, host: 'bitbucket' }] }, /Invalid body/],
      [{ template: 'Hi {{title}} {{secret}}' }, /unknown placeholders: \{\{secret\}\}/],
      [{ template: '   ' }, /must not be empty/],
      [{ template: 'x\u0000' }, /NUL/],
      [{ unknown: 1 }, /unknown field/],
      [{}, /Invalid body/],
    ];
    for (const [body, message] of cases) {
      const res = await b.req('PUT', path(), { body });
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.body.error, JSON.stringify(body)).toMatch(message);
    }
    expect((await b.req('PUT', path(), { body: { repositories: Array.from({ length: 21 }, (_, i) => ({ ...repo, repositoryUrl: `https://github.com/acme/r${i}` })) } })).status).toBe(400);
  });
});
