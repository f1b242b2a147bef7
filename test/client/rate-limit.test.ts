// Retries on a real 429 from Folio's own rate limiter, honouring Retry-After.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FolioClient, FolioError } from '../../src/client/index.ts';
import { ScriptedHandler } from './fixtures/handler.ts';

const HOUR_MS = 3_600_000;

let server: TestServer;

beforeAll(async () => {
  server = await startTestServer({ jobHandler: new ScriptedHandler(), env: { FOLIO_RATE_LIMIT_CREATE: '1' } });
});

afterAll(async () => {
  await server?.close();
});

/** Moves the project's counted creations back so the rolling hour frees a slot in about `ms`. */
async function freeSlotIn(projectId: string, ms: number): Promise<void> {
  await server.services.store.db
    .updateTable('rate_events')
    .set({ at: Date.now() - HOUR_MS + ms })
    .where('project_id', '=', projectId)
    .execute();
}

it('waits for Retry-After on a 429 and then succeeds with the same Idempotency-Key', async () => {
  const projectId = await server.createProject();
  const seen: { status: number; retryAfter: string | null; remaining: string | null }[] = [];
  const keys: string[] = [];
  const client = new FolioClient({
    baseUrl: server.url,
    apiKey: await server.createKey(projectId),
    projectId,
    fetch: async (input, init) => {
      keys.push(new Headers(init?.headers).get('idempotency-key') ?? '');
      return fetch(input, init);
    },
    onResponse: (r) => seen.push({ status: r.status, retryAfter: r.headers.get('retry-after'), remaining: r.headers.get('ratelimit-remaining') }),
  });

  await client.createJob('complete: uses the only slot');
  await freeSlotIn(projectId, 1_500);
  const second = await client.createJob('complete: has to wait for the slot');
  expect(second.status).toBe('active');

  expect(seen.map((s) => s.status)).toEqual([201, 429, 201]);
  const limited = seen[1];
  expect(Number(limited.retryAfter)).toBeGreaterThanOrEqual(1);
  expect(Number(limited.retryAfter)).toBeLessThanOrEqual(2);
  expect(limited.remaining).toBe('0');
  // The retry is the same logical call: one key for both attempts, a new key for the next call.
  expect(keys[1]).toBe(keys[2]);
  expect(keys[0]).not.toBe(keys[1]);

  const { jobs } = await client.listJobsPage();
  expect(jobs).toHaveLength(2);
});

it('throws the 429 at once when Retry-After is longer than maxRetryAfterMs', async () => {
  const projectId = await server.createProject();
  const statuses: number[] = [];
  const client = new FolioClient({ baseUrl: server.url, apiKey: await server.createKey(projectId), projectId, onResponse: (r) => statuses.push(r.status) });
  await client.createJob('complete: the only slot this hour');
  const err = (await client.createJob('complete: too many').catch((e: unknown) => e)) as FolioError;
  expect(err).toBeInstanceOf(FolioError);
  expect(err.status).toBe(429);
  expect(err.code).toBe('rate_limited');
  expect(err.message).toContain('Rate limit exceeded');
  expect(err.retryAfter).toBeGreaterThan(3_000);
  expect(statuses).toEqual([201, 429]);
});

it('does not retry a 429 for a POST sent without an Idempotency-Key', async () => {
  const projectId = await server.createProject();
  const statuses: number[] = [];
  const client = new FolioClient({ baseUrl: server.url, apiKey: await server.createKey(projectId), projectId, onResponse: (r) => statuses.push(r.status) });
  await client.createJob('complete: first');
  await freeSlotIn(projectId, 1_000);
  await expect(client.createJob('complete: second', { idempotencyKey: false })).rejects.toMatchObject({ status: 429 });
  expect(statuses).toEqual([201, 429]);
});
