// What the dashboard's browser tests share: the built dashboard, the screenshots folder, and a
// signed-in page.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { OWNER } from '../dashboard/session.ts';

/** docs/screenshots with FOLIO_UPDATE_SCREENSHOTS=1, else a temporary folder. */
export function screenshotsDir(): string {
  const dir = process.env.FOLIO_UPDATE_SCREENSHOTS === '1' ? path.resolve('docs/screenshots') : mkdtempSync(path.join(os.tmpdir(), 'folio-shots-'));
  mkdirSync(dir, { recursive: true });
  return dir;
}

/** The server serves web/dist: build it once if this checkout has not (npm ci does). */
export function ensureDashboardBuilt(): void {
  if (!existsSync(path.resolve('web/dist/index.html'))) {
    execFileSync(path.resolve('node_modules/.bin/vite'), ['build', '--config', 'web/vite.config.ts', '--logLevel', 'error'], { stdio: 'inherit' });
  }
}

/** A page of a new browser context, signed in as the owner; script errors go to `errors`. */
export async function signedInPage(browser: Browser, server: TestServer, viewport: { width: number; height: number }, errors: string[]): Promise<Page> {
  const context = await browser.newContext({ viewport, timezoneId: 'UTC', locale: 'en-GB' });
  const page = await context.newPage();
  page.setDefaultTimeout(20_000);
  page.on('pageerror', (err) => errors.push(err.message));
  await page.goto(`${server.url}/login`);
  await page.getByLabel('Email').fill(OWNER.email);
  await page.getByLabel('Password').fill(OWNER.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL('**/projects');
  return page;
}
