// Folio's answers to the seed's job operations validate against the upstream OpenAPI document.
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { UPSTREAM_ADMIN } from '../helpers/upstream.ts';

const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;
const doc = JSON.parse(readFileSync(UPSTREAM_ADMIN, 'utf8'));

/** OpenAPI 3.0 `nullable` → JSON Schema, and component refs rewritten for Ajv. */
function toJsonSchema(s: any): any {
  if (Array.isArray(s)) return s.map(toJsonSchema);
  if (!s || typeof s !== 'object') return s;
  const out: any = {};
  for (const [k, v] of Object.entries(s)) {
    if (k === 'nullable' || k === 'example') continue;
    if (k === '$ref') out.$ref = (v as string).replace('#/components/schemas/', 'upstream#/definitions/');
    else out[k] = toJsonSchema(v);
  }
  if (s.nullable) return { anyOf: [out, { type: 'null' }] };
  return out;
}

const ajv = addFormats(new Ajv({ strict: false, allErrors: true }));
ajv.addSchema({ $id: 'upstream', definitions: toJsonSchema(doc.components.schemas) });

function check(path: string, method: string, status: number, body: unknown) {
  const op = doc.paths[path][method];
  const declared = op.responses[String(status)];
  expect(declared, `${method.toUpperCase()} ${path} does not declare ${status}`).toBeDefined();
  const schema = toJsonSchema(declared.content['application/json'].schema);
  const valid = ajv.validate(schema, body);
  expect(valid, JSON.stringify(ajv.errors)).toBe(true);
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
