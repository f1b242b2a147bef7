// The folio CLI for projects and keys, as a user runs it (a real process, real SQLite).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rmSync } from 'node:fs';
import { runCli } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';

const dir = tempDir();
// ssh allowed, so scp-like URLs (git@host:org/repo.git) are accepted.
const env: Record<string, string> = { FOLIO_DATA_DIR: dir, FOLIO_GIT_PROTOCOLS: 'https,ssh' };
let databases: BackendDatabases;
beforeAll(async () => {
  databases = await backendDatabases();
  Object.assign(env, databases.env);
});
afterAll(async () => {
  rmSync(dir, { recursive: true, force: true });
  await databases.drop();
});

describe('folio project / key', () => {
  let projectId = '';
  let keyId = '';

  it('creates a project, inferring the code host', async () => {
    const r = await runCli(['project', 'create', '--name', 'Docs', '--repository', 'https://gitlab.com/acme/docs.git', '--branch', 'trunk', '--json'], env);
    expect(r.code).toBe(0);
    const p = JSON.parse(r.stdout);
    expect(p).toMatchObject({ name: 'Docs', codeHost: 'gitlab', baseBranch: 'trunk', defaultModel: null, checks: 'warn' });
    expect(p.id).toMatch(/^prj_/);
    projectId = p.id;
    const gh = JSON.parse((await runCli(['project', 'create', '--name', 'G', '--repository', 'git@github.com:acme/docs.git', '--json'], env)).stdout);
    expect(gh.codeHost).toBe('github');
    const other = JSON.parse((await runCli(['project', 'create', '--name', 'O', '--repository', 'https://git.example.com/docs.git', '--checks', 'strict', '--json'], env)).stdout);
    expect(other.codeHost).toBe('none');
    expect(other.checks).toBe('strict');
  });

  it('lists projects as a table and as JSON', async () => {
    const human = await runCli(['project', 'list'], env);
    expect(human.stdout).toMatch(/^ID\s+NAME\s+REPOSITORY/);
    expect(human.stdout).toContain(projectId);
    expect(JSON.parse((await runCli(['project', 'list', '--json'], env)).stdout)).toHaveLength(3);
  });

  it('updates settings', async () => {
    const r = await runCli(['project', 'update', projectId, '--draft-prs', 'true', '--site-origin', 'https://docs.acme.dev', '--webhook-url', 'https://hooks.acme.dev/folio', '--checks', 'off', '--json'], env);
    expect(JSON.parse(r.stdout)).toMatchObject({ draftPrs: true, siteOrigins: ['https://docs.acme.dev'], webhookUrl: 'https://hooks.acme.dev/folio', checks: 'off', autoFixMinVisitors: null });
    // The weekly automatic broken-paths job: a threshold turns it on, "off" off again.
    expect(JSON.parse((await runCli(['project', 'update', projectId, '--auto-fix', '10', '--json'], env)).stdout).autoFixMinVisitors).toBe(10);
    expect(JSON.parse((await runCli(['project', 'update', projectId, '--auto-fix', 'off', '--json'], env)).stdout).autoFixMinVisitors).toBeNull();
    const hosts = JSON.parse((await runCli(['project', 'update', projectId, '--redirect-host', 'Status.Example.com', '--redirect-host', 'partner.example', '--json'], env)).stdout);
    expect(hosts.redirectHosts).toEqual(['status.example.com', 'partner.example']);
    expect(JSON.parse((await runCli(['project', 'update', projectId, '--redirect-host', '', '--json'], env)).stdout).redirectHosts).toEqual([]);
  });

  it('sets the site build: its commands, its time limit, off and back to the defaults', async () => {
    const args = ['project', 'update', projectId, '--build-setup', 'npm ci --ignore-scripts', '--build-command', "npx docusaurus build --out-dir '/tmp/site'", '--build-timeout', '120', '--json'];
    expect(JSON.parse((await runCli(args, env)).stdout)).toMatchObject({ build: 'on', buildSetup: 'npm ci --ignore-scripts', buildCommand: "npx docusaurus build --out-dir '/tmp/site'", buildTimeoutSeconds: 120 });
    expect(JSON.parse((await runCli(['project', 'update', projectId, '--build', 'off', '--json'], env)).stdout).build).toBe('off');
    const back = JSON.parse((await runCli(['project', 'update', projectId, '--build', 'on', '--build-setup', '', '--build-command', '', '--build-timeout', 'default', '--json'], env)).stdout);
    expect(back).toMatchObject({ build: 'on', buildSetup: null, buildCommand: null, buildTimeoutSeconds: null });
  });

  it("sets the team's instructions and the spending limits, and clears them", async () => {
    const args = ['project', 'update', projectId, '--instructions', 'Use British English.', '--max-cost', '0.5', '--max-tokens', '90000', '--monthly-budget', '25', '--monthly-tokens', '3000000', '--json'];
    expect(JSON.parse((await runCli(args, env)).stdout)).toMatchObject({ instructions: 'Use British English.', defaultMaxCostUsd: 0.5, defaultMaxTokens: 90_000, monthlyBudgetUsd: 25, monthlyTokenBudget: 3_000_000 });
    const cleared = JSON.parse((await runCli(['project', 'update', projectId, '--instructions', '', '--max-cost', 'none', '--monthly-budget', 'none', '--json'], env)).stdout);
    expect(cleared).toMatchObject({ instructions: null, defaultMaxCostUsd: null, monthlyBudgetUsd: null, defaultMaxTokens: 90_000, monthlyTokenBudget: 3_000_000 });
  });

  it('sets which review comments act and the name that calls the agent; refuses a name that is not @user', async () => {
    const defaults = JSON.parse((await runCli(['project', 'update', projectId, '--name', 'Docs', '--json'], env)).stdout);
    expect(defaults).toMatchObject({ reviewComments: 'mention', reviewMention: '@folio' });
    const set = JSON.parse((await runCli(['project', 'update', projectId, '--review-comments', 'every', '--review-mention', '@docs-bot', '--json'], env)).stdout);
    expect(set).toMatchObject({ reviewComments: 'every', reviewMention: '@docs-bot' });
    const bad = await runCli(['project', 'update', projectId, '--review-mention', 'folio; rm -rf'], env);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('The mention must be @ and a user name');
    expect((await runCli(['project', 'update', projectId, '--review-comments', 'sometimes'], env)).code).toBe(1);
  });

  it('creates a key once, lists prefixes only, revokes', async () => {
    const r = await runCli(['key', 'create', '--project', projectId, '--name', 'CI', '--scope', 'read', '--expires-in', '90d', '--json'], env);
    expect(r.code).toBe(0);
    const k = JSON.parse(r.stdout);
    expect(k.key).toMatch(/^folio_[A-Za-z0-9]{40}$/);
    expect(k.scope).toBe('read');
    expect(Date.parse(k.expiresAt) - Date.now()).toBeGreaterThan(89 * 86_400_000);
    keyId = k.id;
    const human = await runCli(['key', 'create', '--project', projectId], env);
    expect(human.stdout).toMatch(/^folio_[A-Za-z0-9]{40}\n/);
    expect(human.stdout).toContain('only time');
    // Without --expires-in a key expires in 90 days, as the dashboard's default; `never` is asked for.
    const forever = JSON.parse((await runCli(['key', 'create', '--project', projectId, '--expires-in', 'never', '--json'], env)).stdout);
    expect(forever.expiresAt).toBeNull();
    const list = await runCli(['key', 'list', '--project', projectId, '--json'], env);
    expect(list.stdout).not.toContain(k.key);
    const rows = JSON.parse(list.stdout);
    expect(rows).toHaveLength(3);
    const byDefault = rows.find((row: { id: string; expiresAt: string | null }) => row.id !== k.id && row.id !== forever.id);
    expect(Math.round((Date.parse(byDefault.expiresAt) - Date.now()) / 86_400_000)).toBe(90);
    expect(rows[0].prefix).toBe(k.key.slice(0, 12));
    const revoked = JSON.parse((await runCli(['key', 'revoke', keyId, '--json'], env)).stdout);
    expect(revoked.revokedAt).not.toBeNull();
    expect((await runCli(['key', 'list', '--project', projectId], env)).stdout).toContain('revoked');
  });

  it.each([
    [['project', 'create', '--name', 'X', '--repository', 'not a url'], /contains " ", which a repository URL cannot have/],
    [['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--branch', 'bad..branch'], /Base branch "bad..branch" contains "\.\."/],
    [['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--code-host', 'bitbucket'], /Allowed choices/],
    [['project', 'update', 'prj_missing', '--name', 'x'], /does not exist/],
    [['project', 'update', 'prj_x', '--checks', 'sometimes'], /Allowed choices are strict, warn, off/],
    [['project', 'update', 'prj_x', '--auto-fix', '0'], /Give a number of visitors from 1 to 1,000,000, or "off"/],
    [['project', 'update', 'prj_x', '--auto-fix', 'weekly'], /Give a number of visitors/],
    [['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--redirect-host', 'https://evil.example/x'], /Redirect host "https:\/\/evil\.example\/x" must be a host name/],
    [['project', 'update', 'prj_x', '--build', 'sometimes'], /Allowed choices are on, off/],
    [['project', 'update', 'prj_x', '--build-timeout', '5'], /Give a number of seconds from 10 to 3600, or "default"/],
    [['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--build-command', 'make\ndocs'], /The build's command must be one line of at most 2000 characters, without control characters/],
    [['project', 'update', 'prj_x', '--max-cost', '-1'], /Give a number above 0, or "none"/],
    [['project', 'update', 'prj_x', '--monthly-tokens', '1.5'], /Give a whole number above 0, or "none"/],
    [['project', 'create', '--name', 'X', '--repository', 'https://github.com/a/b', '--monthly-budget', '99999999'], /The monthly budget in dollars must be a number above 0 and at most 10,000,000, or none/],
    [['key', 'create', '--project', 'prj_missing'], /does not exist/],
    [['key', 'create', '--project', 'x', '--expires-in', 'soon'], /--expires-in/],
    [['key', 'revoke', 'key_missing'], /does not exist/],
  ])('fails clearly: %j', async (args, message) => {
    const r = await runCli(args as string[], env);
    expect(r.code).not.toBe(0);
    expect(r.stderr).toMatch(message);
    expect(r.stderr).not.toMatch(/at .*\.ts:\d+/); // no stack traces
  });

  it.each([
    [['project', 'create', '--name', 'X'], 'folio: --repository is required.\n'],
    [['user', 'create'], 'folio: --email is required.\n'],
    [['analytics', 'import', 'access.log'], 'folio: --project is required (or set FOLIO_PROJECT).\n'],
  ])('a missing required option is one line, not the help: %j', async (args, stderr) => {
    const r = await runCli(args, { ...env, FOLIO_PROJECT: '' });
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(stderr);
    expect(r.stdout).toBe('');
  });

  it('takes the project of key create and key list from FOLIO_PROJECT; flags say otherwise', async () => {
    const withVariable = { ...env, FOLIO_PROJECT: projectId };
    const made = await runCli(['key', 'create', '--name', 'From the environment', '--json'], withVariable);
    expect(made.code, made.stderr).toBe(0);
    expect(JSON.parse(made.stdout)).toMatchObject({ kind: 'project', projectId });
    // --all-projects says what the key covers: the variable does not make the command ambiguous.
    const all = await runCli(['key', 'create', '--all-projects', '--json'], withVariable);
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout)).toMatchObject({ kind: 'admin', allProjects: true });
    const listed = await runCli(['key', 'list', '--json'], withVariable);
    expect(listed.stdout).toBe((await runCli(['key', 'list', '--project', projectId, '--json'], env)).stdout);
    const ids = JSON.parse(listed.stdout).map((k: { id: string }) => k.id);
    expect(ids).toEqual(expect.arrayContaining([JSON.parse(made.stdout).id, JSON.parse(all.stdout).id]));
    // A table filtered by the variable says so, so that nobody mistakes it for every key.
    const table = await runCli(['key', 'list'], withVariable);
    expect(table.stderr).toBe(`Keys usable on project ${projectId} (FOLIO_PROJECT); unset it to list every key.\n`);
  });

  it('migrate brings the state and analytics stores up to date, and is idempotent', async () => {
    const first = await runCli(['migrate', '--json'], env);
    expect(first.code, first.stderr).toBe(0);
    const r = await runCli(['migrate', '--json'], env);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toEqual({ applied: [], analytics: { store: out.analytics.store, applied: [] } });
    expect(['duckdb', 'clickhouse']).toContain(out.analytics.store);
  });

  it('reports a bad setting before doing anything', async () => {
    const r = await runCli(['project', 'list'], { ...env, PORT: 'eighty' });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('PORT must be a whole number');
  });
});
