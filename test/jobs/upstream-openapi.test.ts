// Folio's answers to the seed's job operations satisfy the upstream contract (test/fixtures/upstream-contract.json).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { operationProblems } from '../helpers/upstream.ts';

/** Folio's jobs carry every field of the upstream job (the seed lists them all); errors need only theirs. */
function check(path: string, method: string, status: number, body: unknown) {
  expect(operationProblems(`${method.toUpperCase()} ${path}`, status, body, { allFields: status < 400 })).toBeNull();
}

let server: TestServer;
let projectId: string;
let key: string;

beforeAll(async () => {
  server = await startTestServer({
    jobHandler: new ScriptedHandler({ script: async () => ({ title: 't', summary: 's', prLink: 'https://github.com/acme/docs/pull/1' }) }),
    env: { FOLIO_RATE_LIMIT_FOLLOW_UP: '1', FOLIO_RATE_LIMIT_CREATE: '3' },
  });
  projectId = await server.createProject();
  key = await server.createKey(projectId);
});
afterAll(() => server.close());

describe('upstream OpenAPI compatibility', () => {
  it('create job: 201, 400, 429', async () => {
    const created = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'hello' } });
    expect(created.status).toBe(201);
    check('/v2/agent/{projectId}/job', 'post', 201, created.body);
    const bad = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: '' } });
    check('/v2/agent/{projectId}/job', 'post', bad.status, bad.body);
    await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'second' } });
    await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'third' } });
    const limited = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'fourth' } });
    expect(limited.status).toBe(429);
    check('/v2/agent/{projectId}/job', 'post', 429, limited.body);
  });

  it('get job: 200 (active and completed with prLink), 404', async () => {
    const list = (await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs;
    const id = list[0].id;
    check('/v2/agent/{projectId}/job/{id}', 'get', 200, (await server.api('GET', `/v2/agent/${projectId}/job/${id}`, { key })).body);
    const done = await eventually(async () => {
      const j = (await server.api('GET', `/v2/agent/${projectId}/job/${id}`, { key })).body;
      return j.status === 'completed' ? j : null;
    });
    expect(done.prLink).toBe('https://github.com/acme/docs/pull/1');
    check('/v2/agent/{projectId}/job/{id}', 'get', 200, done);
    const missing = await server.api('GET', `/v2/agent/${projectId}/job/job_missing`, { key });
    check('/v2/agent/{projectId}/job/{id}', 'get', missing.status, missing.body);
  });

  it('send message: 200, 400, 404, 429', async () => {
    const id = (await server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs[0].id;
    const p = '/v2/agent/{projectId}/job/{id}/message';
    const ok = await server.api('POST', `/v2/agent/${projectId}/job/${id}/message`, { key, body: { prompt: 'more' } });
    check(p, 'post', ok.status, ok.body);
    expect(ok.status).toBe(200);
    const bad = await server.api('POST', `/v2/agent/${projectId}/job/${id}/message`, { key, body: { prompt: '' } });
    check(p, 'post', bad.status, bad.body);
    const missing = await server.api('POST', `/v2/agent/${projectId}/job/job_missing/message`, { key, body: { prompt: 'x' } });
    check(p, 'post', missing.status, missing.body);
    const limited = await server.api('POST', `/v2/agent/${projectId}/job/${id}/message`, { key, body: { prompt: 'again' } });
    expect(limited.status).toBe(429);
    check(p, 'post', 429, limited.body);
  });
});
