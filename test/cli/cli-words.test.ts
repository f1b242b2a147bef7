// The CLI's errors name its own flags and variables (`--from`, `FOLIO_URL`), never the API's or the
// client's names for them (`dateFrom`, `baseUrl`): from the server's answer and from the client.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { runCli } from '../helpers/process.ts';
import { inCliWords } from '../../src/cli/errors.ts';

let server: TestServer;
let env: Record<string, string>;
beforeAll(async () => {
  server = await startTestServer({ workers: 0 });
  const project = await server.createProject();
  env = { FOLIO_URL: server.url, FOLIO_API_KEY: await server.createKey(project, 'read'), FOLIO_PROJECT: project };
});
afterAll(async () => {
  await server?.close();
});

describe("the CLI's words in errors", () => {
  it('a bad --from or a range the wrong way round, as the server refuses it', async () => {
    const bad = await runCli(['analytics', 'visitors', '--from', '2026-13-45'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^folio: .*--from/);
    expect(bad.stderr).not.toMatch(/dateFrom|querystring/);
    const backwards = await runCli(['analytics', 'views', '--from', '2026-11-01', '--to', '2026-10-01'], env);
    expect(backwards.code).toBe(1);
    expect(backwards.stderr).toContain('--from must not be after --to (--from is inclusive, --to exclusive).');
    expect(backwards.stderr).not.toContain('dateFrom');
  });

  it('a FOLIO_URL that is not a URL, for a query and for an import over HTTP', async () => {
    const query = await runCli(['analytics', 'visitors'], { ...env, FOLIO_URL: 'folio.example.com' });
    expect(query.code).toBe(1);
    expect(query.stderr).toBe('folio: --url (FOLIO_URL) "folio.example.com" is not an absolute URL.\n');
    const log = path.join(server.dataDir, 'one.log');
    writeFileSync(log, '\n');
    const imported = await runCli(['analytics', 'import', '--no-progress', '--project', env.FOLIO_PROJECT, log], { ...env, FOLIO_URL: 'folio.example.com' });
    expect(imported.code).toBe(1);
    expect(imported.stderr).toBe('folio: --url (FOLIO_URL) "folio.example.com" is not an absolute URL.\n');
  });

  it('leaves words that only look alike', () => {
    expect(inCliWords('The path /querystring/limit: must be ≤ 250')).toBe('The path limit: must be ≤ 250');
    expect(inCliWords('dateFromage')).toBe('dateFromage');
  });
});
