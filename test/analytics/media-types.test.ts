// Only the browser's collect endpoint takes text/plain; the keyed ingest endpoints answer 415.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';

let server: TestServer;
let projectId: string;
let key: string;
beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
  projectId = await server.createProject();
  key = await server.createKey(projectId);
});
afterAll(() => server.close());

describe('media types of the analytics ingest endpoints', () => {
  const event = JSON.stringify({ events: [{ path: '/a', userAgent: 'Mozilla/5.0', ip: '203.0.113.9' }] });

  it('events: 415 for text/plain, 202 for JSON', async () => {
    const plain = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: event, headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(415);
    expect(plain.body.code).toBe('unsupported_media_type');
    const json = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: event });
    expect(json.status).toBe(202);
    expect(json.body.accepted).toBe(1);
  });

  it('import: 415 for JSON; text/plain is a raw access log', async () => {
    const body = '{"t":1,"p":"/a","ua":"x"}\n';
    const json = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body, headers: { 'content-type': 'application/json' } });
    expect([json.status, json.body.code]).toEqual([415, 'unsupported_media_type']);
    // An NDJSON record is not a log line: read as a raw log, it is skipped, not stored.
    const plain = await server.api('POST', `/v1/analytics/${projectId}/import`, { key, body, headers: { 'content-type': 'text/plain' } });
    expect(plain.status).toBe(200);
    expect(plain.body).toMatchObject({ received: 1, recorded: 0, skipped: { unparseable: 1 } });
  });
});
