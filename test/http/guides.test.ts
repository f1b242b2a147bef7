// The guides the API reference names (docs/*.md) are served by every Folio server at
// /docs/guides/<name>.md, and every mention of one in the OpenAPI document is a link there.
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ROOT } from '../helpers/process.ts';

let server: TestServer;
beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
});
afterAll(async () => server?.close());

const get = (url: string) => server.app.inject({ method: 'GET', url });

/** A GET of exactly this path over HTTP: fetch would resolve `%2e%2e` and `..` before sending. */
function rawGet(rawPath: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(server.url + '/', { path: rawPath }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (c: string) => (body += c)).on('end', () => resolve({ status: res.statusCode!, body }));
    });
    req.on('error', reject).end();
  });
}

describe('GET /docs/guides/:name', () => {
  it('serves a guide of the docs folder as Markdown, without a key', async () => {
    const res = await get('/docs/guides/errors.md');
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(res.body).toBe(readFileSync(`${ROOT}/docs/errors.md`, 'utf8'));
  });

  it.each([
    ['/docs/guides/nope.md', 404, 'doc_not_found'],
    ['/docs/guides/ERRORS.md', 404, 'doc_not_found'],
    ['/docs/guides/errors', 404, 'doc_not_found'],
    ['/docs/guides/container-smoke-output.txt', 404, 'doc_not_found'],
    ['/docs/guides/..%2Fpackage.json', 404, 'doc_not_found'],
    ['/docs/guides/..%2FREADME.md', 404, 'doc_not_found'],
    ['/docs/guides/%2e%2e%2fREADME.md', 404, 'doc_not_found'],
    ['/docs/guides/screenshots', 404, 'doc_not_found'],
  ])('answers %s with %i %s', async (url, status, code) => {
    const res = await get(url);
    expect(res.statusCode).toBe(status);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toMatchObject({ code, error: expect.stringMatching(/guide/) });
  });

  it('refuses paths that leave the guides folder or carry a NUL, with a JSON code and never a file', async () => {
    for (const url of ['/docs/guides/%2e%2e/', '/docs/guides/%2e%2e/package.json', '/docs/guides/../../package.json', '/docs/guides/errors.md%00', '/docs/guides/%00.md']) {
      const res = await rawGet(url);
      const body = res.body;
      expect([400, 404], url).toContain(res.status);
      expect(JSON.parse(body).code, url).toMatch(/^[a-z_]+$/);
      expect(body, url).not.toContain('"name": "folio');
    }
  });
});

describe('the OpenAPI document', () => {
  it('links every docs/<name>.md it names to the guides route, and each link answers 200', async () => {
    const text = (await get('/openapi.json')).body;
    const link = /\[docs\/([a-z0-9-]+)\.md\]\(\/docs\/guides\/\1\.md\)/g;
    const linked = [...text.matchAll(link)].map((m) => m[1]);
    expect(linked).toEqual(expect.arrayContaining(['errors', 'triggers', 'analytics']));
    // With the links taken out, no bare mention of a guide is left.
    expect(text.replace(link, '').match(/docs\/[A-Za-z0-9_.-]+\.md/g)).toBeNull();
    for (const name of new Set(linked)) expect((await get(`/docs/guides/${name}.md`)).statusCode, name).toBe(200);
  });
});
