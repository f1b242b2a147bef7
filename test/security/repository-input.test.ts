// Hostile repository URLs and branch names, through every way a user sets them (dashboard API create
// and update, the CLI), and at job time for a URL stored before the rules existed: each gets a clear
// 400 (or exit 1 with one sentence), nothing is stored, git never runs anything (a marker file that a
// successful injection would create stays absent), and git's own output never reaches a job's error.
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { runCli, startProcess, type Child } from '../helpers/process.ts';
import { eventually } from '../helpers/handlers.ts';
import { startCodeHost } from '../fixtures/git-server.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import { waitForJob, jobEvents } from '../agent/e2e-helpers.ts';
import { checkRepositoryUrl, gitAllowProtocol } from '../../src/git/repository-url.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-sec-'));
const MARKER = path.join(dir, 'pwned');
const touch = `touch ${MARKER}`;

/** Settings as an operator leaves them: https only, no local repositories, no internal networks. */
const DEFAULTS = { FOLIO_GIT_PROTOCOLS: '', FOLIO_ALLOW_LOCAL_REPOSITORIES: '', FOLIO_OUTBOUND_ALLOW: '', FOLIO_REPOSITORY_CHECK: 'false' };

const HOSTILE_URLS = [
  `--upload-pack=touch\${IFS}${MARKER};@h:r`,
  `-oProxyCommand=${touch}`,
  `ssh://-oProxyCommand=touch%20${MARKER}/x`,
  `ext::sh -c ${touch}`,
  `ext::sh%20-c%20touch%20${MARKER}`,
  `fd::17`,
  `https://github.com/acme/docs\n${touch}`,
  `https://github.com/acme/docs\r\n`,
  'https://github.com/acme/docs\u0000',
  `https://github.com/$(${touch})`,
  `https://github.com/\`${touch}\``,
  'https://github.com/acme/my docs',
  'https://github.com/acme/docs;rm -rf /',
  'https://user:password@github.com/acme/docs',
  'https://github.com/acme/docs?upload-pack=x',
  'file:///etc',
  '/tmp/some/repo.git',
  'http://github.com/acme/docs',
  'git://github.com/acme/docs',
  'git@github.com:acme/docs.git',
  'ssh://git@github.com/acme/docs.git',
  'relative/path',
  'https://',
  '',
];

const HOSTILE_BRANCHES = [
  '-x',
  `--upload-pack=${touch}`,
  'main\nx',
  'main\u0000',
  `$(${touch})`,
  `\`${touch}\``,
  'a b',
  '..',
  'a..b',
  'x.lock',
  'x@{1}',
  '/x',
  'x/',
  '.hidden',
  'a:b',
  'a~1',
  'ünïcode',
];

let server: TestServer;
let b: Browser;
let projectId: string;

beforeAll(async () => {
  server = await startTestServer({ env: DEFAULTS });
  b = await setUp(server);
  projectId = (await b.req('POST', '/api/projects', { body: { name: 'Docs', repositoryUrl: 'https://github.com/acme/docs' } })).body.id;
});
afterAll(async () => {
  await server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('hostile repository URLs and branches', () => {
  it('get a clear 400 on create and on update through the dashboard API, and nothing is stored', async () => {
    const before = (await b.req('GET', '/api/projects')).body.projects.length;
    for (const repositoryUrl of HOSTILE_URLS) {
      const created = await b.req('POST', '/api/projects', { body: { name: 'X', repositoryUrl } });
      expect(created.status, `${JSON.stringify(repositoryUrl)}: ${created.text}`).toBe(400);
      // An empty string fails the schema's minLength and NUL the dashboard's text rule; every other value
      // gets the repository rule's sentence.
      if (repositoryUrl !== '' && !repositoryUrl.includes('\u0000')) {
        expect(created.body).toMatchObject({ code: 'invalid_project', details: [{ path: '/body/repositoryUrl' }] });
        expect(created.body.error).toMatch(/^Repository /);
      }
      const updated = await b.req('PATCH', `/api/projects/${projectId}`, { body: { repositoryUrl } });
      expect(updated.status, JSON.stringify(repositoryUrl)).toBe(400);
    }
    for (const baseBranch of HOSTILE_BRANCHES) {
      const created = await b.req('POST', '/api/projects', { body: { name: 'X', repositoryUrl: 'https://github.com/acme/docs', baseBranch } });
      expect(created.status, `${JSON.stringify(baseBranch)}: ${created.text}`).toBe(400);
      expect(created.body.code).toBe(baseBranch.includes('\u0000') ? 'invalid_request' : 'invalid_project');
      const updated = await b.req('PATCH', `/api/projects/${projectId}`, { body: { baseBranch } });
      expect(updated.status, JSON.stringify(baseBranch)).toBe(400);
    }
    const after = (await b.req('GET', `/api/projects/${projectId}`)).body;
    expect(after).toMatchObject({ repositoryUrl: 'https://github.com/acme/docs', baseBranch: 'main' });
    expect((await b.req('GET', '/api/projects')).body.projects.length).toBe(before);
    expect(existsSync(MARKER)).toBe(false);
  });

  it('the error names the problem in one sentence', async () => {
    const say = async (repositoryUrl: string) => (await b.req('POST', '/api/projects', { body: { name: 'X', repositoryUrl } })).body.error as string;
    expect(await say('--upload-pack=x')).toMatch(/starts with "-", which git would read as an option/);
    expect(await say('ext::sh -c x')).toMatch(/contains " "/);
    expect(await say('ext::sh')).toMatch(/remote helper/);
    expect(await say('file:///etc')).toMatch(/local repositories are off on this server \(FOLIO_ALLOW_LOCAL_REPOSITORIES\)/);
    expect(await say('git@github.com:acme/docs.git')).toMatch(/uses ssh, which this server does not allow.*FOLIO_GIT_PROTOCOLS/);
    expect(await say('https://github.com/a\nb')).toMatch(/control character U\+000a/);
  });

  it('get exit code 1 and one sentence from the CLI', async () => {
    let databases: BackendDatabases | undefined;
    const cliDir = mkdtempSync(path.join(os.tmpdir(), 'folio-sec-cli-'));
    try {
      databases = await backendDatabases();
      const env = { ...databases.env, ...DEFAULTS, FOLIO_DATA_DIR: cliDir };
      const ok = await runCli(['project', 'create', '--name', 'Docs', '--repository', 'https://github.com/acme/docs', '--json'], env);
      expect(ok.code, ok.stderr).toBe(0);
      const id = JSON.parse(ok.stdout).id as string;
      // Every hostile value of the dashboard API test above, on create and on update. A NUL cannot be
      // passed at all: argv entries are C strings, so spawning refuses it before the CLI could run.
      const passable = (v: string) => !v.includes('\u0000');
      for (const v of [...HOSTILE_URLS, ...HOSTILE_BRANCHES].filter((v) => !passable(v))) {
        await expect(runCli(['project', 'create', '--name', 'X', '--repository', v], env), JSON.stringify(v)).rejects.toThrow(/null bytes/);
      }
      const cases: string[][] = [
        ...HOSTILE_URLS.filter(passable).flatMap((u) => [
          ['project', 'create', '--name', 'X', '--repository', u],
          ['project', 'update', id, '--repository', u],
        ]),
        ...HOSTILE_BRANCHES.filter(passable).flatMap((br) => [
          ['project', 'create', '--name', 'X', '--repository', 'https://github.com/acme/docs', '--branch', br],
          ['project', 'update', id, '--branch', br],
        ]),
      ];
      // A few at a time: each is a process.
      for (let i = 0; i < cases.length; i += 4) {
        await Promise.all(
          cases.slice(i, i + 4).map(async (args) => {
            const r = await runCli(args, env);
            expect(r.code, `${JSON.stringify(args)}: ${r.stderr}`).toBe(1);
            // An empty --repository on create is a missing one (the one-line form for every required option).
            expect(r.stderr, JSON.stringify(args)).toMatch(/^folio: (Repository|Base branch|A repository URL|--repository is required).*[.)]\n$/s);
          }),
        );
      }
      const list = JSON.parse((await runCli(['project', 'list', '--json'], env)).stdout);
      expect(list).toHaveLength(1);
      expect(list[0]).toMatchObject({ repositoryUrl: 'https://github.com/acme/docs', baseBranch: 'main' });
    } finally {
      await databases?.drop();
      rmSync(cliDir, { recursive: true, force: true });
    }
    expect(existsSync(MARKER)).toBe(false);
  }, 180_000);

  it('a hostile URL stored before these rules fails its job with a clear code, and runs nothing', async () => {
    const key = await server.createKey(projectId);
    for (const repositoryUrl of [`--upload-pack=touch\${IFS}${MARKER};@h:r`, `ext::sh -c ${touch}`]) {
      await server.services.store.db.updateTable('projects').set({ repository_url: repositoryUrl }).where('id', '=', projectId).execute();
      const created = await server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Document the flag.' } });
      expect(created.status).toBe(201);
      const job = await waitForJob(server, projectId, created.body.id, key);
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('invalid_repository_url');
      expect(job.error.message).toMatch(/^Repository /);
    }
    expect(existsSync(MARKER)).toBe(false);
  });

  it('git itself refuses remote helpers: GIT_ALLOW_PROTOCOL never lists ext, even with every setting on', async () => {
    const widest = { protocols: ['https', 'http', 'ssh'] as const, allowLocal: true };
    expect(gitAllowProtocol(widest)).toBe('https:http:ssh:file');
    expect(() => checkRepositoryUrl(`ext::sh -c ${touch}`, widest)).toThrow(/contains " "/);
    // The second wall: even if a helper URL reached git, git refuses the transport.
    const out = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const child = spawn('git', ['ls-remote', '--', `ext::sh -c touch% ${MARKER}`], {
        env: { PATH: process.env.PATH!, HOME: dir, GIT_ALLOW_PROTOCOL: gitAllowProtocol(widest), GIT_CONFIG_NOSYSTEM: '1', GIT_CONFIG_GLOBAL: '/dev/null' },
      });
      let stderr = '';
      child.stderr.on('data', (d: Buffer) => (stderr += d));
      child.on('close', (code) => resolve({ code, stderr }));
    });
    expect(out.code).not.toBe(0);
    expect(out.stderr).toMatch(/transport 'ext' not allowed/);
    expect(existsSync(MARKER)).toBe(false);
  });
});

describe("git's output stays in the server log", () => {
  it('a repository that does not exist fails the job with a stable code and a sentence, without stderr', async () => {
    const { startE2E, TOKEN } = await import('../agent/e2e-helpers.ts');
    const e = await startE2E();
    try {
      const url = `${e.host.origin}/acme/missing.git`;
      const id = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
      const key = await e.server.createKey(id);
      const created = await e.server.api('POST', `/v2/agent/${id}/job`, { key, body: { prompt: 'x' } });
      const job = await waitForJob(e.server, id, created.body.id, key);
      expect(job.status).toBe('failed');
      expect(job.error).toEqual({ code: 'repository_not_found', message: 'The repository was not found; check the repository URL and that the token can see it.' });
      const events = JSON.stringify(await jobEvents(e.server, id, created.body.id, key));
      expect(events).not.toMatch(/fatal:|remote:|http-backend|missing\.git\/info/);
      expect(events).not.toContain(TOKEN);
    } finally {
      await e.close();
    }
  });

  it("a real server logs git's stderr with the token blanked, and the job gets only the code and sentence", async () => {
    const token = 'ghp_stderr_secret_token_0123456789';
    const host = await startCodeHost({ token });
    const dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-sec-log-'));
    const databases = await backendDatabases();
    let child: Child | undefined;
    try {
      // The token is also in the URL's path, so git's own message ("repository '…' not found") carries it.
      // The repository does not exist: saved without asking it (the check would refuse it), so the job meets git's error.
      const env = { ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_GIT_PROTOCOLS: 'https,http', FOLIO_OUTBOUND_ALLOW: '127.0.0.0/8', DOCS_TOKEN: token, FOLIO_REPOSITORY_CHECK: 'false' };
      const project = JSON.parse((await runCli(['project', 'create', '--name', 'L', '--repository', `${host.origin}/acme/${token}.git`, '--code-host', 'github', '--json'], env)).stdout);
      expect((await runCli(['project', 'update', project.id, '--repo-token-env', 'DOCS_TOKEN'], env)).code).toBe(0);
      const key = JSON.parse((await runCli(['key', 'create', '--project', project.id, '--json'], env)).stdout).key;
      child = await startProcess('bin/folio.mjs', ['serve'], { ...env, PORT: '0', LOG_LEVEL: 'info', ANTHROPIC_API_KEY: 'x', FOLIO_POLL: '100' });
      const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
      const created = (await (await fetch(`${child.url}/v2/agent/${project.id}/job`, { method: 'POST', headers, body: '{"prompt":"x"}' })).json()) as { id: string };
      const job = await eventually(async () => {
        const j = (await (await fetch(`${child!.url}/v2/agent/${project.id}/job/${created.id}`, { headers })).json()) as { status: string; error: unknown };
        return j.status === 'failed' ? j : null;
      }, 30_000);
      expect(job.error).toEqual({ code: 'repository_not_found', message: 'The repository was not found; check the repository URL and that the token can see it.' });
      const events = await (await fetch(`${child.url}/v2/agent/${project.id}/job/${created.id}/events`, { headers })).text();
      expect(events).not.toMatch(/fatal:|not found'|\[redacted\]/);
      // The server's log (its stdout): git's message is there, the token is not.
      const entry = await eventually(async () =>
        child!.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l)).find((e) => e.msg === 'git failed'),
      );
      expect(entry).toMatchObject({ level: 40, jobId: created.id, code: 'repository_not_found' });
      expect(entry.detail).toMatch(/^fatal: repository '.*\/acme\/\[redacted\]\.git\/' not found$/m);
      expect(child.output()).not.toContain(token);
      expect(events).not.toContain(token);
    } finally {
      child?.proc.kill('SIGKILL');
      await child?.exited;
      await host.close();
      await databases.drop();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});
