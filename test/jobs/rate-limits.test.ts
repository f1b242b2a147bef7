// Rate limits are exact under concurrency: counted in the same transaction as the write.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler } from '../helpers/handlers.ts';

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobHandler: new ScriptedHandler({ delayMs: 5 }), env: { FOLIO_RATE_LIMIT_CREATE: '5' } });
});
afterAll(() => server.close());

describe('rate limits', () => {
  it('150 concurrent follow-ups to one project: exactly 100 accepted, 50 rejected with 429', async () => {
    const projectId = await server.createProject();
    const key = await server.createKey(projectId);
    const jobs: string[] = [];
    for (let i = 0; i < 3; i++) jobs.push((await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: `j${i}` } })).body.id);
    const results = await Promise.all(
      Array.from({ length: 150 }, (_, i) => server.api('POST', `/v2/agent/${projectId}/job/${jobs[i % 3]}/message`, { key, body: { prompt: `m${i}` } })),
    );
    const ok = results.filter((r) => r.status === 200);
    const limited = results.filter((r) => r.status === 429);
    expect(ok).toHaveLength(100);
    expect(limited).toHaveLength(50);
    for (const r of limited) {
      expect(r.body.code).toBe('rate_limited');
      expect(Number(r.headers.get('retry-after'))).toBeGreaterThan(0);
      expect(r.headers.get('ratelimit-limit')).toBe('100');
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
      expect(Number(r.headers.get('ratelimit-reset'))).toBeGreaterThan(0);
    }
    const remaining = ok.map((r) => Number(r.headers.get('ratelimit-remaining'))).sort((a, b) => a - b);
    expect(remaining).toEqual(Array.from({ length: 100 }, (_, i) => i));
    // Exactly the accepted messages were stored.
    const stored = await server.services.store.db.selectFrom('job_messages').select('seq').where('job_id', 'in', jobs).where('seq', '>', 1).execute();
    expect(stored).toHaveLength(100);
  });

  it('counts per project: another project has its own window', async () => {
    const a = await server.createProject({ name: 'A' });
    const b = await server.createProject({ name: 'B' });
    const ka = await server.createKey(a);
    const kb = await server.createKey(b);
    const create = (p: string, k: string) => server.api('POST', `/v2/agent/${p}/job`, { key: k, body: { prompt: 'x' } });
    const statuses = [];
    for (let i = 0; i < 6; i++) statuses.push((await create(a, ka)).status);
    expect(statuses).toEqual([201, 201, 201, 201, 201, 429]);
    expect((await create(b, kb)).status).toBe(201);
  });
});
