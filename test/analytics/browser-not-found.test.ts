// The browser script in a real browser (headless Chromium): ordinary pages are page views, a static
// 404 page (data-status="404" on the tag) and a single-page site's not-found view (folio.notFound())
// are not-found views and nothing else.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

describe('browser script: pages not found', () => {
  let server: TestServer;
  let site: http.Server;
  let siteUrl: string;
  let browser: Browser;
  let projectId: string;
  let key: string;

  const page = (body: string, tag = '') =>
    `<!doctype html><html><head><title>Docs</title><script defer src="${server.url}/v1/analytics/script.js" data-project="${projectId}" ${tag}></script></head><body>${body}</body></html>`;

  beforeAll(async () => {
    server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
    site = http.createServer((req, res) => {
      const url = req.url ?? '/';
      const html = url.startsWith('/missing')
        ? page('<h1>Page not found</h1>', 'data-status="404"')
        : url.startsWith('/spa')
          ? page(`<h1>App</h1><script>addEventListener('load', () => setTimeout(() => { history.pushState({}, '', '/spa/gone'); folio.notFound(); }, 50));</script>`)
          : page('<h1>Guide</h1>');
      res.writeHead(url.startsWith('/missing') ? 404 : 200, { 'content-type': 'text/html' }).end(html);
    });
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
    siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
    projectId = await server.createProject({ siteOrigins: [siteUrl] });
    key = await server.createKey(projectId, 'read');
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    site?.close();
    await server?.close();
  });

  async function report(name: 'visitors' | 'not-found'): Promise<{ path: string; total: number }[]> {
    const res = await server.api('GET', `/v1/analytics/${projectId}/${name}?limit=250`, { key });
    return (name === 'visitors' ? res.body.visitors : res.body.paths).map((r: { path: string; total: number }) => ({ path: r.path, total: r.total }));
  }

  it('reports a static 404 page and a single-page not-found view as not found, and only there', async () => {
    // A reader's browser (a headless browser's own user agent is a bot's, and bots are not counted).
    const context = await browser.newContext({ userAgent: 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36' });
    const tab = await context.newPage();
    for (const path of ['/guide', '/missing/page', '/spa']) {
      await tab.goto(`${siteUrl}${path}`);
      await tab.waitForTimeout(600);
    }
    await context.close();
    const deadline = Date.now() + 10_000;
    while ((await report('not-found')).length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    expect(await report('not-found')).toEqual([
      { path: '/missing/page', total: 1 },
      { path: '/spa/gone', total: 1 },
    ]);
    expect(await report('visitors')).toEqual([
      { path: '/guide', total: 1 },
      { path: '/spa', total: 1 },
    ]);
  }, 60_000);
});
