// Property-based fuzzing of the job API: whatever the body, path, query or headers, never a 5xx and
// every error has the documented body. A fixed seed (FUZZ_SEED) keeps runs repeatable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';
import { FUZZ_SEED } from '../helpers/fuzz.ts';

let server: TestServer;
let projectId: string;
let key: string;
let jobId: string;

beforeAll(async () => {
  server = await startTestServer({ jobHandler: new ScriptedHandler(), env: { FOLIO_RATE_LIMIT_CREATE: '0', FOLIO_RATE_LIMIT_FOLLOW_UP: '0' } });
  projectId = await server.createProject();
  key = await server.createKey(projectId);
  jobId = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'seed' } })).body.id;
});
afterAll(() => server.close());

function assertWellFormed(res: { status: number; body: any; text: string }) {
  expect(res.status, res.text).toBeLessThan(500);
  if (res.status >= 400) {
    expect(typeof res.body?.error, res.text).toBe('string');
    expect(typeof res.body?.code, res.text).toBe('string');
  }
}

const json = fc.jsonValue({ maxDepth: 3 });
const segment = fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('job_x', '..', '%00', '%ZZ', '😀', ' ', 'a'.repeat(600)));

describe('fuzzing', () => {
  it('bodies of any shape on the POST routes', async () => {
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('job', `job/${jobId}/message`), fc.oneof(json, fc.record({ prompt: json }), fc.record({ prompt: fc.string(), model: json })), async (route, body) => {
        assertWellFormed(await server.api('POST', `/v2/agent/${projectId}/${route}`, { key, body }));
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });

  it('raw bytes and content types', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 200 }), fc.constantFrom('application/json', 'application/json; charset=utf-8', 'text/plain', 'application/xml', 'multipart/form-data', ''), async (raw, ct) => {
        const headers: Record<string, string> = ct ? { 'content-type': ct } : {};
        assertWellFormed(await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: raw, headers }));
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });

  it('path segments and query strings', async () => {
    await fc.assert(
      fc.asyncProperty(segment, segment, fc.dictionary(fc.constantFrom('limit', 'cursor', 'status', 'after', 'x'), fc.string({ maxLength: 30 })), async (p, id, query) => {
        const qs = new URLSearchParams(query).toString();
        const safe = (s: string) => (/%|\.\./.test(s) ? s : encodeURIComponent(s));
        for (const url of [`/v2/agent/${safe(p)}/jobs?${qs}`, `/v2/agent/${projectId}/job/${safe(id)}`, `/v2/agent/${projectId}/jobs?${qs}`, `/v2/agent/${projectId}/job/${safe(id)}/events?${qs}`]) {
          assertWellFormed(await server.api('GET', url, { key }));
        }
      }),
      { seed: FUZZ_SEED, numRuns: 100 },
    );
  });

  it('headers: authorization and idempotency keys', async () => {
    await fc.assert(
      fc.asyncProperty(fc.string({ maxLength: 80 }).filter((s) => !/[\r\n\0]/.test(s)), fc.string({ maxLength: 300 }).filter((s) => !/[\r\n\0]/.test(s)), async (auth, idem) => {
        let res;
        try {
          res = await server.api('POST', `/v2/agent/${projectId}/job`, { body: { prompt: 'x' }, headers: { authorization: auth, 'idempotency-key': idem } });
        } catch (err) {
          // fetch refuses some header values itself (non-ByteString); nothing reached the server.
          expect(String(err)).toMatch(/header|ByteString|Invalid/i);
          return;
        }
        assertWellFormed(res);
        expect(res.status).not.toBe(201);
      }),
      { seed: FUZZ_SEED, numRuns: 150 },
    );
  });
});
