// Every dashboard page at desktop and phone widths with a month of realistic data (test/e2e/realistic.ts):
// nothing wider than the window; the job page in each state (running, completed, failed) with its
// events in words; the chart following the count asked for; jobs named by their titles.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Value } from 'typebox/value';
import { launchChromium } from '../helpers/browser.ts';
import { JobEventSchema } from '../../src/contracts/job-events.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';
import { dashboardPages, overflows, OWNER, SIGNED_OUT_PAGES, startRealistic, WIDTHS, type Realistic } from './realistic.ts';

let r: Realistic;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  r = await startRealistic({ setup: false });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await r?.close();
});

async function visit(page: Page, path: string, ready: (page: Page) => Promise<unknown>) {
  await page.goto(r.e.server.url + path);
  await ready(page);
}

describe('every page fits the window', () => {
  it('setup (with and without the token in the link) and sign-in, at 1280 and 390 px', async () => {
    const token = r.e.server.services.config.setupToken;
    for (const [, width, height] of WIDTHS) {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      page.on('pageerror', (err) => errors.push(err.message));
      // Without the token in the link: a field for it, saying where to find it.
      await visit(page, SIGNED_OUT_PAGES.setup.path, SIGNED_OUT_PAGES.setup.ready);
      await page.getByLabel('Setup token').waitFor();
      expect(await page.getByTestId('token-from-link').count()).toBe(0);
      expect(await overflows(page), `setup without the token at ${width} px`).toBe(false);
      // With it (a new page: a change of fragment alone does not load one): no field, and the token out of the address bar.
      const linked = await context.newPage();
      await visit(linked, `/setup#token=${token}`, SIGNED_OUT_PAGES.setup.ready);
      await linked.getByTestId('token-from-link').waitFor();
      expect(await linked.getByLabel('Setup token').count()).toBe(0);
      expect(linked.url()).toBe(`${r.e.server.url}/setup`);
      expect(await overflows(linked), `setup with the token in the link at ${width} px`).toBe(false);
      await context.close();
    }
    // The owner created from the link, on a phone: the token the link held is what the server took.
    const context = await browser.newContext({ viewport: { width: WIDTHS[1][1], height: WIDTHS[1][2] } });
    const page = await context.newPage();
    await visit(page, `/setup#token=${token}`, SIGNED_OUT_PAGES.setup.ready);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
    await page.getByLabel('Repeat the password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.waitForURL('**/projects');
    await context.close();
    for (const [, width, height] of WIDTHS) {
      const context = await browser.newContext({ viewport: { width, height } });
      const page = await context.newPage();
      await visit(page, SIGNED_OUT_PAGES['sign-in'].path, SIGNED_OUT_PAGES['sign-in'].ready);
      expect(await overflows(page), `sign-in at ${width} px`).toBe(false);
      await context.close();
    }
  }, 90_000);

  for (const [name, width, height] of WIDTHS) {
    it(`every signed-in page at ${width} px (${name})`, async () => {
      const page = await signedInPage(browser, r.e.server, { width, height }, errors);
      const wide: string[] = [];
      for (const p of dashboardPages(r)) {
        await visit(page, p.path, p.ready);
        if (await overflows(page)) wide.push(`${p.name}: ${await page.evaluate(() => document.documentElement.scrollWidth)} px`);
      }
      expect(wide).toEqual([]);
      await page.context().close();
    }, 120_000);
  }
});

describe('the job page in each state', () => {
  let page: Page;
  beforeAll(async () => {
    page = await signedInPage(browser, r.e.server, { width: 1280, height: 860 }, errors);
  });
  afterAll(() => page?.context().close());
  const job = (id: string) => `/projects/${r.projectId}/jobs/${id}`;

  it('a running job is live; its checks and changes are still to come', async () => {
    await visit(page, job(r.jobs.running), (p) => p.getByTestId('stream-state').filter({ hasText: 'Live' }).waitFor());
    expect(await page.locator('.live-dot.live').count()).toBe(1);
    expect(await page.getByTestId('checks').textContent()).toContain('Not run yet');
    expect(await page.getByTestId('diff').textContent()).toContain('No changes yet');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Summarise the changelog of version 2.4 on the home page');
  });

  it('a completed job has no live dot, its pull request title, and every event in words', async () => {
    await visit(page, job(r.jobs.completed), (p) => p.getByTestId('stream-state').filter({ hasText: 'Finished' }).waitFor());
    expect(await page.locator('.live-dot').count()).toBe(0);
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Document the --dry-run flag of acme deploy');
    const events = page.getByRole('list', { name: 'Job events' });
    await events.getByText('agent_finished').waitFor();
    const lines = await events.getByTestId('job-event').evaluateAll((items) =>
      items.map((li) => ({ type: li.querySelector('.event-type')!.textContent!, text: li.querySelector('.event-text')!.firstChild!.textContent! })),
    );
    const lineOf = (type: string) => lines.find((l) => l.type === type)?.text;
    expect(lineOf('job.created')).toMatch(/^Job created: openai-compatible\/test-model, on branch folio\/job_\w+ from main$/);
    expect(lineOf('workspace')).toMatch(/^Workspace ready on folio\/job_\w+ at [0-9a-f]{10} \([\d,]+ ms\)$/);
    expect(lineOf('usage')).toMatch(/^Model call \d+: [\d,]+ input tokens \+ [\d,]+ output tokens$/);
    expect(lineOf('agent_finished')).toMatch(/^Agent finished after \d+ steps: Document the --dry-run flag of acme deploy \([\d,]+ tokens\)$/);
    if (lineOf('validation')) expect(lineOf('validation')).toMatch(/^(Changed files parse|Round \d+: )/);
    // Tool calls read as what they did, never their arguments as JSON.
    const calls = lines.filter((l) => l.type === 'tool_call').map((l) => l.text);
    expect(calls).toEqual(['Read cli.mdx', 'Edited cli.mdx', 'Finished the turn: Document the --dry-run flag of acme deploy']);
    // No event is left as raw JSON; the data is one click away.
    expect(lines.filter((l) => l.text.startsWith('{'))).toEqual([]);
    const raw = events.getByTestId('job-event').filter({ hasText: 'Job created' }).locator('details');
    await raw.locator('summary').click();
    expect(await raw.locator('pre').textContent()).toContain('"baseRef": "main"');
    const edit = events.locator('li.event-tool_call').filter({ hasText: 'Edited cli.mdx' }).locator('details');
    await edit.locator('summary').click();
    expect(await edit.locator('pre').textContent()).toContain('"old_string": "Uploads `dist/`."');
  });

  it('following events scrolls the events box, not the window', async () => {
    await page.setViewportSize({ width: 1280, height: 500 });
    await visit(page, job(r.jobs.completed), (p) => p.getByRole('list', { name: 'Job events' }).getByText('agent_finished').waitFor());
    await page.evaluate(() => window.scrollTo(0, 0));
    await page.waitForTimeout(500);
    const box = await page.getByRole('list', { name: 'Job events' }).evaluate((el) => ({ top: el.scrollTop, overflow: el.scrollHeight > el.clientHeight }));
    expect(box.overflow).toBe(true);
    expect(box.top).toBeGreaterThan(0);
    expect(await page.evaluate(() => window.scrollY)).toBe(0);
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('a failed job says what happened instead of "not yet"', async () => {
    await visit(page, job(r.jobs.failed), (p) => p.getByTestId('stream-state').filter({ hasText: 'Finished' }).waitFor());
    expect(await page.locator('.live-dot').count()).toBe(0);
    expect(await page.getByTestId('checks').textContent()).toContain('The job failed before checks ran.');
    expect(await page.getByTestId('diff').textContent()).toContain('No changes were pushed');
    expect(await page.getByRole('heading', { level: 1 }).textContent()).toBe('Add a Windows section to the install page');
  });

  it('the jobs list and the usage table name jobs by their titles', async () => {
    await visit(page, `/projects/${r.projectId}/jobs`, (p) => p.getByRole('link', { name: 'Document the --dry-run flag of acme deploy' }).waitFor());
    await page.getByRole('row').filter({ hasText: 'Add a Windows section to the install page' }).filter({ hasText: r.jobs.failed }).waitFor();
    await visit(page, `/projects/${r.projectId}/usage`, (p) => p.getByRole('table', { name: 'Per job' }).waitFor());
    // The pull request's title, not the prompt's first line, once the agent opened one.
    await page.getByRole('table', { name: 'Per job' }).getByRole('link', { name: 'Add a rate limits guide' }).waitFor();
    expect(await page.getByText('Jobs that called the model').count()).toBe(1);
  });
});

describe('analytics', () => {
  it('the chart counts what the page counts: visitors, then page views', async () => {
    const page = await signedInPage(browser, r.e.server, { width: 1280, height: 860 }, errors);
    await visit(page, `/projects/${r.projectId}/analytics`, (p) => p.locator('canvas').waitFor());
    await page.getByRole('heading', { name: 'Human vs AI visitors over time' }).waitFor();
    const sumOfTotals = () =>
      page.locator('table[aria-label^="Chart numbers"]').evaluate((t) => Array.from(t.querySelectorAll('tbody tr')).reduce((n, tr) => n + Number(tr.children[3]!.textContent), 0));
    const visitorDays = await sumOfTotals();

    await page.getByLabel('Count', { exact: true }).selectOption('views');
    await page.getByRole('heading', { name: 'Human vs AI page views over time' }).waitFor();
    await page.locator('table[aria-label="Chart numbers: page views"]').waitFor({ state: 'attached' });
    await expect.poll(() => page.getByText('All views').count()).toBe(1);
    await expect.poll(async () => (await sumOfTotals()) === Number((await page.getByTestId('total-total').textContent())!.replace(/\D/g, ''))).toBe(true);
    expect(await sumOfTotals()).toBeGreaterThan(visitorDays);
    expect(await page.getByRole('heading', { name: 'Human vs AI visitors over time' }).count()).toBe(0);

    // Crawlers are in the table, under what they count as.
    const agents = page.getByRole('table', { name: 'Agents and crawlers' });
    await agents.getByTestId('agents-crawlers').waitFor();
    expect(await agents.getByRole('row').filter({ hasText: 'Googlebot' }).textContent()).toContain('Search crawler');
    expect(await agents.getByRole('row').filter({ hasText: 'ChatGPT-User' }).textContent()).toContain('AI answer');
    // Dates are typed and read as YYYY-MM-DD.
    expect(await page.getByLabel('From').inputValue()).toMatch(/^\d{4}-\d{2}-\d{2}$/);
    await page.context().close();
  }, 60_000);

  it('the repository hint offers only what this server accepts', async () => {
    const page = await signedInPage(browser, r.e.server, { width: 1280, height: 860 }, errors);
    await visit(page, `/projects/${r.projectId}/settings`, (p) => p.getByLabel('Repository URL').waitFor());
    const hint = await page.locator('#s-repo').evaluate((el) => document.getElementById(el.getAttribute('aria-describedby')!.split(' ')[0]!)?.textContent ?? '');
    expect(hint).toContain('https://');
    expect(hint).not.toContain('ssh://');
    expect(hint).not.toContain('git@');
    await page.context().close();
  });

  it('every event the real agent recorded has its declared shape (src/contracts/job-events.ts)', async () => {
    for (const [state, id] of Object.entries(r.jobs)) {
      const { events } = (await r.e.server.api('GET', `/v2/agent/${r.projectId}/job/${id}/events?limit=500`, { key: r.key })).body;
      expect(events.length, state).toBeGreaterThan(0);
      for (const e of events) expect([...Value.Errors(JobEventSchema, e)].length, `${state}: ${JSON.stringify(e).slice(0, 300)}`).toBe(0);
    }
  });

  it('ran without script errors in the page', () => {
    expect(errors).toEqual([]);
  });
});
