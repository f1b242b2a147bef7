// `folio suggestions list|start` as a user runs them (a child process) against a real server with
// the real agent, a scripted model and the local code host; the typed client underneath.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { MINTLIFY } from '../fixtures/docs-sites.ts';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { runCli as run } from '../client/fixtures/run-cli.ts';
import { FolioClient } from '../../src/client/index.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
/** Not shaped like a site path: quotes, spaces, backticks and markup. */
const HOSTILE = '/docs/"run this" `now` <b>';

let e: E2E;
let env: Record<string, string>;
let client: FolioClient;

beforeAll(async () => {
  e = await startE2E();
  const url = e.host.createRepo('acme/cli-suggest', MINTLIFY.files);
  const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
  const key = await e.server.createKey(projectId);
  env = { FOLIO_URL: e.server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId };
  client = new FolioClient({ baseUrl: e.server.url, apiKey: key, projectId });
  const at = Date.now() - 86_400_000;
  await client.ingestEvents([1, 2, 3, 4].map((n) => ({ path: '/guides/authentication', userAgent: HUMAN_UA, visitorId: `v${n}`, status: 404, timestamp: new Date(at).toISOString() })));
  await client.ingestEvents([1, 2, 3].map((n) => ({ path: HOSTILE, userAgent: HUMAN_UA, visitorId: `x${n}`, status: 404, timestamp: new Date(at).toISOString() })));
});
afterAll(async () => {
  await e?.close();
});

describe('folio suggestions', () => {
  it('list: the broken path, its visitors and its likely page; --json is the client\'s answer', async () => {
    const table = await run(['suggestions', 'list'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/mintlify site, 4 pages/);
    expect(table.stdout).toMatch(/\/guides\/authentication\s+4\s+4\s+0\s+\/guides\/auth \(0\.\d\d\)/);
    expect(table.stdout).toContain('Start one: folio suggestions start <id>');
    // Listed for people, percent-encoded, with why; never in a suggestion.
    expect(table.stdout).toMatch(/Not proposed \(not shaped like a path of the site; never given to the agent\):\nPATH +VISITORS +WHY\n\/docs\/%22run%20this%22%20%60now%60%20%3Cb%3E +3 +It has a character site paths do not use \(U\+0022\)\./);
    expect(table.stdout).not.toContain('"run this"');
    const json = await run(['suggestions', 'list', '--json'], env);
    const listed = JSON.parse(json.stdout);
    expect(listed.suggestions[0].id).toBe((await client.suggestions()).suggestions[0].id);
  });

  it('start --wait: the job runs and the pull request link is printed; then it is listed as started', async () => {
    const { suggestions } = await client.suggestions();
    const docs = JSON.parse(MINTLIFY.files['docs.json']);
    docs.redirects.push({ source: '/guides/authentication', destination: '/guides/auth' });
    let turn = 0;
    e.llm.setResponder(() =>
      turn++ === 0 ? { toolCalls: [{ name: 'write_file', args: { path: 'docs.json', content: JSON.stringify(docs) } }] } : { toolCalls: [{ name: 'finish', args: { title: 'Redirect', summary: 'Done.' } }] },
    );
    const started = await run(['suggestions', 'start', suggestions[0].id, '--wait'], env);
    expect(started.stderr).toMatch(/Started job_\w+ from "Redirect 1 broken path" \(1 path\)/);
    expect(started.code).toBe(0);
    expect(started.stdout).toMatch(/^Completed: http/);
    const after = await run(['suggestions', 'list'], env);
    expect(after.stdout).toContain('Nothing to propose.');
    expect(after.stdout).toMatch(/Started from suggestions:\n\njob_\w+ {2}completed, pull request open {2}Redirect 1 broken path/);
    // Just completed: no "after" count yet, so nothing reads as a fix that worked ("0 in 0 days").
    expect(after.stdout).toMatch(/; after: not yet \(the job completed on \d{4}-\d\d-\d\d \d\d:\d\d UTC; counted once a day has passed\)\n/);
    expect(after.stdout).not.toMatch(/in 0 days|\(0 days\)/);
  });

  it('start with an unknown id: the server\'s sentence and code, exit 1', async () => {
    const res = await run(['suggestions', 'start', `sug_${'a'.repeat(24)}`], env);
    expect(res.code).toBe(1);
    // The CLI's one error form: the sentence with its code, then the request id to report.
    expect(res.stderr).toMatch(/^folio: .*has no current suggestion .*\(404 suggestion_not_found\)\n  request id: \S+\n$/);
  });
});
