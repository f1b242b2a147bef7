// The Insights page leads with what to do (issue 34), in a real browser at 1280 and 390 px: the
// suggestions above the AI-answer chart above the pages not found above the sources; a long path on
// one line, cut with "…", whole in its title; nothing wider than a phone on Insights, Analytics and a
// suggestion job's page, whose context reads as a table; the range kept in the address over a reload.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { setUp } from '../dashboard/session.ts';
import { MINTLIFY } from '../fixtures/docs-sites.ts';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { addDays, today } from '../../web/src/dates.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const LONG_PATH = '/getting-started/installing-folio-on-a-self-hosted-kubernetes-cluster-with-helm-and-argocd';

let e: E2E;
let browser: Browser;
let projectId: string;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  e = await startE2E({ FOLIO_RATE_LIMIT_ANALYTICS: '0' });
  await setUp(e.server);
  const url = e.host.createRepo('acme/insights-layout', MINTLIFY.files);
  projectId = await e.server.createProject({ name: 'insights-layout', repositoryUrl: url, codeHost: 'github', checks: 'warn' });
  const key = await e.server.createKey(projectId);
  const at = (hoursAgo: number) => new Date(Date.now() - hoursAgo * 3_600_000).toISOString();
  const events = [1, 2, 3].flatMap((n) => [
    { timestamp: at(1), path: '/guides/authentication', userAgent: HUMAN_UA, visitorId: `v${n}`, status: 404 },
    { timestamp: at(2), path: LONG_PATH, userAgent: HUMAN_UA, visitorId: `w${n}`, status: 404, referrer: 'https://chatgpt.com/c/1' },
    { timestamp: at(30), path: '/guides/auth', userAgent: HUMAN_UA, visitorId: `h${n}`, referrer: n === 1 ? 'https://www.google.com/search?q=x' : 'https://chatgpt.com/c/2' },
  ]);
  expect((await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } })).body.rejected).toEqual([]);
  e.llm.setResponder(() => ({ toolCalls: [{ name: 'finish', args: { title: 'Nothing', summary: 'Done.' } }] }));
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await e?.close();
});

const fits = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth);
const top = async (page: Page, name: string) => (await page.getByRole('region', { name }).boundingBox())!.y;

describe('Insights leads with what to do', () => {
  for (const [name, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]] as const) {
    it(`orders suggestions, chart, not found, sources; keeps paths whole on one line; fits (${name}, ${width} px)`, async () => {
      const page = await signedInPage(browser, e.server, { width, height }, errors);
      await page.goto(`${e.server.url}/projects/${projectId}/insights`);
      await page.getByTestId('suggestion-broken_paths').waitFor();
      await page.locator('canvas').waitFor();
      const order = [await top(page, 'Suggestions for the agent'), await top(page, 'Readers sent by AI answers'), await top(page, 'Pages not found'), await top(page, 'Where readers come from')];
      expect(order).toEqual([...order].sort((a, b) => a - b));
      expect(new Set(order).size).toBe(4);

      const long = page.getByRole('region', { name: 'Pages not found' }).locator(`.path-text[title="${LONG_PATH}"]`);
      const style = await long.evaluate((el) => ({ ...(({ whiteSpace, textOverflow, overflow }) => ({ whiteSpace, textOverflow, overflow }))(getComputedStyle(el)), lineHeight: parseFloat(getComputedStyle(el).lineHeight), height: el.getBoundingClientRect().height, cut: el.scrollWidth > el.clientWidth }));
      expect(style).toMatchObject({ whiteSpace: 'nowrap', textOverflow: 'ellipsis', overflow: 'hidden', cut: true });
      expect(style.height).toBeLessThan(style.lineHeight * 1.5);
      expect(await long.textContent()).toBe(LONG_PATH);
      expect(await page.getByRole('region', { name: 'Pages not found' }).getByRole('button', { name: 'Copy the path' }).count()).toBe(2);
      expect(await fits(page)).toBe(true);
      // Not even inside their own boxes: a phone drops the columns it can do without.
      const scrolled = await page.locator('.table-wrap').evaluateAll((wraps) => wraps.filter((w) => w.scrollWidth > w.clientWidth + 1 && w.closest('details') === null).map((w) => `${w.closest('section')?.getAttribute('aria-labelledby')}: ${w.scrollWidth}/${w.clientWidth} ${w.querySelector('tr')?.textContent}`));
      expect(scrolled).toEqual([]);

      await page.goto(`${e.server.url}/projects/${projectId}/analytics`);
      await page.locator('canvas').waitFor();
      expect(await fits(page)).toBe(true);
      await page.context().close();
    }, 90_000);
  }

  it("shows a suggestion job's context as a table, its JSON behind a disclosure, within 390 px", async () => {
    const page = await signedInPage(browser, e.server, { width: 390, height: 844 }, errors);
    await page.goto(`${e.server.url}/projects/${projectId}/insights`);
    await page.getByTestId('suggestion-broken_paths').getByRole('button', { name: 'Fix with the agent' }).click();
    await page.waitForURL(/\/jobs\/job_\w+$/);
    const context = page.getByRole('table', { name: "The suggestion's context" });
    await context.waitFor();
    expect(await context.getByRole('row').count()).toBe(3);
    expect(await context.locator(`.path-text[title="${LONG_PATH}"]`).count()).toBe(1);
    const cells = await context.getByRole('row').filter({ hasText: '/guides/authentication' }).locator('td').allTextContents();
    expect(cells.slice(1)).toEqual(['3', '3', '0', '/guides/auth']);
    const json = page.locator('details', { hasText: 'The context as JSON' });
    expect(await json.locator('pre').isVisible()).toBe(false);
    await json.locator('summary').click();
    expect(JSON.parse((await json.locator('pre').textContent())!)).toHaveLength(2);
    expect(await page.locator('.message .prompt').first().textContent()).not.toMatch(/```json/);
    expect(await fits(page)).toBe(true);
    await page.context().close();
  }, 90_000);

  it('keeps the range in the address, through a reload, on Insights and Analytics; the dates are date pickers', async () => {
    const page = await signedInPage(browser, e.server, { width: 1280, height: 900 }, errors);
    const from = addDays(today(), -10);
    await page.goto(`${e.server.url}/projects/${projectId}/insights?from=${from}&to=${today()}`);
    await page.getByRole('region', { name: 'Pages not found' }).waitFor();
    expect(await page.getByLabel('From', { exact: true }).getAttribute('type')).toBe('date');
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe(from);
    await page.getByRole('button', { name: 'Last 7 days' }).click();
    await page.waitForURL(/\?days=7$/);
    await page.reload();
    await page.getByRole('region', { name: 'Pages not found' }).waitFor();
    expect(await page.getByRole('button', { name: 'Last 7 days' }).getAttribute('aria-pressed')).toBe('true');
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe(addDays(today(), -6));

    await page.goto(`${e.server.url}/projects/${projectId}/analytics`);
    await page.locator('canvas').waitFor();
    await page.getByLabel('From', { exact: true }).fill(from);
    await page.waitForURL(new RegExp(`from=${from}`));
    await page.reload();
    await page.locator('canvas').waitFor();
    expect(await page.getByLabel('From', { exact: true }).inputValue()).toBe(from);
    expect(await page.getByLabel('To (inclusive)', { exact: true }).inputValue()).toBe(today());
    await page.context().close();
  }, 90_000);

  it('ran without script errors in the page', () => {
    expect(errors).toEqual([]);
  });
});
