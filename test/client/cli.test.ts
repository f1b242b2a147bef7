// The `folio jobs …` commands as a user runs them: a child process against a real server.
import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { FolioClient } from '../../src/client/index.ts';
import { PR_LINK, ScriptedHandler } from './fixtures/handler.ts';
import { CLI_ENTRY, NODE, runCli as run } from './fixtures/run-cli.ts';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';
import { jobFromMergedPullRequest } from '../triggers/helpers.ts';

const HOST_TOKEN = 'ghp_cli_code_host_token_0123456789';

let server: TestServer;
let handler: ScriptedHandler;
let client: FolioClient;
let env: Record<string, string>;
let projectId: string;
/** A code host whose merged pull requests start jobs (a job's trigger). */
let codeHost: CodeHostServer;

const runCli = (args: string[], extraEnv: Record<string, string | undefined> = {}, onStderr?: (text: string) => void) =>
  run(args, { ...env, ...extraEnv }, onStderr);

beforeAll(async () => {
  handler = new ScriptedHandler();
  server = await startTestServer({ jobHandler: handler });
  codeHost = await startCodeHost({ token: HOST_TOKEN });
  projectId = await server.createProject();
  const key = await server.createKey(projectId);
  client = new FolioClient({ baseUrl: server.url, apiKey: key, projectId });
  env = { FOLIO_URL: server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId };
});

afterAll(async () => {
  await server?.close();
  await codeHost?.close();
});

describe('folio jobs create --wait', () => {
  it('exits 0 and prints the pull request link when the job completes', async () => {
    const run = await runCli(['jobs', 'create', 'complete: document the --dry-run flag', '--wait']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toBe(`Completed: ${PR_LINK}`);
    // Not a terminal: progress is plain lines on stderr (readable in CI logs).
    expect(run.stderr).toMatch(/Created job_\w+/);
    expect(run.stderr).toMatch(/job_\w+: completed/);
    expect(run.stderr).toMatch(/job_\w+: #\d+ \S+ turn\.completed/);
  });

  it('shows a spinner with the live status on a terminal', async () => {
    // util-linux `script` runs the command on a pseudo-terminal, as a user's shell would.
    const run = await new Promise<{ code: number | null; out: string }>((resolve, reject) => {
      const child = spawn('script', ['-qec', `${NODE} ${CLI_ENTRY} jobs create complete:on-a-terminal --wait`, '/dev/null'], {
        env: { ...env, PATH: process.env.PATH ?? '', TERM: 'xterm' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      child.stdout.on('data', (d: Buffer) => (out += d.toString()));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, out }));
    });
    expect(run.code).toBe(0);
    // cli-progress redraws the line from its first column (CSI 1 G) and hides the cursor meanwhile.
    expect(run.out).toMatch(/\x1b\[1G[⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏] job_\w+ · (active|completed) · 0:\d\d/);
    expect(run.out).toContain(`Completed: ${PR_LINK}`);
    // The spinner line is cleared (CSI 0 J) and the cursor shown again before the result is printed.
    const result = run.out.indexOf('Completed:');
    expect(run.out.lastIndexOf('\x1b[1G')).toBeLessThan(result);
    expect(run.out.lastIndexOf('\x1b[0J')).toBeGreaterThan(run.out.lastIndexOf('\x1b[1G'));
    expect(run.out.lastIndexOf('\x1b[0J')).toBeLessThan(result);
    expect(run.out.lastIndexOf('\x1b[?25h')).toBeLessThan(result);
  });

  it('exits 1 with the reason when the job fails', async () => {
    const run = await runCli(['jobs', 'create', 'fail: cannot be done', '--wait']);
    expect(run.code).toBe(1);
    expect(run.stdout.trim()).toBe('Failed: The model gave up on this prompt. (model_error)');
  });

  it('exits 2 when the job is archived while waiting', async () => {
    let jobId: string | undefined;
    const running = runCli(['jobs', 'create', 'hold: archived midway', '--wait', '--json'], {}, (err) => {
      jobId ??= /Created (job_\w+)/.exec(err)?.[1];
    });
    for (let i = 0; i < 200 && !jobId; i++) await new Promise((r) => setTimeout(r, 50));
    expect(jobId).toBeDefined();
    await handler.whenHeld(jobId!);
    await client.archiveJob(jobId!);
    const run = await running;
    expect(run.code).toBe(2);
    expect(JSON.parse(run.stdout)).toMatchObject({ id: jobId, status: 'archived' });
  });

  it('gives up after --timeout with exit code 1 while the job is still active', async () => {
    const job = await client.createJob('hold: slow');
    const run = await runCli(['jobs', 'wait', job.id, '--timeout', '1s']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain(`Job ${job.id} is still active after 1 s of waiting. (timeout)`);
    expect(run.stdout).toBe('');
    await handler.finish(job.id);
    const done = await runCli(['jobs', 'wait', job.id]);
    expect(done.code).toBe(0);
    expect(done.stdout.trim()).toBe(`Completed: ${PR_LINK}`);
  });
});

describe('folio jobs wait, interrupted', () => {
  it('stops on Ctrl-C with exit code 130 and says so', async () => {
    const job = await client.createJob('hold: interrupted wait');
    const child = spawn(NODE, [CLI_ENTRY, 'jobs', 'wait', job.id], { env: { ...env, PATH: process.env.PATH ?? '' }, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    const closed = new Promise<number | null>((resolve) => child.on('close', resolve));
    // The first status line says the wait has begun.
    for (let i = 0; i < 200 && !stderr.includes(`${job.id}: active`); i++) await new Promise((r) => setTimeout(r, 50));
    expect(stderr).toContain(`${job.id}: active`);
    child.kill('SIGINT');
    expect(await closed).toBe(130);
    expect(stderr.trimEnd().split('\n').at(-1)).toBe('folio: stopped.');
    expect(stdout).toBe('');
    await handler.finish(job.id);
  });
});

describe('folio jobs get|list|message|archive|events', () => {
  it('creates without waiting, gets, follows up, lists and archives a job', async () => {
    const created = await runCli(['jobs', 'create', 'complete: first turn', '--json']);
    expect(created.code).toBe(0);
    const job = JSON.parse(created.stdout);
    expect(job).toMatchObject({ status: 'active', prLink: null });
    await client.waitForJob(job.id, { intervalMs: 100 });

    const human = await runCli(['jobs', 'get', job.id]);
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(new RegExp(`^ID\\s+${job.id}$`, 'm'));
    expect(human.stdout).toMatch(/^STATUS\s+completed$/m);
    expect(human.stdout).toMatch(new RegExp(`^PR\\s+${PR_LINK}$`, 'm'));
    expect(human.stdout).toMatch(/^USAGE\s+1000 input \+ 200 output tokens \(~\$0\.0060\)$/m);
    expect(human.stdout).toMatch(/^FILES\s+2 changed, \+13 -1$/m);
    expect(human.stdout).toMatch(/^\s+guides\/new\.mdx {2}added {2}\+12 -0$/m);
    // Made through the API: no code change started it.
    expect(human.stdout).not.toMatch(/^TRIGGER/m);
    const asJson = JSON.parse((await runCli(['jobs', 'get', job.id, '--json'])).stdout);
    expect(asJson.usage).toEqual({ inputTokens: 1000, outputTokens: 200, totalTokens: 1200, estimatedCostUsd: 0.006 });
    expect(asJson.files).toHaveLength(2);

    const followUp = await runCli(['jobs', 'message', job.id, 'complete: second turn', '--wait']);
    expect(followUp.code).toBe(0);
    expect(followUp.stdout.trim()).toBe(`Completed: ${PR_LINK}`);

    const list = await runCli(['jobs', 'list', '--json', '--limit', '100']);
    expect(list.code).toBe(0);
    const page = JSON.parse(list.stdout);
    expect(page.jobs.map((j: { id: string }) => j.id)).toContain(job.id);
    expect(page).toHaveProperty('hasMore');

    const table = await runCli(['jobs', 'list', '--status', 'completed', '--all']);
    expect(table.stdout.split('\n')[0]).toMatch(/^ID\s+TITLE\s+STATUS\s+MODEL\s+CREATED\s+TOKENS\s+PR$/);
    // The TITLE column: the prompt's first line (this scripted handler opens no titled pull request).
    expect(table.stdout).toMatch(new RegExp(`^${job.id}\\s+complete: first turn\\s+completed\\s`, 'm'));

    const archived = await runCli(['jobs', 'archive', job.id]);
    expect(archived.code).toBe(0);
    expect(archived.stdout.trim()).toBe(`Archived ${job.id}.`);
    const again = await runCli(['jobs', 'message', job.id, 'one more']);
    expect(again.code).toBe(1);
    expect(again.stderr).toContain('(409 job_archived)');
  });

  it('message --wait shows the new turn\'s events only, not the history again', async () => {
    const job = await client.createJob('complete: the first turn');
    await client.waitForJob(job.id, { intervalMs: 100 });
    const history: number[] = [];
    for await (const e of client.jobEvents(job.id)) history.push(e.id);
    expect(history.length).toBeGreaterThan(1);

    const run = await runCli(['jobs', 'message', job.id, 'complete: the second turn', '--wait']);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout.trim()).toBe(`Completed: ${PR_LINK}`);
    const shown = [...run.stderr.matchAll(new RegExp(`^${job.id}: #(\\d+) \\S+ (\\S+)`, 'gm'))].map((m) => ({ id: Number(m[1]), type: m[2] }));
    expect(shown.map((e) => e.type)).toEqual(expect.arrayContaining(['message.queued', 'turn.completed']));
    expect(shown.map((e) => e.type)).not.toContain('job.created');
    expect(Math.min(...shown.map((e) => e.id))).toBe(history.at(-1)! + 1);
  });

  it('gets a job a merged pull request started, with the code change that started it', async () => {
    const { jobId, repositoryUrl, changeUrl } = await jobFromMergedPullRequest(server, codeHost, { projectId, repo: 'acme/api', token: HOST_TOKEN });
    await client.waitForJob(jobId, { intervalMs: 100 });
    const human = await runCli(['jobs', 'get', jobId]);
    expect(human.code).toBe(0);
    const line = human.stdout.split('\n').find((l) => l.startsWith('TRIGGER'));
    expect(line).toMatch(/^TRIGGER\s+Merged pull request on GitHub: /);
    expect(line!.split(': ').slice(1).join(': ')).toBe(changeUrl);
    const asJson = JSON.parse((await runCli(['jobs', 'get', jobId, '--json'])).stdout);
    expect(asJson.trigger).toEqual({ kind: 'pull_request_merged', host: 'github', repository: repositoryUrl, url: changeUrl });
  });

  it('returns the same job when a create is re-run with the same --idempotency-key', async () => {
    const args = ['jobs', 'create', 'complete: once per release', '--json', '--idempotency-key', 'release-1.4-docs'];
    const first = await runCli(args);
    const second = await runCli(args);
    expect(first.code).toBe(0);
    expect(second.code).toBe(0);
    expect(JSON.parse(second.stdout).id).toBe(JSON.parse(first.stdout).id);
    const other = await runCli(['jobs', 'create', 'complete: something else', '--idempotency-key', 'release-1.4-docs']);
    expect(other.code).toBe(1);
    expect(other.stderr).toContain('(422 idempotency_key_reused)');
  });

  it('prints events as lines or NDJSON, and --follow streams until the job is done', async () => {
    const job = await client.createJob('hold: events for the CLI');
    // Text from the model may carry terminal escape sequences: they must not reach the terminal.
    await handler.emit(job.id, 'step', { n: 1, message: 'Reading docs/cli.md\u001b]0;pwned\u0007' });

    const lines = await runCli(['jobs', 'events', job.id]);
    expect(lines.code).toBe(0);
    expect(lines.stdout).toMatch(/^#1 \d\d:\d\d:\d\d job\.created/m);
    expect(lines.stdout).toMatch(/^#\d+ \d\d:\d\d:\d\d step {2}Reading docs\/cli\.md ]0;pwned$/m);
    expect(lines.stdout).not.toMatch(/[\u001b\u0007]/);
    await handler.emit(job.id, 'tool_call', { step: 1, toolCallId: 't1', tool: 'edit_file', args: { path: 'docs/cli.md', find: 'a', replace: 'b' } });
    const withTool = await runCli(['jobs', 'events', job.id]);
    // A tool call reads as what it did, never its arguments as JSON.
    expect(withTool.stdout).toMatch(/^#\d+ \d\d:\d\d:\d\d tool_call {2}Edited docs\/cli\.md$/m);
    expect(withTool.stdout).toMatch(/^#1 \d\d:\d\d:\d\d job\.created {2}Job created: .+, on branch \S+ from \S+$/m);

    const following = runCli(['jobs', 'events', job.id, '--follow', '--json']);
    await new Promise((r) => setTimeout(r, 300));
    await handler.emit(job.id, 'step', { n: 2 });
    await handler.finish(job.id);
    const followed = await following;
    expect(followed.code).toBe(0);
    const events = followed.stdout.trim().split('\n').map((l) => JSON.parse(l));
    expect(events.map((e: { type: string }) => e.type)).toContain('turn.completed');
    expect(events.filter((e: { type: string }) => e.type === 'step').map((e: { data: { n: number } }) => e.data.n)).toEqual([0, 1, 2]);
    const ids = events.map((e: { id: number }) => e.id);
    expect(ids).toEqual([...ids].sort((a: number, b: number) => a - b));

    const after = await runCli(['jobs', 'events', job.id, '--json', '--after', String(ids.at(-2))]);
    expect(after.stdout.trim().split('\n').map((l) => JSON.parse(l).id)).toEqual([ids.at(-1)]);
  });
});

describe('folio analytics visitors', () => {
  it('prints only the CSV header when no page was viewed', async () => {
    const csv = await runCli(['analytics', 'visitors', '--format', 'csv', '--to', '2000-01-01']);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe('path,human,ai,total\r\n');
  });
});

describe('folio jobs errors', () => {
  it('reports API errors on stderr with exit code 1 and nothing on stdout', async () => {
    const run = await runCli(['jobs', 'get', 'job_00000000000000000000000000']);
    expect(run.code).toBe(1);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(/^folio: Job "job_00000000000000000000000000" does not exist in this project\. \(404 job_not_found\)$/m);
  });

  it('takes --url/--key/--project flags over the environment and explains missing ones', async () => {
    const missing = await runCli(['jobs', 'list'], { FOLIO_URL: undefined, FOLIO_API_KEY: undefined, FOLIO_PROJECT: undefined });
    expect(missing.code).toBe(1);
    expect(missing.stderr.trim()).toBe('folio: No server: pass --url or set FOLIO_URL (e.g. https://folio.example.com).');

    const flags = await runCli(['jobs', 'list', '--json', '--url', env.FOLIO_URL, '--key', env.FOLIO_API_KEY, '--project', env.FOLIO_PROJECT], {
      FOLIO_URL: undefined,
      FOLIO_API_KEY: undefined,
      FOLIO_PROJECT: undefined,
    });
    expect(flags.code).toBe(0);
    expect(JSON.parse(flags.stdout).jobs.length).toBeGreaterThan(0);

    const badKey = await runCli(['jobs', 'list', '--key', 'folio_not_a_real_key']);
    expect(badKey.code).toBe(1);
    expect(badKey.stderr).toMatch(/\(401 \w+\)/);
  });

  it('rejects bad option values before calling the server', async () => {
    const run = await runCli(['jobs', 'list', '--limit', '500']);
    expect(run.code).toBe(1);
    expect(run.stderr).toContain("option '--limit <n>' argument '500' is invalid");
  });
});

describe('spending limits in the CLI', () => {
  it('creates a job with its limits, shows them, and shows the month against the budget', async () => {
    const created = await runCli(['jobs', 'create', 'complete: limited', '--max-cost', '0.5', '--max-tokens', '9000', '--json']);
    expect(created.code, created.stderr).toBe(0);
    const job = JSON.parse(created.stdout);
    expect(job.limit).toEqual({ maxCostUsd: 0.5, maxTokens: 9000 });
    await client.waitForJob(job.id, { intervalMs: 100 });
    expect((await runCli(['jobs', 'get', job.id])).stdout).toMatch(/^LIMIT\s+\$0\.5 or 9000 tokens$/m);

    await server.services.projects.update(projectId, { monthlyBudgetUsd: 40, monthlyTokenBudget: 5_000_000 });
    const usage = await runCli(['jobs', 'usage', '--days', '7']);
    expect(usage.code, usage.stderr).toBe(0);
    expect(usage.stdout).toMatch(/^This month \(\d{4}-\d{2}-01 to \d{4}-\d{2}-01, UTC\): \$\d+\.\d{2} of \$40\.00, \d+ tokens of 5000000 tokens\.$/m);
    expect(usage.stdout).toMatch(/^DATE\s+JOBS\s+TOKENS\s+COST$/m);
    const asJson = JSON.parse((await runCli(['jobs', 'usage', '--json'])).stdout);
    expect(asJson.month).toMatchObject({ budgetUsd: 40, tokenBudget: 5_000_000 });

    const bad = await runCli(['jobs', 'create', 'x', '--max-cost', 'lots']);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/Give a number above 0/);
    await server.services.projects.update(projectId, { monthlyBudgetUsd: null, monthlyTokenBudget: null });
  });
});
