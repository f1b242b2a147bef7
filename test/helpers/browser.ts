// One way for tests to start a headless Chromium: the machine's own when one is on PATH (faster to
// start, and what CI machines with a browser use), otherwise the Chromium that ships inside the
// @sparticuz/chromium npm package, unpacked on first use. So `npm ci && npm test` needs no system
// browser. FOLIO_TEST_CHROMIUM=<path> picks a binary; FOLIO_TEST_CHROMIUM=npm forces the packaged one.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type LaunchOptions } from 'playwright-core';

const SYSTEM_NAMES = ['chromium', 'chromium-browser', 'google-chrome'];

/** The first system browser on PATH, if any. */
function onPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(path.delimiter).filter(Boolean)) {
    for (const name of SYSTEM_NAMES) {
      const candidate = path.join(dir, name);
      if (existsSync(candidate)) return candidate;
    }
  }
  return undefined;
}

/** Flags for a headless browser on a machine with a closed network (no background connections). */
const ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-dev-shm-usage',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

async function packagedChromium(): Promise<string> {
  const { default: Sparticuz } = await import('@sparticuz/chromium');
  // WebGL is not needed; this also skips unpacking SwiftShader.
  Sparticuz.setGraphicsMode = false;
  return Sparticuz.executablePath();
}

/** The Chromium binary tests drive, and where it came from. */
export async function chromiumPath(): Promise<{ path: string; source: 'system' | 'npm' | 'env' }> {
  const chosen = process.env.FOLIO_TEST_CHROMIUM?.trim();
  if (chosen && chosen !== 'npm') return { path: chosen, source: 'env' };
  if (chosen !== 'npm') {
    const system = onPath();
    if (system) return { path: system, source: 'system' };
  }
  return { path: await packagedChromium(), source: 'npm' };
}

export async function launchChromium(opts: LaunchOptions = {}): Promise<Browser> {
  const { path } = await chromiumPath();
  return chromium.launch({ ...opts, executablePath: path, headless: true, args: [...ARGS, ...(opts.args ?? [])] });
}
