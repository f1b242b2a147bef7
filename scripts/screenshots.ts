// `npm run screenshots`: the one way the dashboard's pictures in docs/screenshots are made. Starts a
// Folio server on a temporary data directory with a month of realistic data (test/e2e/realistic.ts:
// visits by humans, AI answers and crawlers; jobs in every state run by the real agent with a scripted
// model on a local code host) and writes every page at 1280 px (`<page>.png`) and 390 px
// (`<page>-phone.png`). The layout test (test/e2e/layout.test.ts) visits the same pages.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../test/helpers/browser.ts';
import { ensureDashboardBuilt, signedInPage } from '../test/e2e/helpers.ts';
import { dashboardPages, setUp, SIGNED_OUT_PAGES, startRealistic, WIDTHS, type Realistic } from '../test/e2e/realistic.ts';

const OUT = path.resolve('docs/screenshots');

const fileOf = (name: string, width: number) => path.join(OUT, width < 800 ? `${name}-phone.png` : `${name}.png`);

async function shoot(page: Page, name: string, width: number): Promise<void> {
  // Fonts and the chart settle; the live job's stream stays open, so no "network idle" wait.
  await page.waitForTimeout(400);
  await page.screenshot({ path: fileOf(name, width), fullPage: true });
  console.log(`  ${path.relative(process.cwd(), fileOf(name, width))}`);
}

async function signedOut(browser: Browser, r: Realistic, which: keyof typeof SIGNED_OUT_PAGES): Promise<void> {
  for (const [, width, height] of WIDTHS) {
    const context = await browser.newContext({ viewport: { width, height }, colorScheme: 'light', timezoneId: 'UTC', locale: 'en-GB' });
    const page = await context.newPage();
    await page.goto(r.e.server.url + SIGNED_OUT_PAGES[which].path);
    await SIGNED_OUT_PAGES[which].ready(page);
    await shoot(page, which, width);
    await context.close();
  }
}

async function signedIn(browser: Browser, r: Realistic): Promise<void> {
  for (const [, width, height] of WIDTHS) {
    const page = await signedInPage(browser, r.e.server, { width, height }, []);
    for (const p of dashboardPages(r)) {
      await page.goto(r.e.server.url + p.path);
      await p.ready(page);
      await shoot(page, p.name, width);
    }
    if (width > 800) {
      // The code-change triggers, as docs/triggers.md shows them.
      await page.goto(`${r.e.server.url}/projects/${r.projectId}/settings`);
      const section = page.locator('section[aria-labelledby="triggers-title"]');
      await section.waitFor();
      await section.screenshot({ path: path.join(OUT, 'triggers.png') });
    }
    await page.context().close();
  }
}

async function main(): Promise<void> {
  ensureDashboardBuilt();
  mkdirSync(OUT, { recursive: true });
  console.log('Seeding a month of visits and running the agent jobs…');
  const r = await startRealistic({ setup: false });
  console.log(`${r.events.toLocaleString('en-US')} page views sent; writing ${OUT}`);
  const browser = await launchChromium();
  try {
    await signedOut(browser, r, 'setup');
    await setUp(r.e.server);
    await signedOut(browser, r, 'sign-in');
    await signedIn(browser, r);
  } finally {
    await browser.close();
    await r.close();
  }
}

await main();
