// The dashboard end to end in a real browser (playwright-core driving Chromium: the system's or the one from npm) against a
// real Folio server with the real agent, a scripted Chat Completions model and a fake GitHub:
// first-run setup, sign-in, project, API key used from the test, a job that opens a pull request,
// analytics for ingested events, settings, and revoking the key. The pictures in docs/screenshots are
// made by `npm run screenshots` (scripts/screenshots.ts), with realistic data.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, onTestFailed } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { sequence, toolCall } from '../fixtures/fake-openai.ts';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { launchChromium } from '../helpers/browser.ts';
import { jobFromMergedPullRequest } from '../triggers/helpers.ts';

const WEB_INDEX = path.resolve('web/dist/index.html');
const OWNER = { email: 'owner@example.com', password: 'a long owner passphrase' };
const DOCS = {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Home\ndescription: Start here\n---\n\n# Acme CLI\n\nRun `acme build`.\n',
};

let e: E2E;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const scriptErrors: string[] = [];

beforeAll(async () => {
  // The server serves web/dist; build it once if this checkout has not (npm ci does).
  if (!existsSync(WEB_INDEX)) {
    execFileSync(path.resolve('node_modules/.bin/vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'error'], { stdio: 'inherit' });
  }
  e = await startE2E({ FOLIO_WEBHOOK_ATTEMPTS: '1', FOLIO_MODEL_PRICES: 'openai-compatible/test-model=3:15' });
  browser = await launchChromium();
  context = await browser.newContext({ viewport: { width: 1280, height: 860 }, colorScheme: 'light', acceptDownloads: true, timezoneId: 'UTC', locale: 'en-GB' });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: e.server.url });
  page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (err) => scriptErrors.push(err.message));
  page.on('console', (msg) => {
    // Refused API calls (401 after sign-out, 4xx the test provokes) are logged by the browser itself.
    if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) scriptErrors.push(msg.text());
  });
}, 120_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await e?.close();
});

describe('dashboard in the browser', () => {
  let projectId = '';
  let key = '';

  it('runs first-run setup, signs out and signs in again', async () => {
    // Opened without the setup link: the page asks for the setup token and says where to find it.
    await page.goto(e.server.url);
    await page.waitForURL('**/setup');
    await expect.poll(() => page.getByRole('heading', { name: 'Welcome to Folio' }).isVisible()).toBe(true);
    const tokenField = page.getByLabel('Setup token');
    const hint = page.locator(`#${await tokenField.getAttribute('aria-describedby')}`);
    expect(await hint.textContent()).toMatch(/folio serve prints it when it starts, in the line Create the owner account: …\/setup#token=….*docker logs/);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password', { exact: true }).fill(OWNER.password);
    await page.getByLabel('Repeat the password').fill('a different passphrase');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByText('The two passwords do not match.').waitFor();
    await page.getByLabel('Repeat the password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('alert').filter({ hasText: 'Creating the owner needs the setup token' }).waitFor();
    await tokenField.fill('not-the-setup-token-0123456789');
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.getByRole('alert').filter({ hasText: 'The setup token is not right' }).waitFor();
    await tokenField.fill(e.server.services.config.setupToken);
    await page.getByRole('button', { name: 'Create owner account' }).click();
    await page.waitForURL('**/projects');
    await page.getByRole('heading', { name: 'New project' }).waitFor();

    // The session cookie is httpOnly: scripts in the page cannot read it.
    expect(await page.evaluate(() => document.cookie)).toBe('');
    const cookies = await context.cookies();
    expect(cookies.find((c) => c.name === 'folio_session')).toMatchObject({ httpOnly: true, sameSite: 'Lax' });

    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.waitForURL('**/login');
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill('not the password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('alert').filter({ hasText: 'The email or password is not right.' }).waitFor();
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/projects');
    await page.getByText(OWNER.email).waitFor();
  });

  it('creates a project and shows its id on the API keys page', async () => {
    const repo = e.host.createRepo('acme/docs', DOCS);
    await page.getByLabel('Name').fill('Acme docs');
    await page.getByLabel('Repository URL').fill('not a repository');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.getByRole('alert').filter({ hasText: 'which a repository URL cannot have' }).waitFor();
    await page.getByLabel('Repository URL').fill(repo);
    await page.getByLabel('Code host').selectOption('github');
    await page.getByRole('button', { name: 'Create project' }).click();
    await page.waitForURL(/\/projects\/prj_[a-z0-9]+\/keys$/);
    projectId = (await page.getByTestId('project-id').textContent())!.trim();
    expect(projectId).toMatch(/^prj_/);
    expect(page.url()).toContain(projectId);
    await page.getByText('No keys yet').waitFor();
  });

  it('creates a key shown once, copies it, and the key works against the API', async () => {
    await page.getByLabel('Name').fill('E2E pipeline');
    await page.getByLabel('Scope').selectOption('write');
    await page.getByLabel('Expires').selectOption('30');
    await page.getByRole('button', { name: 'Create key' }).click();
    const shown = page.getByTestId('new-key');
    await shown.waitFor();
    key = (await shown.textContent())!.trim();
    expect(key).toMatch(/^folio_[A-Za-z0-9]{40}$/);
    await page.getByText('It is shown only this once').waitFor();
    await page.getByRole('button', { name: 'Copy API key' }).click();
    await page.getByRole('button', { name: 'Copy API key' }).filter({ hasText: 'Copied' }).waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(key);

    const row = page.getByRole('row').filter({ hasText: 'E2E pipeline' });
    await expect.poll(() => row.textContent()).toContain(key.slice(0, 12));
    expect(await row.textContent()).toContain('read & write');
    expect(await row.textContent()).toContain('never'); // not used yet

    const res = await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ jobs: [], nextCursor: null, hasMore: false });

    await page.getByRole('button', { name: 'I have stored the key' }).click();
    await expect.poll(() => page.getByTestId('new-key').count()).toBe(0);
    expect(await page.content()).not.toContain(key);
  });

  it('creates a job that completes with the scripted model and shows its pull request link', async () => {
    onTestFailed(async () => {
      // What the page and the job looked like, for the CI log.
      await page.screenshot({ path: path.join(os.tmpdir(), 'folio-e2e-job-failure.png'), fullPage: true }).catch(() => {});
      const jobId = page.url().split('/').pop();
      const events = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/events?limit=500`, { key });
      console.error(`job page ${page.url()}; events: ${events.text.slice(0, 4000)}; model requests: ${e.llm.requests.length}`);
    });
    e.llm.setResponder(
      sequence([
        toolCall('read_file', { path: 'index.mdx' }),
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nUse `--dry-run` to preview.' }),
        toolCall('finish', { title: 'Document --dry-run', summary: 'Added the --dry-run flag to the home page.' }),
      ]),
    );
    await page.getByRole('link', { name: 'Agent jobs' }).click();
    await page.waitForURL(`**/projects/${projectId}/jobs`);
    await page.getByText('No jobs yet').waitFor();
    await page.getByLabel('Instruction').fill('Document the new --dry-run flag');
    await page.getByRole('button', { name: 'Start job' }).click();
    await page.waitForURL(new RegExp(`/projects/${projectId}/jobs/job_[a-z0-9]+$`));
    const jobId = page.url().split('/').pop()!;

    const prLink = `${e.host.origin}/acme/docs/pull/1`;
    const pr = page.getByTestId('pr-link').getByRole('link');
    await pr.waitFor({ timeout: 60_000 });
    expect(await pr.getAttribute('href')).toBe(prLink);
    await page.getByText('completed', { exact: true }).first().waitFor();
    const events = page.getByRole('list', { name: 'Job events' });
    await events.getByText('pull_request').waitFor();
    await events.getByText(`: ${prLink}`).filter({ hasText: /^Opened pull request #\d+: / }).waitFor();
    await events.getByText('Committed').first().waitFor();
    // The job is named by its pull request's title.
    await page.getByRole('heading', { level: 1, name: 'Document --dry-run' }).waitFor();
    await page.locator('.reply-title').getByText('Document --dry-run', { exact: true }).waitFor();
    expect(e.host.github.pulls).toHaveLength(1);

    const viaApi = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}`, { key });
    expect(viaApi.body).toMatchObject({ status: 'completed', prLink });
    // The diff of the branch, file by file, and the docs checks that ran before the push.
    const diff = page.getByTestId('diff');
    await diff.getByTestId('diff-file').filter({ hasText: 'index.mdx' }).waitFor();
    await diff.getByRole('cell', { name: 'Use `--dry-run` to preview.' }).waitFor();
    const checks = page.getByTestId('checks');
    await checks.getByText('No new problems').waitFor();
    await checks.getByRole('listitem').filter({ hasText: 'Links' }).waitFor();
    expect(await checks.getByRole('list', { name: 'Checks that ran' }).textContent()).toContain('✓ Navigation');
    expect(await page.getByTestId('job-usage').textContent()).toMatch(/^[\d,]+ tokens · /);
    // Started from the dashboard: no code change to show.
    expect(await page.getByTestId('job-trigger').count()).toBe(0);

    // A follow-up from the job page, then archive it (after confirming).
    e.llm.setResponder(sequence([toolCall('finish', { title: 'Nothing else to change', summary: 'The flag is already documented.' })]));
    await page.getByLabel('Follow-up instruction').fill('Check the flag is documented everywhere');
    await page.getByRole('button', { name: 'Send follow-up' }).click();
    await page.locator('.messages').getByText('Follow-up 1', { exact: false }).waitFor();
    await page.getByRole('list', { name: 'Job events' }).getByText('Follow-up 1 queued').waitFor();
    await page.getByText('Nothing else to change', { exact: true }).waitFor({ timeout: 60_000 });
    await page.getByRole('button', { name: 'Archive job' }).click();
    const dialog = page.getByRole('dialog', { name: 'Archive this job?' });
    await dialog.getByRole('button', { name: 'Archive' }).click();
    await page.getByText('This job is archived', { exact: false }).waitFor();
    const archived = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}`, { key });
    expect(archived.body).toMatchObject({ status: 'archived', prLink });

    await page.getByRole('link', { name: '← All jobs' }).click();
    const row = page.getByRole('row').filter({ hasText: jobId });
    await row.getByRole('link', { name: '#1' }).waitFor();
    await page.getByLabel('Status').selectOption('failed');
    await page.getByText('No failed jobs').waitFor();
    await page.getByLabel('Status').selectOption('archived');
    await page.getByRole('row').filter({ hasText: jobId }).waitFor();
    await page.getByLabel('Status').selectOption('');
    await page.getByRole('row').filter({ hasText: jobId }).waitFor();
  }, 150_000);

  it('shows the diff and the docs checks a job left for review, and the project usage', async () => {
    const page1 = '---\ntitle: Limits\n---\n\n## Per key\n\nSee [the limits API](/api/limits).\n\n![Chart](/images/limits.png)\n';
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'guides/limits.mdx', content: page1 }),
        toolCall('finish', { title: 'Limits page', summary: 'Added a limits page.' }),
        // Told of the problems, the model gives up on them (warn: they are listed for review).
      ]),
    );
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add a limits page' } });
    expect(created.status).toBe(201);
    const jobId = created.body.id;
    await page.goto(`${e.server.url}/projects/${projectId}/jobs/${jobId}`);
    await page.getByText('completed', { exact: true }).first().waitFor({ timeout: 60_000 });
    const checks = page.getByTestId('checks');
    await checks.getByText('3 problems').waitFor();
    const ran = checks.getByRole('list', { name: 'Checks that ran' });
    expect((await ran.textContent())!.replace(/\s+/g, ' ')).toContain('✗ Links: 1');
    expect((await ran.textContent())!.replace(/\s+/g, ' ')).toContain('✗ Navigation: 1');
    expect((await ran.textContent())!.replace(/\s+/g, ' ')).toContain('✗ Images and files: 1');
    const problems = checks.getByRole('list', { name: 'Problems introduced by this job' });
    await problems.getByText('Link "/api/limits" does not lead to a page', { exact: false }).waitFor();
    await problems.getByText('New page guides/limits.mdx is not in the navigation', { exact: false }).waitFor();
    const file = page.getByTestId('diff-file').filter({ hasText: 'guides/limits.mdx' });
    await file.getByText('added', { exact: true }).waitFor();
    await file.getByRole('cell', { name: 'See [the limits API](/api/limits).' }).waitFor();

    await page.getByRole('link', { name: 'Usage' }).click();
    await page.waitForURL(`**/projects/${projectId}/usage`);
    const perJob = page.getByRole('table', { name: 'Per job' });
    await perJob.getByRole('row').filter({ hasText: jobId }).waitFor();
    const report = (await e.server.api('GET', `/v2/agent/${projectId}/usage`, { key })).body;
    expect(await page.getByTestId('usage-total-tokens').textContent()).toBe(report.totals.totalTokens.toLocaleString('en-US'));
    const day = page.getByRole('table', { name: 'Per day' }).getByRole('row').filter({ hasText: new Date().toISOString().slice(0, 10) });
    expect(await day.textContent()).toContain(report.days[0].inputTokens.toLocaleString('en-US'));
  }, 150_000);

  it('shows the code change that started a job: what happened, on which host, linked', async () => {
    e.llm.setResponder(sequence([toolCall('finish', { title: 'Nothing to document', summary: 'The flag is internal.' })]));
    const { jobId, changeUrl } = await jobFromMergedPullRequest(e.server, e.host, { projectId, repo: 'acme/api' });
    await page.goto(`${e.server.url}/projects/${projectId}/jobs/${jobId}`);
    const trigger = page.getByTestId('job-trigger');
    await trigger.waitFor();
    expect(await trigger.textContent()).toBe(`Merged pull request on GitHub: ${changeUrl}`);
    expect(await trigger.getByRole('link').getAttribute('href')).toBe(changeUrl);
    await page.getByText('completed', { exact: true }).first().waitFor({ timeout: 60_000 });
  });

  it('shows a follow-up from a review comment as from a review by @name, linked', async () => {
    const { jobId } = await jobFromMergedPullRequest(e.server, e.host, { projectId, repo: 'acme/reviewed' });
    const url = `${e.host.origin}/acme/docs/pull/1#discussion_r501`;
    e.llm.setResponder(sequence([toolCall('finish', { title: 'Reworded', summary: 'As asked.' })]));
    await e.server.services.jobs.transact(projectId, (_trx, ops) => ops.followUp(jobId, '@alice commented on this job’s pull request.', { kind: 'review', reviewer: 'alice', url }));
    await page.goto(`${e.server.url}/projects/${projectId}/jobs/${jobId}`);
    const origin = page.locator('.messages').getByRole('link', { name: 'from a review by @alice' });
    await origin.waitFor();
    expect(await origin.getAttribute('href')).toBe(url);
  });

  it('shows analytics for ingested events and exports the table as CSV', async () => {
    const now = Date.now();
    const at = (minutesAgo: number) => new Date(now - minutesAgo * 60_000).toISOString();
    const human = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36';
    const events = [
      { timestamp: at(50), path: '/docs/start', userAgent: human, ip: '203.0.113.1' },
      { timestamp: at(40), path: '/docs/start', userAgent: human, ip: '203.0.113.2' },
      { timestamp: at(30), path: '/docs/start', userAgent: 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot', ip: '198.51.100.7' },
      { timestamp: at(20), path: '/docs/cli', userAgent: human, ip: '203.0.113.1' },
      { timestamp: at(10), path: '/docs/cli', userAgent: 'Claude-User/1.0 (+Claude-User@anthropic.com)', ip: '198.51.100.8' },
      { timestamp: at(5), path: '/docs/cli', userAgent: 'Mozilla/5.0 (compatible; GPTBot/1.1; +https://openai.com/gptbot)', ip: '198.51.100.9' },
      // Two paths of one visit each, which code-point order and a locale's order put apart: "B" (U+0042) before "a" (U+0061).
      { timestamp: at(4), path: '/docs/a', userAgent: human, ip: '203.0.113.1' },
      { timestamp: at(3), path: '/docs/B', userAgent: human, ip: '203.0.113.1' },
    ];
    const ingest = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
    expect(ingest.status).toBe(202);
    expect(ingest.body.accepted).toBe(8);
    const visitors = await e.server.api('GET', `/v1/analytics/${projectId}/visitors`, { key });
    expect(visitors.body.totals).toEqual({ human: 2, ai: 2, total: 4 });
    const apiOrder = visitors.body.visitors.map((r: { path: string }) => r.path);
    expect(apiOrder).toEqual(['/docs/start', '/docs/cli', '/docs/B', '/docs/a']);

    await page.getByRole('link', { name: 'Analytics' }).click();
    await page.waitForURL(`**/projects/${projectId}/analytics`);
    await expect.poll(() => page.getByTestId('total-human').textContent()).toBe('2');
    expect(await page.getByTestId('total-ai').textContent()).toBe('2');
    expect(await page.getByTestId('total-total').textContent()).toBe('4');
    const table = page.getByRole('table').filter({ has: page.getByRole('button', { name: 'Page' }) });
    const rows = table.getByRole('row');
    await expect.poll(() => rows.count()).toBe(5);
    // The API's order: total descending, then path by code point — /docs/start (2 + 1 = 3), /docs/cli (1 + 1 = 2), /docs/B, /docs/a.
    expect((await rows.nth(1).textContent())!.replace(/\s+/g, ' ')).toBe('/docs/start213');
    expect((await rows.nth(2).textContent())!.replace(/\s+/g, ' ')).toBe('/docs/cli112');
    for (const [i, p] of apiOrder.entries()) expect(await rows.nth(i + 1).textContent()).toMatch(new RegExp(`^${p}\\d`));
    await table.getByRole('button', { name: 'Page' }).click();
    expect(await rows.nth(1).textContent()).toMatch(/^\/docs\/B\d/);
    await page.getByRole('table').filter({ hasText: 'ChatGPT' }).waitFor();
    await page.getByRole('cell', { name: 'Claude', exact: false }).first().waitFor();
    expect(await page.locator('canvas').count()).toBe(1);

    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export CSV' }).click()]);
    const csv = readFileSync((await download.path())!, 'utf8');
    // The same writer as `folio analytics … --format csv` (src/client/csv.ts).
    expect(csv).toBe('path,human,ai,total\r\n/docs/B,1,0,1\r\n/docs/a,1,0,1\r\n/docs/cli,1,1,2\r\n/docs/start,2,1,3\r\n');
  });

  it('saves project settings and shows the script tag', async () => {
    await page.getByRole('link', { name: 'Settings' }).click();
    await page.waitForURL(`**/projects/${projectId}/settings`);
    await page.getByLabel('Open pull requests as drafts').check();
    await page.getByLabel('Webhook URL').fill('https://hooks.example.com/folio');
    await page.getByLabel('Webhook secret').fill('webhook-secret-value');
    await page.getByLabel('Site origins').fill('https://docs.example.com');
    await page.getByLabel('Docs checks').selectOption('strict');
    // A redirect host that is not a host name is refused with the server's sentence; nothing is saved.
    await page.getByLabel('Redirect hosts').fill('https://status.example.com/');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Redirect host "https://status.example.com/" must be a host name').waitFor();
    expect((await e.server.services.projects.store.get(projectId))!.checks).not.toBe('strict');
    await page.getByLabel('Redirect hosts').fill('Status.Example.com\npartner.example');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    const project = await e.server.services.projects.store.get(projectId);
    expect(project).toMatchObject({
      checks: 'strict',
      draft_prs: 1,
      webhook_url: 'https://hooks.example.com/folio',
      site_origins: '["https://docs.example.com"]',
      redirect_hosts: '["status.example.com","partner.example"]',
    });
    await page.getByLabel('Build command').fill('make docs');
    await page.getByLabel('Setup command').fill('make deps');
    await page.getByLabel('Build time limit (seconds)').fill('120');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    await page.getByLabel('Comments that act').selectOption('every');
    await page.getByLabel('Name that calls the agent').fill('@docs-bot');
    const built = await (async () => {
      await page.getByRole('button', { name: 'Save settings' }).click();
      await page.getByText('Settings saved.').waitFor();
      return e.server.services.projects.store.get(projectId);
    })();
    expect(built).toMatchObject({ review_comments: 'every', review_mention: '@docs-bot' });
    expect(built).toMatchObject({ build: 'on', build_command: 'make docs', build_setup: 'make deps', build_timeout_seconds: 120 });
    // A time limit out of range is refused, and nothing is saved.
    await page.getByLabel('Build time limit (seconds)').fill('5');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText(/buildTimeoutSeconds/).first().waitFor();
    expect((await e.server.services.projects.store.get(projectId))!.build_timeout_seconds).toBe(120);
    await page.getByLabel('Build time limit (seconds)').fill('');
    await page.getByLabel('Site build', { exact: true }).selectOption('off');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Settings saved.').waitFor();
    expect(await e.server.services.projects.store.get(projectId)).toMatchObject({ build: 'off', build_timeout_seconds: null });
    // Stored sealed, opened only for the webhook sender.
    expect(project!.webhook_secret).toMatch(/^enc:v1:/);
    expect(e.server.services.projects.store.secrets(project!).webhookSecret).toBe('webhook-secret-value');
    await page.getByText(`data-project="${projectId}"`).waitFor();
  });

  it("lists a job's webhook deliveries and sends one again", async () => {
    // The receiver's name does not resolve on this machine: with one attempt allowed, the delivery fails.
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Say hello in the README.' } });
    expect(created.status).toBe(201);
    const attemptsOf = async () =>
      (await e.server.services.store.db.selectFrom('webhook_deliveries').select('id').where('job_id', '=', created.body.id).where('event', '=', 'job.active').execute()).length;
    await page.goto(`${e.server.url}/projects/${projectId}/jobs/${created.body.id}`);
    const row = page.getByTestId('webhook-delivery').filter({ hasText: 'job.active' });
    await row.getByText('failed').waitFor();
    await expect.poll(() => row.textContent()).toMatch(/hooks.example.com could not be resolved/);
    const before = await attemptsOf();
    await row.getByRole('button', { name: 'Send again' }).click();
    await expect.poll(attemptsOf).toBe(before + 1);
    await page.getByRole('link', { name: '← All jobs' }).click();
  });

  it('revokes the key after confirmation and the API refuses it', async () => {
    await page.getByRole('link', { name: 'API keys' }).click();
    await page.waitForURL(`**/projects/${projectId}/keys`);
    const row = page.getByRole('row').filter({ hasText: 'E2E pipeline' });
    // The key was used from the test: its last use is shown.
    await expect.poll(() => row.textContent()).toMatch(/just now|minutes? ago|seconds ago/);
    await row.getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    expect((await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).status).toBe(200);
    await row.getByRole('button', { name: /^Revoke/ }).click();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();

    const refused = await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(refused.status).toBe(401);
    expect(refused.body.code).toBe('revoked_api_key');
  });

  it('lists the project on the projects page', async () => {
    await page.getByRole('link', { name: 'Projects', exact: true }).first().click();
    await page.waitForURL('**/projects');
    await page.getByRole('link', { name: 'Acme docs' }).waitFor();
    // Narrow screens: the same page stays usable.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Acme docs' }).click();
    await page.getByRole('heading', { name: 'Agent jobs' }).waitFor();
    await page.setViewportSize({ width: 1280, height: 860 });
  });

  it('sends a visitor without a session to sign-in and back to the page they asked for', async () => {
    await context.clearCookies();
    await page.goto(`${e.server.url}/projects/${projectId}/analytics`);
    await page.waitForURL(`**/login?next=${encodeURIComponent(`/projects/${projectId}/analytics`)}`);
    await page.getByLabel('Email').fill(OWNER.email);
    await page.getByLabel('Password').fill(OWNER.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL(`**/projects/${projectId}/analytics`);
    await expect.poll(() => page.getByTestId('total-total').textContent()).toBe('4');

    // A session that ends while the page is open (signed out elsewhere) leads back to sign-in.
    await context.clearCookies();
    await page.getByRole('link', { name: 'Agent jobs' }).click();
    await page.waitForURL(/\/login/);
    await page.getByRole('heading', { name: 'Sign in to Folio' }).waitFor();
  });

  it('ran without script errors in the page', () => {
    expect(scriptErrors).toEqual([]);
  });
});
