// The team's instructions and the spending limits in the dashboard, in a real browser: the Settings
// fieldset saves and refuses what is not a limit, the job page shows a job's limit after its spend, and
// the Usage page shows this month against the budget, saying when it is spent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { ScriptedHandler, eventually } from '../helpers/handlers.ts';
import { setUp } from '../dashboard/session.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';

let server: TestServer;
let browser: Browser;
let page: Page;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  server = await startTestServer({ jobHandler: new ScriptedHandler(), workers: 1 });
  await setUp(server);
  browser = await launchChromium();
  page = await signedInPage(browser, server, { width: 1280, height: 900 }, errors);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('instructions and spending in the dashboard', () => {
  it('saves the instructions and limits in Settings, refusing what is not a number', async () => {
    const projectId = await server.createProject({ name: 'Budget docs' });
    await page.goto(`${server.url}/projects/${projectId}/settings`);
    await page.getByLabel('Instructions for the agent').fill('Write in British English.');
    await page.getByLabel('Limit per job ($)').fill('0.5');
    await page.getByLabel('Limit per job (tokens)').fill('90000');
    await page.getByLabel('Monthly budget ($)').fill('lots');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('"Monthly budget ($)" takes a number such as 0.50, or nothing for no limit.').waitFor();
    expect((await server.services.projects.store.get(projectId))!.default_max_cost_usd).toBeNull();
    await page.getByLabel('Monthly budget ($)').fill('$20');
    await page.getByLabel('Monthly budget (tokens)').fill('1000000');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect(await server.services.projects.store.get(projectId)).toMatchObject({
      instructions: 'Write in British English.',
      default_max_cost_usd: 0.5,
      default_max_tokens: 90_000,
      monthly_budget_usd: 20,
      monthly_token_budget: 1_000_000,
    });
    // Emptied fields remove the limits.
    await page.getByLabel('Limit per job ($)').fill('');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await expect.poll(async () => (await server.services.projects.store.get(projectId))!.default_max_cost_usd).toBeNull();
    expect(errors).toEqual([]);
  });

  it("shows a job's limit and this month against the budget, and says when the budget is spent", async () => {
    const projectId = await server.createProject({ name: 'Spent docs', monthlyTokenBudget: 1000 });
    const key = await server.createKey(projectId);
    const created = (await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Limited job', maxCostUsd: 0.25, maxTokens: 9000 } })).body;
    await eventually(async () => (await server.api('GET', `/v2/agent/${projectId}/job/${created.id}`, { key })).body.status !== 'active');
    await server.services.jobs.recordUsage({ id: created.id, projectId, model: created.model }, { inputTokens: 1000, outputTokens: 200 });

    await page.goto(`${server.url}/projects/${projectId}/jobs/${created.id}`);
    await expect.poll(() => page.getByTestId('job-limit').textContent()).toBe(' (limit $0.2500 or 9,000 tokens)');

    await page.goto(`${server.url}/projects/${projectId}/usage`);
    const month = page.getByTestId('usage-month');
    await month.waitFor();
    expect(await month.textContent()).toMatch(/1,200 tokens of 1,000/);
    expect(await month.textContent()).toMatch(/resets on \d{4}-\d{2}-01 \(UTC\)/);
    await month.getByText(/The monthly budget is spent: new jobs and follow-ups are refused until \d{4}-\d{2}-01\./).waitFor();
    expect(errors).toEqual([]);
  });
});
