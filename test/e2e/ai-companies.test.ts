// The Insights page's "AI companies" panel in a real browser, at desktop and phone widths: each
// company's crawls and assistant reads against the humans its answers sent, and one company's pages.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp } from '../dashboard/session.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AGENTS = ClassificationRules.load().agents;
const ua = (name: string) => AGENTS.find((a) => a.name === name)!.example;

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
  const at = new Date(Date.now() - 2 * 3_600_000).toISOString();
  const view = (path: string, userAgent: string, visitorId: string, referrer?: string) => ({ timestamp: at, path, userAgent, visitorId, ...(referrer ? { referrer } : {}) });
  const events = [
    view('/docs/install', ua('GPTBot'), 'g1'),
    view('/docs/install', ua('GPTBot'), 'g1'),
    view('/docs/api', ua('OAI-SearchBot'), 'o1'),
    view('/docs/api', ua('ChatGPT-User'), 'c1'),
    view('/docs/install', HUMAN_UA, 'h1', 'https://chatgpt.com/c/1'),
    view('/docs/install', ua('ClaudeBot'), 'b1'),
  ];
  const res = await server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
  expect(res.body.rejected).toEqual([]);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('Insights: AI companies', () => {
  for (const [name, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]] as const) {
    it(`shows what each company takes and sends back, and one company's pages (${name}, ${width} px)`, async () => {
      const page = await signedInPage(browser, server, { width, height }, errors);
      await page.goto(`${server.url}/projects/${projectId}`);
      await page.getByRole('link', { name: 'Insights' }).click();
      const panel = page.getByRole('region', { name: 'AI companies' });
      await panel.getByRole('button', { name: 'OpenAI' }).waitFor();
      // OpenAI: 2 training and 1 search crawl, 1 assistant visitor and view, 1 human sent: 3 crawls per human.
      // (Each row's text holds the phone's note of its crawls too, "3 crawls", shown only on a phone.)
      expect(await panel.getByRole('row', { name: /^OpenAI/ }).textContent()).toMatch(/OpenAI(3 crawls)?\s*2\s*1\s*1\s*1\s*1\s*3\.0/);
      expect(await panel.getByRole('row', { name: /^Anthropic/ }).textContent()).toMatch(/Anthropic(1 crawl)?\s*1\s*0\s*0\s*0\s*0\s*—/);
      await panel.getByRole('button', { name: 'OpenAI' }).click();
      const pages = page.getByRole('region', { name: 'OpenAI, per page' });
      await pages.getByRole('row', { name: /\/docs\/install/ }).waitFor();
      expect(await pages.getByRole('row', { name: /\/docs\/install/ }).textContent()).toMatch(/\/docs\/install(2 crawls)?\s*2\s*0\s*0\s*0\s*1\s*2\.0/);
      expect(await pages.getByRole('row', { name: /\/docs\/api/ }).textContent()).toMatch(/\/docs\/api(1 crawl)?\s*0\s*1\s*1\s*1\s*0\s*—/);
      expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth + 1)).toBe(true);
      await page.context().close();
    }, 60_000);
  }

  it('ran without script errors in the page', () => {
    expect(errors).toEqual([]);
  });
});
