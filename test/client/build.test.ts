// The built client (tsconfig.client.json's declarations, client.vite.config.ts's bundle) as users get
// it: one ES module with no imports, working under the machine's other Node (20) and in Chromium
// against a real server.
import { execFile, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { PR_LINK, ScriptedHandler } from './fixtures/handler.ts';

const root = path.resolve(import.meta.dirname, '../..');
const NODE24 = path.join(root, 'node_modules/.bin/node');

let server: TestServer;
let outDir: string;
let env: { url: string; key: string; projectId: string };

beforeAll(async () => {
  outDir = mkdtempSync(path.join(os.tmpdir(), 'folio-client-build-'));
  await promisify(execFile)(NODE24, [path.join(root, 'node_modules/typescript/bin/tsc'), '-p', path.join(root, 'tsconfig.client.json'), '--outDir', outDir], { cwd: root });
  const vite = path.join(root, 'node_modules/vite/bin/vite.js');
  await promisify(execFile)(NODE24, [vite, 'build', '--config', path.join(root, 'client.vite.config.ts'), '--outDir', path.join(outDir, 'client'), '--logLevel', 'warn'], { cwd: root });
  server = await startTestServer({ jobHandler: new ScriptedHandler() });
  const projectId = await server.createProject();
  env = { url: server.url, key: await server.createKey(projectId), projectId };
});

afterAll(async () => {
  await server?.close();
  if (outDir) rmSync(outDir, { recursive: true, force: true });
});

/** Everything a program does with the client; prints a JSON report. Runs unchanged in Node and in a browser. */
const SCENARIO = `
async function scenario(FolioClient, FolioError, url, key, projectId) {
  const client = new FolioClient({ baseUrl: url, apiKey: key, projectId });
  const job = await client.createJob({ prompt: 'complete: from the compiled client' });
  const updates = [];
  const done = await client.waitForJob(job.id, { intervalMs: 100, onUpdate: (j) => updates.push(j.status) });
  const events = [];
  for await (const e of client.jobEvents(job.id, { follow: true })) events.push(e.type);
  // Server-Sent Events over a fetch stream, replayed from the start; breaking the loop closes it.
  const streamed = [];
  for await (const e of client.jobEvents(job.id, { follow: true, untilDone: false })) {
    streamed.push(e.type);
    if (e.type === 'turn.completed') break;
  }
  let error = null;
  try {
    await client.getJob('job_00000000000000000000000000');
  } catch (err) {
    error = { isFolioError: err instanceof FolioError, status: err.status, code: err.code };
  }
  const listed = [];
  for await (const j of client.listJobs({ limit: 1 })) listed.push(j.id);
  return { status: done.status, prLink: done.prLink, updates, events, streamed, error, listed };
}
`;

interface Report {
  status: string;
  prLink: string;
  updates: string[];
  events: string[];
  streamed: string[];
  error: unknown;
  listed: string[];
}

function expectScenario(report: Report) {
  expect(report.status).toBe('completed');
  expect(report.prLink).toBe(PR_LINK);
  expect(report.updates.at(-1)).toBe('completed');
  expect(report.events).toEqual(expect.arrayContaining(['job.created', 'step', 'turn.completed']));
  expect(report.streamed).toEqual(report.events.slice(0, report.events.indexOf('turn.completed') + 1));
  expect(report.error).toEqual({ isFolioError: true, status: 404, code: 'job_not_found' });
  expect(report.listed.length).toBeGreaterThanOrEqual(1);
}

describe('client sources', () => {
  // The browser build bundles index.ts and what it imports; the rest of src/client/ must stay as
  // portable, so no file there may reach the CLI, Node built-ins or a runtime dependency other than
  // the two small browser-safe ones the bundle carries.
  it('import only each other at run time, and the server\'s schemas for types', () => {
    const dir = path.join(root, 'src/client');
    const files = readdirSync(dir).filter((f) => f.endsWith('.ts'));
    expect(files).toContain('index.ts');
    for (const f of files) {
      const code = readFileSync(path.join(dir, f), 'utf8');
      for (const [, typeOnly, specifier] of code.matchAll(/^(?:import|export)\s+(type\s+)?[^;]*?\bfrom\s+'([^']+)'/gms)) {
        if (typeOnly) expect(specifier, `${f} imports types from ${specifier}`).toMatch(/^(\.\/[\w-]+\.ts|\.\.\/contracts\/[\w-]+\.ts|typebox)$/);
        else expect(specifier, `${f} imports ${specifier}`).toMatch(/^(\.\/[\w-]+\.ts|eventsource-parser|p-retry)$/);
      }
      expect(code, `${f} imports a module by side effect`).not.toMatch(/^import\s+'/m);
      expect(code, `${f} imports a module at run time`).not.toMatch(/\bimport\(/);
    }
  });
});

describe('compiled client', () => {
  it('is one ES module that imports nothing, with declarations', () => {
    const dir = path.join(outDir, 'client');
    const files = readdirSync(dir);
    for (const f of ['index.js', 'index.d.ts', 'client.d.ts', 'sse.d.ts', 'errors.d.ts']) expect(files).toContain(f);
    expect(files.filter((n) => n.endsWith('.js'))).toEqual(['index.js']);
    const code = readFileSync(path.join(dir, 'index.js'), 'utf8');
    expect([...code.matchAll(/^\s*import\s[^;]*?from\s+["']([^"']+)["']/gm)].map((m) => m[1])).toEqual([]);
    expect(code).not.toMatch(/\bimport\(/);
    expect(readFileSync(path.join(dir, 'index.d.ts'), 'utf8')).toContain('FolioClient');
  });

  // Node 24 from the dev dependency, plus the machine's own Node (20 here) when it is another version.
  const nodes = [NODE24];
  for (const candidate of ['/usr/bin/node', '/usr/local/bin/node']) if (existsSync(candidate) && !nodes.includes(candidate)) nodes.push(candidate);

  it.each(nodes)('runs a whole job scenario under %s', async (node) => {
    const script = path.join(outDir, `scenario-${nodes.indexOf(node)}.mjs`);
    writeFileSync(
      script,
      `import { FolioClient, FolioError } from './client/index.js';\n${SCENARIO}\n` +
        `const [url, key, projectId] = process.argv.slice(2);\n` +
        `const report = await scenario(FolioClient, FolioError, url, key, projectId);\n` +
        `console.log(JSON.stringify({ node: process.version, ...report }));\n`,
    );
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(node, [script, env.url, env.key, env.projectId], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
      child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => (code === 0 ? resolve(stdout) : reject(new Error(`${node} exited ${code}: ${stderr}`))));
    });
    const report = JSON.parse(out);
    expect(report.node).toMatch(/^v(2\d|[3-9]\d)\./);
    expectScenario(report);
  });

  it('runs the same scenario in Chromium, streaming events over fetch', async () => {
    let browser: Browser | undefined;
    try {
      browser = await launchChromium();
      const page = await browser.newPage();
      // Serve the compiled files from the server's own origin, so the page needs no CORS.
      await page.route(`${server.url}/__folio_client/**`, async (route) => {
        const rel = new URL(route.request().url()).pathname.replace('/__folio_client/', '');
        const file = path.join(outDir, rel);
        if (!file.startsWith(outDir) || !existsSync(file)) return route.fulfill({ status: 404, body: 'not found' });
        await route.fulfill({ status: 200, contentType: 'text/javascript', body: readFileSync(file, 'utf8') });
      });
      await page.goto(`${server.url}/__folio_client/client/index.js`);
      // A string, so the test runner does not rewrite the dynamic import.
      const report = await page.evaluate<Report & { ua: string }>(`(async () => {
        const { FolioClient, FolioError } = await import('/__folio_client/client/index.js');
        ${SCENARIO}
        const report = await scenario(FolioClient, FolioError, ${JSON.stringify(env.url)}, ${JSON.stringify(env.key)}, ${JSON.stringify(env.projectId)});
        return { ua: navigator.userAgent, ...report };
      })()`);
      expect(report.ua).toMatch(/Chrome/);
      expectScenario(report);
    } finally {
      await browser?.close();
    }
  });
});
