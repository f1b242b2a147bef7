// The Insights page in a real browser, at desktop and phone widths: pages not found with where their
// readers came from, the readers AI answers sent per day, and the sources by kind.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp } from '../dashboard/session.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

let server: TestServer;
let browser: Browser;
let projectId: string;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  server = await startTestServer({ workers: 0, env: { FOLIO_RATE_LIMIT_ANALYTICS: '0' } });
  await setUp(server);
  projectId = await server.createProject({ name: 'Docs' });
  const key = await server.createKey(projectId);
  const now = Date.now();
  const at = (hoursAgo: number) => new Date(now - hoursAgo * 3_600_000).toISOString();
  const events = [
    { timestamp: at(2), path: '/docs/old-install', userAgent: HUMAN_UA, visitorId: 'h1', referrer: 'https://chatgpt.com/c/1', status: 404 },
    { timestamp: at(3), path: '/docs/old-install', userAgent: AI_UA, visitorId: 'a1', status: 404 },
    { timestamp: at(4), path: '/docs/gone', userAgent: HUMAN_UA, visitorId: 'h2', status: 410 },
    { timestamp: at(2), path: '/docs/install', userAgent: HUMAN_UA, visitorId: 'h1', referrer: 'https://chatgpt.com/c/1' },
    { timestamp: at(2), path: '/docs/install', userAgent: HUMAN_UA, visitorId: 'h3', referrer: 'https://www.google.com/search?q=x' },
    { timestamp: at(2), path: '/docs', userAgent: HUMAN_UA, visitorId: 'h4' },
  ];
  const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
  expect(res.body.rejected).toEqual([]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('Insights', () => {
  for (const [name, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]] as const) {
    it(`shows pages not found, AI referrals and sources (${name}, ${width} px)`, async () => {
      const page = await signedInPage(browser, server, { width, height }, errors);
      await page.goto(`${server.url}/projects/${projectId}`);
      await page.getByRole('link', { name: 'Insights' }).click();
      await page.getByRole('heading', { name: 'Pages not found' }).waitFor();
      const missing = page.getByRole('region', { name: 'Pages not found' });
      await expect(missing.getByRole('row').nth(1).textContent()).resolves.toMatch(/\/docs\/old-install.*1.*1.*2.*2.*chatgpt\.com \(1\), no referrer \(1\)/);
      expect(await missing.getByText('/docs/gone').count()).toBe(1);
      expect(await page.getByTestId('ai-referred').textContent()).toBe('1');
      const sources = page.getByRole('region', { name: 'Where readers come from' });
      expect(await sources.getByRole('row', { name: /^AI answers/ }).textContent()).toMatch(/AI answers\s*1\s*0\s*1/);
      expect(await sources.getByRole('row', { name: /www\.google\.com/ }).textContent()).toMatch(/Search/);
      // Nothing wider than the screen on a phone.
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await page.context().close();
    }, 60_000);
  }

  it('ran without script errors in the page', () => {
    expect(errors).toEqual([]);
  });
});
