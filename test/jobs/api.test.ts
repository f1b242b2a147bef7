// The agent-job API end to end over real HTTP and SQLite: every endpoint, status and error code.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually, failingScript, gatedScript } from '../helpers/handlers.ts';

let server: TestServer;
let handler: ScriptedHandler;
let projectId: string;
let key: string;
let readKey: string;

const base = () => `/v2/agent/${projectId}`;
const METRICS_TOKEN = 'api-test-metrics-token-0123';

function expectError(res: { status: number; body: any }, status: number, code: string) {
  expect(res.status).toBe(status);
  expect(res.body).toMatchObject({ code });
  expect(typeof res.body.error).toBe('string');
  expect(res.body.error.length).toBeGreaterThan(5);
}

beforeAll(async () => {
  handler = new ScriptedHandler();
  server = await startTestServer({ jobHandler: handler, env: { FOLIO_MODELS: 'openai/gpt-5,openai-compatible/qwen3-coder', OPENAI_API_KEY: 'sk-test', FOLIO_METRICS_TOKEN: METRICS_TOKEN } });
  projectId = await server.createProject({ repositoryUrl: 'https://github.com/acme/docs', baseBranch: 'develop' });
  key = await server.createKey(projectId, 'write');
  readKey = await server.createKey(projectId, 'read');
});
afterAll(() => server.close());

describe('create job', () => {
  it('returns 201 with the seed fields and the allowed extras', async () => {
    const res = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'Document the --dry-run flag' } });
    expect(res.status).toBe(201);
    const job = res.body;
    expect(Object.keys(job).sort()).toEqual(['archivedAt', 'createdAt', 'error', 'files', 'id', 'limit', 'mergedAt', 'model', 'prLink', 'source', 'status', 'title', 'trigger', 'updatedAt', 'usage']);
    // Until the agent opens a pull request, the title is the prompt's first line.
    expect(job.title).toBe('Document the --dry-run flag');
    expect(job.files).toEqual([]);
    expect(job.usage).toEqual({ inputTokens: 0, outputTokens: 0, totalTokens: 0, estimatedCostUsd: 0 });
    expect(job.id).toMatch(/^job_[0-9a-z]{26}$/);
    expect(job.status).toBe('active');
    expect(job.source).toEqual({ repository: 'https://github.com/acme/docs', ref: `folio/${job.id}`, baseRef: 'develop' });
    expect(job.model).toBe('anthropic/claude-sonnet-4-5');
    expect(job.prLink).toBeNull();
    expect(job.archivedAt).toBeNull();
    expect(job.error).toBeNull();
    expect(new Date(job.createdAt).toISOString()).toBe(job.createdAt);
    expect(res.headers.get('ratelimit-limit')).toBe('100');
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('uses an allowed model the request names', async () => {
    const res = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x', model: 'openai/gpt-5' } });
    expect(res.status).toBe(201);
    expect(res.body.model).toBe('openai/gpt-5');
  });

  it('refuses a model outside the allowed list', async () => {
    expectError(await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x', model: 'openai/gpt-0' } }), 400, 'model_not_allowed');
  });

  it('refuses a model whose provider is not configured, naming the setting', async () => {
    const res = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x', model: 'openai-compatible/qwen3-coder' } });
    expectError(res, 400, 'model_not_configured');
    expect(res.body.error).toContain('OPENAI_COMPATIBLE_BASE_URL');
  });

  it.each([
    ['missing prompt', {}],
    ['empty prompt', { prompt: '' }],
    ['prompt too long', { prompt: 'x'.repeat(100_001) }],
    ['prompt of the wrong type', { prompt: 42 }],
    ['unknown field', { prompt: 'x', branch: 'main' }],
    ['array body', [{ prompt: 'x' }]],
    ['null model', { prompt: 'x', model: null }],
    ['NUL in the prompt', { prompt: 'a\u0000b' }],
  ])('400 for %s', async (_name, body) => {
    const res = await server.api('POST', `${base()}/job`, { key, body });
    expectError(res, 400, 'invalid_request');
    expect(res.body.details?.length).toBeGreaterThan(0);
  });

  it('accepts a prompt of exactly 100,000 characters', async () => {
    const res = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'y'.repeat(100_000) } });
    expect(res.status).toBe(201);
  });

  it('400 for invalid JSON and an empty JSON body', async () => {
    expectError(await server.api('POST', `${base()}/job`, { key, body: '{"prompt":' }), 400, 'invalid_json');
    expectError(await server.api('POST', `${base()}/job`, { key, body: '', headers: { 'content-type': 'application/json' } }), 400, 'invalid_json');
  });

  it('415 for a body that is not JSON', async () => {
    expectError(await server.api('POST', `${base()}/job`, { key, body: 'prompt=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type');
    expectError(await server.api('POST', `${base()}/job`, { key, body: 'hello', headers: { 'content-type': 'text/plain' } }), 415, 'unsupported_media_type');
  });

  it('413 for a body over the limit', async () => {
    const res = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'z'.repeat(1024 * 1024 + 10) } });
    expectError(res, 413, 'payload_too_large');
  });

  it('404 for an unknown project with a key of that project id is impossible; another project is 403', async () => {
    const other = await server.createProject({ name: 'Other' });
    expectError(await server.api('POST', `/v2/agent/${other}/job`, { key, body: { prompt: 'x' } }), 403, 'wrong_project');
    expectError(await server.api('POST', `/v2/agent/prj_nope/job`, { key, body: { prompt: 'x' } }), 403, 'wrong_project');
  });
});

describe('authentication', () => {
  it('401 without a key, with WWW-Authenticate', async () => {
    const res = await server.api('GET', `${base()}/jobs`);
    expectError(res, 401, 'missing_api_key');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['Basic auth', 'Basic Zm9vOmJhcg=='],
    ['empty bearer', 'Bearer '],
  ])('401 missing_api_key for %s', async (_n, header) => {
    expectError(await server.api('GET', `${base()}/jobs`, { headers: { authorization: header } }), 401, 'missing_api_key');
  });

  it('401 for a key that is not Folio\'s, a malformed one and an unknown one, each said plainly', async () => {
    const foreign = await server.api('GET', `${base()}/jobs`, { key: 'sk-123' });
    expectError(foreign, 401, 'invalid_api_key');
    expect(foreign.body.error).toBe('The API key is not a Folio key; keys start with "folio_".');
    // The right prefix, the wrong shape (cut short, or with a character no key has): malformed, not "not a Folio key".
    for (const key of ['folio_bad', 'folio_' + 'A'.repeat(39) + '-']) {
      const malformed = await server.api('GET', `${base()}/jobs`, { key });
      expectError(malformed, 401, 'malformed_api_key');
      expect(malformed.body.error).toMatch(/^The API key is malformed/);
      expect(malformed.body.error).not.toContain('start with');
      expect(malformed.headers.get('www-authenticate')).toMatch(/^Bearer/);
    }
    const unknown = await server.api('GET', `${base()}/jobs`, { key: 'folio_' + 'A'.repeat(40) });
    expectError(unknown, 401, 'invalid_api_key');
    expect(unknown.body.error).toBe('The API key is not known to this server.');
  });

  it('401 for a revoked key and an expired key', async () => {
    const k = await server.createKey(projectId);
    const row = (await server.services.keys.store.list(projectId)).at(-1)!;
    await server.services.keys.revoke(row.id);
    expectError(await server.api('GET', `${base()}/jobs`, { key: k }), 401, 'revoked_api_key');
    const expired = await server.createKey(projectId, 'write', Date.now() - 1000);
    expectError(await server.api('GET', `${base()}/jobs`, { key: expired }), 401, 'expired_api_key');
  });

  it('a key the server has cached is refused once revoked or expired, on every later request', async () => {
    const k = await server.createKey(projectId);
    expect((await server.api('GET', `${base()}/jobs`, { key: k })).status).toBe(200);
    expect((await server.api('GET', `${base()}/jobs`, { key: k })).status).toBe(200); // from the cache
    await server.services.keys.revoke((await server.services.keys.store.list(projectId)).at(-1)!.id);
    for (let i = 0; i < 2; i++) expectError(await server.api('GET', `${base()}/jobs`, { key: k }), 401, 'revoked_api_key');
    const soon = await server.createKey(projectId, 'write', Date.now() + 400);
    expect((await server.api('GET', `${base()}/jobs`, { key: soon })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    for (let i = 0; i < 2; i++) expectError(await server.api('GET', `${base()}/jobs`, { key: soon }), 401, 'expired_api_key');
  });

  it('a read key can read but not write', async () => {
    expect((await server.api('GET', `${base()}/jobs`, { key: readKey })).status).toBe(200);
    expectError(await server.api('POST', `${base()}/job`, { key: readKey, body: { prompt: 'x' } }), 403, 'insufficient_scope');
  });

  it('records lastUsedAt', async () => {
    const k = await server.createKey(projectId, 'read');
    const mine = async () => (await server.services.keys.store.list(projectId)).find((r) => k.startsWith(r.prefix))!;
    expect((await mine()).last_used_at).toBeNull();
    await server.api('GET', `${base()}/jobs`, { key: k });
    const row = await eventually(async () => {
      const r = await mine();
      return r.last_used_at !== null ? r : null;
    });
    expect(row.last_used_at).toBeGreaterThan(Date.now() - 60_000);
  });
});

describe('get job', () => {
  it('200 for a job, 404 for an unknown id and for another project\'s job', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x' } })).body;
    const got = await server.api('GET', `${base()}/job/${created.id}`, { key: readKey });
    expect(got.status).toBe(200);
    expect(got.body.id).toBe(created.id);
    expectError(await server.api('GET', `${base()}/job/job_00000000000000000000000000`, { key }), 404, 'job_not_found');

    const other = await server.createProject({ name: 'Another' });
    const otherKey = await server.createKey(other);
    expectError(await server.api('GET', `/v2/agent/${other}/job/${created.id}`, { key: otherKey }), 404, 'job_not_found');
  });

  it('a job completes and records the summary; prLink stays null without changes', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'complete me' } })).body;
    const done = await eventually(async () => {
      const j = (await server.api('GET', `${base()}/job/${created.id}`, { key })).body;
      return j.status === 'completed' ? j : null;
    });
    expect(done.prLink).toBeNull();
    const messages = (await server.api('GET', `${base()}/job/${created.id}/messages`, { key })).body.messages;
    expect(messages).toHaveLength(1);
    expect(messages[0]).toMatchObject({ seq: 1, prompt: 'complete me', outcome: 'completed', summary: 'Handled: complete me' });
    expect(messages[0].handledAt).not.toBeNull();
  });
});

describe('follow-up messages', () => {
  it('reopens a completed job, queues in order, and handles every message', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'first' } })).body;
    await eventually(async () => (await server.api('GET', `${base()}/job/${created.id}`, { key })).body.status === 'completed');
    const res = await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'second' } });
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('active');
    await eventually(async () => (await server.api('GET', `${base()}/job/${created.id}`, { key })).body.status === 'completed');
    const turns = handler.turns.filter((t) => t.jobId === created.id);
    expect(turns.map((t) => t.prompt)).toEqual(['first', 'second']);
    expect(turns[1].historyLength).toBe(2);
  });

  it('400 for an empty prompt or unknown field, 404 for an unknown job', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x' } })).body;
    expectError(await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: '' } }), 400, 'invalid_request');
    expectError(await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'x', model: 'openai/gpt-5' } }), 400, 'invalid_request');
    expectError(await server.api('POST', `${base()}/job/job_nope/message`, { key, body: { prompt: 'x' } }), 404, 'job_not_found');
  });

  it('409 job_archived for an archived job, without using a rate-limit slot', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x' } })).body;
    await server.api('POST', `${base()}/job/${created.id}/archive`, { key });
    const res = await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'more' } });
    expectError(res, 409, 'job_archived');
    expect(res.headers.get('ratelimit-remaining')).toBeNull();
  });

  it('a failed job reports its error and a follow-up reopens it', async () => {
    handler.script = async (ctx) => {
      if (ctx.message.prompt === 'fail please') return failingScript('model_error', 'The provider said no.')();
      return { title: 't', summary: 'fixed', prLink: 'https://github.com/acme/docs/pull/7' };
    };
    try {
      const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'fail please' } })).body;
      const failed = await eventually(async () => {
        const j = (await server.api('GET', `${base()}/job/${created.id}`, { key })).body;
        return j.status === 'failed' ? j : null;
      });
      expect(failed.error).toEqual({ code: 'model_error', message: 'The provider said no.' });
      const reopened = await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'try again' } });
      expect(reopened.body).toMatchObject({ status: 'active', error: null });
      const done = await eventually(async () => {
        const j = (await server.api('GET', `${base()}/job/${created.id}`, { key })).body;
        return j.status === 'completed' ? j : null;
      });
      expect(done.prLink).toBe('https://github.com/acme/docs/pull/7');
    } finally {
      handler.script = undefined;
    }
  });
});

describe('archive', () => {
  it('archives, is idempotent, and stops a running job', async () => {
    const gate = gatedScript();
    handler.script = gate.script;
    try {
      const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'long' } })).body;
      await gate.started;
      const res = await server.api('POST', `${base()}/job/${created.id}/archive`, { key });
      expect(res.status).toBe(200);
      expect(res.body.status).toBe('archived');
      expect(res.body.archivedAt).not.toBeNull();
      const again = await server.api('POST', `${base()}/job/${created.id}/archive`, { key });
      expect(again.body.archivedAt).toBe(res.body.archivedAt);
      await eventually(async () => server.services.workers!.activeRuns === 0);
      const final = (await server.api('GET', `${base()}/job/${created.id}`, { key })).body;
      expect(final.status).toBe('archived');
      const events = (await server.api('GET', `${base()}/job/${created.id}/events`, { key })).body.events.map((e: any) => e.type);
      expect(events).toContain('job.archived');
      expect(events).toContain('run.stopped');
    } finally {
      handler.script = undefined;
    }
  });

  it('404 for an unknown job; 403 with a read key', async () => {
    expectError(await server.api('POST', `${base()}/job/job_nope/archive`, { key }), 404, 'job_not_found');
    expectError(await server.api('POST', `${base()}/job/job_nope/archive`, { key: readKey }), 403, 'insufficient_scope');
  });
});

describe('list jobs', () => {
  it('pages newest first with an opaque cursor and filters by status', async () => {
    const p = await server.createProject({ name: 'Listing' });
    const k = await server.createKey(p);
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) ids.push((await server.api('POST', `/v2/agent/${p}/job`, { key: k, body: { prompt: `job ${i}` } })).body.id);
    const seen: string[] = [];
    let cursor: string | null = null;
    do {
      const q: string = cursor ? `?limit=3&cursor=${encodeURIComponent(cursor)}` : '?limit=3';
      const page: any = (await server.api('GET', `/v2/agent/${p}/jobs${q}`, { key: k })).body;
      expect(page.jobs.length).toBeLessThanOrEqual(3);
      seen.push(...page.jobs.map((j: any) => j.id));
      expect(page.hasMore).toBe(page.nextCursor !== null);
      cursor = page.nextCursor;
    } while (cursor);
    expect(seen).toEqual([...ids].reverse());

    await server.api('POST', `/v2/agent/${p}/job/${ids[2]}/archive`, { key: k });
    const archived = (await server.api('GET', `/v2/agent/${p}/jobs?status=archived`, { key: k })).body;
    expect(archived.jobs.map((j: any) => j.id)).toEqual([ids[2]]);
    const defaults = (await server.api('GET', `/v2/agent/${p}/jobs`, { key: k })).body;
    expect(defaults.jobs).toHaveLength(7);
  });

  it.each(['limit=0', 'limit=101', 'limit=abc', 'limit=1.5', 'status=running', 'cursor=garbage', 'foo=bar'])('400 for %s', async (q) => {
    const res = await server.api('GET', `${base()}/jobs?${q}`, { key });
    expect(res.status).toBe(400);
    expect(['invalid_request', 'invalid_cursor']).toContain(res.body.code);
  });
});

describe('idempotency', () => {
  it('replays the first response for the same key and body, 422 for another body', async () => {
    const headers = { 'idempotency-key': 'create-123' };
    const first = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'once' }, headers });
    const second = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'once' }, headers });
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.get('idempotent-replayed')).toBe('true');
    const other = await server.api('POST', `${base()}/job`, { key, body: { prompt: 'twice' }, headers });
    expectError(other, 422, 'idempotency_key_reused');
    const rows = await server.services.store.db.selectFrom('job_messages').select('job_id').where('prompt', '=', 'once').execute();
    expect(rows).toHaveLength(1);
  });

  it('works for follow-ups and rejects a malformed key', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x' } })).body;
    const headers = { 'idempotency-key': 'msg-1' };
    await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'again' }, headers });
    await server.api('POST', `${base()}/job/${created.id}/message`, { key, body: { prompt: 'again' }, headers });
    const msgs = (await server.api('GET', `${base()}/job/${created.id}/messages`, { key })).body.messages;
    expect(msgs.filter((m: any) => m.prompt === 'again')).toHaveLength(1);
    expectError(await server.api('POST', `${base()}/job`, { key, body: { prompt: 'x' }, headers: { 'idempotency-key': 'a'.repeat(300) } }), 400, 'invalid_idempotency_key');
  });
});

describe('events', () => {
  it('pages events with after and limit', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'events' } })).body;
    await eventually(async () => (await server.api('GET', `${base()}/job/${created.id}`, { key })).body.status === 'completed');
    const all = (await server.api('GET', `${base()}/job/${created.id}/events`, { key })).body;
    const types = all.events.map((e: any) => e.type);
    expect(types).toEqual(expect.arrayContaining(['job.created', 'run.started', 'test.turn', 'turn.completed']));
    const page = (await server.api('GET', `${base()}/job/${created.id}/events?after=1&limit=2`, { key })).body;
    expect(page.events.map((e: any) => e.id)).toEqual([2, 3]);
    expect(page.hasMore).toBe(all.events.length > 3);
    expect(page.nextAfter).toBe(3);
    expectError(await server.api('GET', `${base()}/job/${created.id}/events?after=-1`, { key }), 400, 'invalid_request');
  });

  it('streams events as SSE and resumes from Last-Event-ID', async () => {
    const created = (await server.api('POST', `${base()}/job`, { key, body: { prompt: 'stream' } })).body;
    await eventually(async () => (await server.api('GET', `${base()}/job/${created.id}`, { key })).body.status === 'completed');
    const read = async (headers: Record<string, string>) => {
      const ctrl = new AbortController();
      const res = await fetch(`${server.url}${base()}/job/${created.id}/events`, { headers: { authorization: `Bearer ${key}`, accept: 'text/event-stream', ...headers }, signal: ctrl.signal });
      expect(res.headers.get('content-type')).toContain('text/event-stream');
      const reader = res.body!.getReader();
      let text = '';
      const ids: number[] = [];
      while (!text.includes('event: turn.completed')) {
        const { value, done } = await reader.read();
        if (done) break;
        text += new TextDecoder().decode(value);
      }
      ctrl.abort();
      for (const m of text.matchAll(/^id: (\d+)$/gm)) ids.push(Number(m[1]));
      return ids;
    };
    const all = await read({});
    expect(all[0]).toBe(1);
    const resumed = await read({ 'last-event-id': '2' });
    expect(resumed[0]).toBe(3);
    expect(resumed).toEqual(all.filter((i) => i > 2));
  });
});

describe('platform routes', () => {
  it('400 for NUL in path and query values', async () => {
    expectError(await server.api('GET', `${base()}/job/job%00x`, { key }), 400, 'invalid_request');
    expectError(await server.api('GET', `${base()}/jobs?cursor=%00`, { key }), 400, 'invalid_request');
  });

  it('404 route_not_found and 405 with Allow', async () => {
    expectError(await server.api('GET', '/v2/nothing', { key }), 404, 'route_not_found');
    const res = await server.api('DELETE', `${base()}/job/job_x`, { key });
    expectError(res, 405, 'method_not_allowed');
    expect(res.headers.get('allow')).toContain('GET');
  });

  it('health, readiness, metrics, OpenAPI and the reference page', async () => {
    expect((await server.api('GET', '/healthz')).body).toEqual({ status: 'ok' });
    expect((await server.api('GET', '/readyz')).body).toEqual({ status: 'ready' });
    const metrics = (await server.api('GET', '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).text;
    expect(metrics).toContain('folio_http_requests_total{method="POST",route="/v2/agent/:projectId/job",status="201"}');
    expect(metrics).toMatch(/folio_jobs\{status="completed"\} \d+/);
    expect(metrics).toContain('folio_queue_depth');
    expect(metrics).toContain('folio_http_request_duration_seconds_bucket');
    const doc = (await server.api('GET', '/openapi.json')).body;
    expect(doc.openapi).toBe('3.1.0');
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(['/v2/agent/{projectId}/job', '/v2/agent/{projectId}/job/{id}', '/v2/agent/{projectId}/job/{id}/message', '/v2/agent/{projectId}/job/{id}/changes', '/v2/agent/{projectId}/usage']),
    );
    const job = doc.components.schemas.AgentJob;
    expect(job.required).toEqual(expect.arrayContaining(['files', 'usage']));
    expect(Object.keys(job.properties.files.items.properties).sort()).toEqual(['additions', 'binary', 'deletions', 'path', 'previousPath', 'status']);
    expect(Object.keys(job.properties.usage.properties).sort()).toEqual(['estimatedCostUsd', 'inputTokens', 'outputTokens', 'totalTokens']);
    expect(doc.components.schemas.AgentJobChanges.properties.checks).toBeTruthy();
    const docs = await fetch(`${server.url}/docs`, { redirect: 'follow' });
    expect(docs.status).toBe(200);
    expect(await docs.text()).toContain('swagger');
  });
});
