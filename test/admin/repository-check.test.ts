// A project's repository is asked when the project is saved (dashboard API create and change, the
// CLI), through the local smart-HTTP code host: a typo in the owner or name, a branch that is not
// there, or a private repository without a token is refused then — 422 with a stable code, the URL
// tried in the sentence, nothing stored — and a host that does not answer only adds a warning.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, type TestServer } from '../helpers/server.ts';
import { setUp, type Browser } from '../dashboard/session.ts';
import { runCli } from '../helpers/process.ts';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';

const TOKEN = 'ghp_private0123456789';
let server: TestServer;
let b: Browser;
let host: CodeHostServer;
let privateHost: CodeHostServer;
let docs: string;
/** A loopback address where nothing listens: connection refused. */
let deadUrl: string;

async function closedPortUrl(): Promise<string> {
  const s = http.createServer().listen(0, '127.0.0.1');
  await new Promise((r) => s.once('listening', r));
  const { port } = s.address() as AddressInfo;
  await new Promise((r) => s.close(r));
  return `http://127.0.0.1:${port}/acme/docs.git`;
}

beforeAll(async () => {
  [host, privateHost] = await Promise.all([startCodeHost(), startCodeHost({ token: TOKEN })]);
  docs = host.createRepo('acme/docs', { 'index.md': '# Docs\n' });
  privateHost.createRepo('acme/private', { 'index.md': '# Private\n' });
  deadUrl = await closedPortUrl();
  server = await startTestServer({ env: { FOLIO_REPOSITORY_CHECK: 'true' } });
  b = await setUp(server);
});
afterAll(async () => {
  await server?.close();
  await Promise.all([host?.close(), privateHost?.close()]);
});

const count = async () => (await b.req('GET', '/api/projects')).body.projects.length as number;

describe('the repository check when a project is saved', () => {
  it('saves a project whose repository has its base branch, without warnings', async () => {
    const created = await b.req('POST', '/api/projects', { body: { name: 'Docs', repositoryUrl: docs, codeHost: 'github' } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.warnings).toBeUndefined();
  });

  it('refuses a typo in the owner or name with 422 repository_not_found, naming the URL it tried; nothing is stored', async () => {
    const before = await count();
    const typo = `${host.origin}/acme/dcos.git`;
    const res = await b.req('POST', '/api/projects', { body: { name: 'Typo', repositoryUrl: typo, codeHost: 'github' } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('repository_not_found');
    expect(res.body.error).toBe(`Repository ${typo} was not found: check the owner and name, and that the project's token can see it.`);
    expect(res.body.details).toEqual([{ message: res.body.error, path: '/body/repositoryUrl' }]);
    expect(await count()).toBe(before);
  });

  it('refuses a base branch the repository does not have with 422 branch_not_found, naming its default branch', async () => {
    const res = await b.req('POST', '/api/projects', { body: { name: 'Branch', repositoryUrl: docs, baseBranch: 'mian', codeHost: 'github' } });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe('branch_not_found');
    expect(res.body.error).toBe(`Repository ${docs} has no branch "mian"; its default branch is "main".`);
    expect(res.body.details[0].path).toBe('/body/baseBranch');
  });

  it('refuses a private repository without a token (422 repository_auth_failed), and saves it with the token', async () => {
    const url = `${privateHost.origin}/acme/private.git`;
    const without = await b.req('POST', '/api/projects', { body: { name: 'P', repositoryUrl: url, codeHost: 'github' } });
    expect(without.status).toBe(422);
    expect(without.body.code).toBe('repository_auth_failed');
    expect(without.body.error).toContain(`Repository ${url} asks for credentials`);
    const wrong = await b.req('POST', '/api/projects', { body: { name: 'P', repositoryUrl: url, codeHost: 'github', repoToken: 'ghp_wrong' } });
    expect(wrong.body.code).toBe('repository_auth_failed');
    expect(wrong.text).not.toContain('ghp_wrong');
    const withToken = await b.req('POST', '/api/projects', { body: { name: 'P', repositoryUrl: url, codeHost: 'github', repoToken: TOKEN } });
    expect(withToken.status, withToken.text).toBe(201);
    // A later change of the branch is asked with the stored token.
    const changed = await b.req('PATCH', `/api/projects/${withToken.body.id}`, { body: { baseBranch: 'main', name: 'Private' } });
    expect(changed.status, changed.text).toBe(200);
  });

  it('saves a project whose host does not answer, with a warning naming the URL', async () => {
    const res = await b.req('POST', '/api/projects', { body: { name: 'Offline', repositoryUrl: deadUrl, codeHost: 'github' } });
    expect(res.status, res.text).toBe(201);
    expect(res.body.warnings).toEqual([`Repository ${deadUrl} could not be checked (The repository's host could not be reached); the project is saved, and its first job will try again.`]);
    expect((await b.req('GET', `/api/projects/${res.body.id}`)).body.warnings).toBeUndefined();
  });

  it('asks again when a change touches the repository, and keeps the old settings when it is refused', async () => {
    const id = (await b.req('POST', '/api/projects', { body: { name: 'Change', repositoryUrl: docs, codeHost: 'github' } })).body.id;
    const branch = await b.req('PATCH', `/api/projects/${id}`, { body: { baseBranch: 'nope' } });
    expect(branch.status).toBe(422);
    expect(branch.body.code).toBe('branch_not_found');
    const url = await b.req('PATCH', `/api/projects/${id}`, { body: { repositoryUrl: `${host.origin}/acme/dcos.git` } });
    expect(url.body.code).toBe('repository_not_found');
    const kept = (await b.req('GET', `/api/projects/${id}`)).body;
    expect([kept.repositoryUrl, kept.baseBranch]).toEqual([docs, 'main']);
    // A change that does not touch the repository does not ask it.
    await host.close();
    const renamed = await b.req('PATCH', `/api/projects/${id}`, { body: { name: 'Renamed' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.warnings).toBeUndefined();
  });
});

describe('folio project create', () => {
  it('refuses a typo with one sentence and exit code 1, and warns on stderr for a host that does not answer', async () => {
    const other = await startCodeHost();
    try {
      other.createRepo('acme/docs', { 'index.md': '# Docs\n' });
      const typo = `${other.origin}/acme/dcos.git`;
      const refused = await runCli(['project', 'create', '--name', 'X', '--repository', typo, '--code-host', 'github'], server.env);
      expect(refused.code).toBe(1);
      expect(refused.stderr).toBe(`folio: Repository ${typo} was not found: check the owner and name, and that the project's token can see it.\n`);
      // A site origin as the address bar shows it (trailing slash) is tidied, not refused.
      const saved = await runCli(['project', 'create', '--name', 'Y', '--repository', deadUrl, '--code-host', 'github', '--site-origin', 'https://docs.acme.dev/', '--json'], server.env);
      expect(saved.code, saved.stderr).toBe(0);
      expect(JSON.parse(saved.stdout)).toMatchObject({ repositoryUrl: deadUrl, siteOrigins: ['https://docs.acme.dev'] });
      expect(saved.stderr).toMatch(new RegExp(`^folio: warning: Repository ${deadUrl.replace(/[.]/g, '\\.')} could not be checked .*\\n$`));
    } finally {
      await other.close();
    }
  });
});
