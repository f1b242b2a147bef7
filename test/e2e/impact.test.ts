// "Did the change help?" in a real browser, at desktop and phone widths: a job (real agent, scripted
// model, local code host) edits a page and adds a redirect; while its pull request is open the job
// page says why nothing is measured; once the host says it was merged three days ago, the panel shows
// each page's visitors before → after and the total, and the jobs list a badge with the change.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { setUp } from '../dashboard/session.ts';
import { MINTLIFY } from '../fixtures/docs-sites.ts';
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';

const DAY = 86_400_000;
const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

let e: E2E;
let browser: Browser;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  e = await startE2E({ FOLIO_RATE_LIMIT_ANALYTICS: '0' });
  await setUp(e.server);
  browser = await launchChromium();
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await e?.close();
});

/** A job that edits the quickstart and redirects /start to it; its pull request open on the local host. */
async function editedJob(repo: string): Promise<{ projectId: string; key: string; jobId: string }> {
  const url = e.host.createRepo(repo, MINTLIFY.files);
  const projectId = await e.server.createProject({ name: repo, repositoryUrl: url, codeHost: 'github', checks: 'warn' });
  const key = await e.server.createKey(projectId);
  const docs = JSON.parse(MINTLIFY.files['docs.json']);
  docs.redirects.push({ source: '/start', destination: '/quickstart' });
  const replies = [
    { toolCalls: [{ name: 'write_file', args: { path: 'quickstart.mdx', content: `${MINTLIFY.files['quickstart.mdx']}\nA clearer first step.\n` } }] },
    { toolCalls: [{ name: 'write_file', args: { path: 'docs.json', content: JSON.stringify(docs, null, 2) } }] },
    { toolCalls: [{ name: 'finish', args: { title: 'Clearer quickstart', summary: 'Done.' } }] },
  ];
  let turn = 0;
  e.llm.setResponder(() => replies[Math.min(turn++, replies.length - 1)]);
  const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Make the quickstart clearer.' } });
  expect(created.status).toBe(201);
  const job = await waitForJob(e.server, projectId, created.body.id, key);
  expect(job.status).toBe('completed');
  expect(job.prLink).not.toBeNull();
  return { projectId, key, jobId: job.id };
}

/** Readers of the quickstart: one human before the merge, three after (one from an AI answer); a not-found on /start before. */
async function traffic(projectId: string, key: string, mergedAt: number): Promise<void> {
  const at = (offset: number) => new Date(mergedAt + offset).toISOString();
  const view = (path: string, visitorId: string, offset: number, extra: Record<string, unknown> = {}) => ({ path, userAgent: HUMAN_UA, visitorId, timestamp: at(offset), ...extra });
  const events = [
    // The first event there is: the windows are not clipped to the data.
    view('/', 'h0', -4 * DAY),
    view('/quickstart', 'h1', -DAY),
    view('/start', 'h2', -DAY, { status: 404 }),
    view('/quickstart', 'h1', DAY),
    view('/quickstart', 'h3', DAY, { referrer: 'https://chatgpt.com/c/1' }),
    view('/quickstart', 'h4', 2 * DAY),
  ];
  const res = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
  expect(res.body.rejected).toEqual([]);
}

const fits = () => document.documentElement.scrollWidth <= window.innerWidth;

describe('the effect of a merged job in the dashboard', () => {
  for (const [name, width, height] of [['desktop', 1280, 900], ['phone', 390, 844]] as const) {
    it(`shows why nothing is measured while open, then before → after per page, and the badge (${name}, ${width} px)`, async () => {
      const { projectId, key, jobId } = await editedJob(`acme/impact-${name}`);
      const page = await signedInPage(browser, e.server, { width, height }, errors);

      await page.goto(`${e.server.url}/projects/${projectId}/jobs/${jobId}`);
      const panel = page.getByTestId('job-impact');
      await panel.getByText(/is not merged yet/).waitFor();
      expect(await page.evaluate(fits)).toBe(true);

      // The host merges it at noon (UTC) four days ago, so three whole days after the merge's day are
      // over; the last check of its state is put 10 minutes back (past the 5-minute recheck interval)
      // instead of waiting them out.
      const pr = e.host.github.pulls.find((p) => p.repo === `impact-${name}`)!;
      const mergedAt = Math.floor(Date.now() / DAY) * DAY - 4 * DAY + DAY / 2;
      pr.mergedAt = new Date(mergedAt).toISOString();
      pr.state = 'closed';
      await traffic(projectId, key, mergedAt);
      const store = await openStore(loadConfig(e.server.env));
      try {
        await store.db.updateTable('job_pull_requests').set({ pr_checked_at: Date.now() - 600_000 }).where('job_id', '=', jobId).execute();
      } finally {
        await store.close();
      }
      const res = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact?days=3`, { key });
      expect(res.status, JSON.stringify(res.body)).toBe(200);

      await page.goto(`${e.server.url}/projects/${projectId}/jobs/${jobId}`);
      await panel.getByTestId('impact-headline').waitFor();
      // 14 days asked, clipped to the 3 whole days over since the merge's day.
      expect(await panel.getByTestId('impact-headline').textContent()).toMatch(/Human visitors on its pages: 1 in the 3 days before the merge, 3 in the 3 days after \(\+200%\)\. Not-found visitors on the old addresses: 1 → 0\./);
      const rows = panel.getByRole('row');
      expect(await rows.filter({ hasText: '/quickstart' }).first().textContent()).toMatch(/1 → 3/);
      expect(await rows.filter({ hasText: '/start' }).first().textContent()).toMatch(/1 → 0/);
      expect(await rows.filter({ hasText: 'All pages' }).textContent()).toMatch(/1 → 3/);
      expect(await page.evaluate(fits)).toBe(true);
      // No column cut off: the table itself does not scroll sideways (a phone keeps page and humans).
      expect(await panel.locator('.table-wrap').evaluate((el) => el.scrollWidth <= el.clientWidth)).toBe(true);

      await page.goto(`${e.server.url}/projects/${projectId}/jobs`);
      const badge = page.locator('.badge', { hasText: /merged/ });
      await badge.filter({ hasText: 'humans +200%' }).waitFor();
      expect(await page.evaluate(fits)).toBe(true);
      expect(errors).toEqual([]);
      await page.context().close();
    }, 120_000);
  }
});
