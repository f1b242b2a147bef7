// A newcomer's first hour in the dashboard, in a real browser at desktop and phone widths: a typo in
// the repository URL is refused when the project is made, a host that does not answer is a warning,
// the repository hint does not contradict itself, project cards lead to Insights and Usage, the
// Settings label says what the value is, and an unknown address gets the dashboard's not-found page.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp } from '../dashboard/session.ts';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';

let server: TestServer;
let host: CodeHostServer;
let browser: Browser;
let deadUrl: string;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  host = await startCodeHost();
  host.createRepo('acme/docs', { 'index.md': '# Docs\n' });
  const s = http.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  deadUrl = `http://127.0.0.1:${(s.address() as AddressInfo).port}/acme/docs.git`;
  await new Promise((r) => s.close(r));
  // http and local repositories allowed (LOCAL_GIT_ENV), and the repository check on.
  server = await startTestServer({ workers: 0, env: { FOLIO_REPOSITORY_CHECK: 'true' } });
  await setUp(server);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
  await host?.close();
});

describe("a newcomer's first project", () => {
  for (const [name, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]] as const) {
    it(`is refused for a typo, made with a warning when the host does not answer, and leads everywhere (${name}, ${width} px)`, async () => {
      const page = await signedInPage(browser, server, { width, height }, errors);
      const form = async () => {
        // The form is open on a first visit; with projects listed, "New project" opens it.
        const button = page.getByRole('button', { name: 'New project' });
        await button.or(page.getByRole('heading', { name: 'New project' })).first().waitFor();
        if (await button.isVisible()) await button.click();
        await page.getByLabel('Name').fill(`Docs ${name}`);
      };
      await form();
      const hint = (await page.getByText('The git repository of your docs').textContent())!;
      expect(hint).toContain('http://');
      expect(hint).not.toContain('HTTPS URLs only');
      // A typo in the name: refused then, with the URL it tried.
      const typo = `${host.origin}/acme/dcos.git`;
      await page.getByLabel('Repository URL').fill(typo);
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByText(`Repository ${typo} was not found`).waitFor();
      // A host that does not answer: made, with the warning.
      await page.getByLabel('Repository URL').fill(deadUrl);
      await page.getByRole('button', { name: 'Create project' }).click();
      await page.getByRole('heading', { name: 'Project created' }).waitFor();
      expect(await page.getByRole('status').filter({ hasText: `Repository ${deadUrl} could not be checked` }).count()).toBe(1);
      await page.getByRole('link', { name: /Continue to Docs/ }).click();
      await page.waitForURL('**/keys');
      // The project card leads to Insights and Usage.
      await page.getByRole('link', { name: 'Projects' }).first().click();
      const card = page.getByRole('navigation', { name: `Docs ${name} shortcuts` });
      await card.getByRole('link', { name: 'Usage' }).click();
      await page.waitForURL('**/usage');
      await page.goBack();
      await card.getByRole('link', { name: 'Insights' }).click();
      await page.waitForURL('**/insights');
      // Settings: the weekly job's field says it is a number of visitors.
      await page.getByRole('link', { name: 'Settings' }).click();
      await page.getByLabel('Weekly automatic fix: visitors a broken path needs').waitFor();
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      // An unknown address: the dashboard's own not-found page, with status 404.
      const res = await page.goto(`${server.url}/project/typo`);
      expect(res!.status()).toBe(404);
      await page.getByRole('heading', { name: 'Page not found' }).waitFor();
      await page.getByRole('link', { name: 'Go to your projects' }).waitFor();
      await page.context().close();
    }, 90_000);
  }

  it('keeps the JSON 404 for API clients and API paths', async () => {
    const api = await fetch(`${server.url}/project/typo`, { headers: { accept: 'application/json' } });
    expect(api.status).toBe(404);
    expect((await api.json()).code).toBe('route_not_found');
    const under = await fetch(`${server.url}/v1/nothing`, { headers: { accept: 'text/html' } });
    expect((await under.json()).code).toBe('route_not_found');
    const page = await fetch(`${server.url}/nothing`, { headers: { accept: 'text/html,application/xhtml+xml' } });
    expect(page.status).toBe(404);
    expect(page.headers.get('content-security-policy')).toContain("default-src 'self'");
    expect(await page.text()).toContain('<div id="root">');
  });

  it('ran without script errors in the page', () => {
    expect(errors).toEqual([]);
  });
});
