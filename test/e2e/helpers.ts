// What the dashboard's browser tests and scripts/screenshots.ts share: the built dashboard and a
// signed-in page.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import type { TestServer } from '../helpers/server.ts';
import { OWNER } from '../dashboard/session.ts';

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
