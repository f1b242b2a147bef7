// The dashboard's new parts in a real browser: code-change triggers in the project settings (secret
// shown once, watched repositories and filters saved, deliveries listed with their outcome) and keys
// that cover many projects on the API keys page.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp } from '../dashboard/session.ts';
import { ensureDashboardBuilt, signedInPage } from './helpers.ts';
import { sendGitHub } from '../fixtures/code-host-sender.ts';


let server: TestServer;
let browser: Browser;
let page: Page;
let a: string;
let b: string;
let c: string;
const errors: string[] = [];

beforeAll(async () => {
  ensureDashboardBuilt();
  server = await startTestServer({ workers: 0 });
  await setUp(server);
  a = await server.createProject({ name: 'Docs A' });
  b = await server.createProject({ name: 'Docs B' });
  c = await server.createProject({ name: 'Docs C' });
  browser = await launchChromium();
  page = await signedInPage(browser, server, { width: 1280, height: 900 }, errors);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await server?.close();
});

describe('code-change triggers and many-project keys in the dashboard', () => {
  it('makes a secret shown once, saves a watched repository with filters, and lists deliveries', async () => {
    await page.goto(`${server.url}/projects/${a}/settings`);
    await page.getByRole('heading', { name: 'Code-change triggers' }).waitFor();
    expect(await page.getByTestId('github-endpoint').textContent()).toBe(`${server.url}/v1/triggers/${a}/github`);
    await page.getByRole('button', { name: 'Make a secret' }).click();
    const secret = (await page.getByTestId('trigger-secret').textContent())!.trim();
    expect(secret).toMatch(/^fts_/);

    await page.getByRole('button', { name: 'Watch a repository' }).click();
    const repo = page.getByRole('group', { name: 'Watched repository 1' });
    await repo.getByLabel('Code repository').fill('https://github.com/acme/api');
    await repo.getByLabel('Opened pull requests (new commits follow up)').check();
    await repo.getByLabel('Only when these paths change').fill('src/**\napi/*.proto');
    await repo.getByLabel('Only with one of these labels').fill('docs-needed, api');
    await page.getByRole('button', { name: 'Save trigger settings' }).click();
    await page.getByText('Saved the trigger settings.').waitFor();
    const stored = await server.services.triggers.store.repositories(a);
    expect(stored).toMatchObject([{ host: 'github', fullPath: 'acme/api', events: ['merged', 'opened'], paths: ['src/**', 'api/*.proto'], labels: ['docs-needed', 'api'] }]);

    // A bad template is refused with the server's sentence.
    await page.getByLabel('The instruction each job gets').fill('Hello {{nope}}');
    await page.getByRole('button', { name: 'Save trigger settings' }).click();
    await page.getByText('The template names unknown placeholders: {{nope}}').waitFor();
    await page.getByRole('button', { name: 'Use the default template' }).click();
    await page.getByRole('button', { name: 'Save trigger settings' }).click();
    await page.getByText('Saved the trigger settings.').waitFor();
    expect((await server.services.triggers.store.settings(a)).template).toBeNull();

    // Deliveries show up with their outcome.
    expect((await sendGitHub(`${server.url}/v1/triggers/${a}/github`, secret, 'ping', { zen: 'hi' })).status).toBe(200);
    // A signed but malformed delivery is recorded as rejected (an unsigned one would only be counted).
    expect((await sendGitHub(`${server.url}/v1/triggers/${a}/github`, secret, 'push', null, { raw: '{"ref":' })).status).toBe(400);
    await page.getByRole('button', { name: 'Refresh' }).click();
    const table = page.getByRole('table');
    await table.getByText('Ping received: the webhook is set up.').waitFor();
    await table.getByText('rejected').waitFor();

    // A delivery signed with another secret is not listed, only counted above the list.
    expect((await sendGitHub(`${server.url}/v1/triggers/${a}/github`, 'not-the-secret', 'ping', { zen: 'hi' })).status).toBe(401);
    await server.services.triggers.receiver.saveRefusals();

    // After a reload the secret is gone from the page.
    await page.reload();
    await page.getByRole('heading', { name: 'Code-change triggers' }).waitFor();
    await page.getByText('1 delivery was refused before a signature checked out').waitFor();
    await page.getByRole('button', { name: 'Make a new secret' }).waitFor();
    expect(await page.content()).not.toContain(secret);
  });

  it('creates a key for chosen projects that works on them and not on others, shows what it covers, and revokes it', async () => {
    await page.goto(`${server.url}/projects/${a}/keys`);
    await page.getByRole('heading', { name: 'Create a key' }).waitFor();
    await page.getByLabel('Name').fill('Fleet');
    await page.getByLabel('Works on').selectOption('chosen');
    await page.getByLabel(/Docs B/).check();
    await page.getByRole('button', { name: 'Create key' }).click();
    const key = (await page.getByTestId('new-key').textContent())!.trim();
    expect(key).toMatch(/^folio_[A-Za-z0-9]{40}$/);
    await page.getByText('Works on: 2 projects: Docs A, Docs B.').waitFor();
    for (const p of [a, b]) expect((await server.api('GET', `/v2/agent/${p}/jobs`, { key })).status).toBe(200);
    expect((await server.api('GET', `/v2/agent/${c}/jobs`, { key })).status).toBe(403);
    await page.getByRole('button', { name: 'I have stored the key' }).click();

    await page.getByLabel('Works on').selectOption('all');
    await page.getByRole('button', { name: 'Create key' }).click();
    await page.getByText('Works on: Every project.').waitFor();
    await page.getByRole('button', { name: 'I have stored the key' }).click();

    const row = page.getByRole('row').filter({ hasText: 'Fleet' });
    await expect.poll(() => row.getByTestId('key-covers').textContent()).toBe('2 projects: Docs A, Docs B');
    await page.getByRole('row').filter({ hasText: 'Every project' }).waitFor();
    await row.getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
    await dialog.getByText('on every project it covers').waitFor();
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await row.getByText('revoked').waitFor();
    for (const p of [a, b]) expect((await server.api('GET', `/v2/agent/${p}/jobs`, { key })).status).toBe(401);
    // Project B's page lists the revoked admin key too.
    await page.goto(`${server.url}/projects/${b}/keys`);
    await page.getByRole('row').filter({ hasText: 'Fleet' }).getByText('revoked').waitFor();
    expect(errors).toEqual([]);
  });
});
