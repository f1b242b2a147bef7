// Credentials go only where they belong (src/codehost/access.ts): the operator's GITHUB_TOKEN and
// GITLAB_TOKEN reach only the host they were issued for (github.com / gitlab.com, or the host of
// GITHUB_API_URL / GITLAB_API_URL), never a host a dashboard user typed; a project's own token goes
// to its repository's host. Links a code host answers with reach clients only on its web origin.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkedLink, codeHostAccess, type OperatorCodeHosts } from '../../src/codehost/access.ts';
import { sequence, toolCall } from '../fixtures/fake-openai.ts';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';
import { jobEvents, startE2E, TOKEN, waitForJob, type E2E } from '../agent/e2e-helpers.ts';

const NONE = { allow: [] };
const OPERATOR_TOKEN = 'ghp_operator_token_0123456789';

function operator(o: { github?: string | null; gitlab?: string | null } = {}): OperatorCodeHosts {
  return {
    github: { token: OPERATOR_TOKEN, apiUrl: o.github ?? null },
    gitlab: { token: 'glpat_operator_token', apiUrl: o.gitlab ?? null },
    none: { token: null, apiUrl: null },
  };
}

describe('which credential goes where', () => {
  it.each([
    ['https://github.com/acme/docs.git', true],
    ['git@github.com:acme/docs.git', true],
    ['ssh://git@github.com/acme/docs', true],
    ['https://GitHub.com/acme/docs', true],
    ['https://github.evil.example/acme/docs.git', false],
    ['https://evil.example/acme/docs.git', false],
    ['http://github.com.evil.example/acme/docs', false],
    ['https://api.github.com.evil.example/acme/docs', false],
  ])('GITHUB_TOKEN without GITHUB_API_URL goes to github.com only: %s → %s', (url, sent) => {
    const access = codeHostAccess('github', url, null, { operator: operator(), outbound: NONE });
    expect(access.token).toBe(sent ? OPERATOR_TOKEN : null);
    expect(access.apiUrl).toBeNull();
    if (!sent) expect(access.withheld).toMatch(/operator's GITHUB_TOKEN is only sent to github\.com; give the project its own repository token/);
  });

  it('is bound to the host of GITHUB_API_URL when set (GitHub Enterprise Server), and api.github.com means github.com', () => {
    const ghes = operator({ github: 'https://ghe.acme.example/api/v3' });
    const onGhes = codeHostAccess('github', 'https://ghe.acme.example/docs/site.git', null, { operator: ghes, outbound: NONE });
    expect(onGhes).toMatchObject({ token: OPERATOR_TOKEN, apiUrl: 'https://ghe.acme.example/api/v3', withheld: null });
    // The GHES token does not go to github.com, nor does the GHES API get asked about it.
    const onDotCom = codeHostAccess('github', 'https://github.com/acme/docs', null, { operator: ghes, outbound: NONE });
    expect(onDotCom).toMatchObject({ token: null, apiUrl: null });
    expect(onDotCom.withheld).toMatch(/only sent to ghe\.acme\.example/);
    const explicit = codeHostAccess('github', 'https://github.com/acme/docs', null, { operator: operator({ github: 'https://api.github.com' }), outbound: NONE });
    expect(explicit).toMatchObject({ token: OPERATOR_TOKEN, apiUrl: 'https://api.github.com' });
  });

  it('GITLAB_TOKEN goes to gitlab.com or the host of GITLAB_API_URL; a kind without an operator token gets none', () => {
    expect(codeHostAccess('gitlab', 'https://gitlab.com/g/docs', null, { operator: operator(), outbound: NONE }).token).toBe('glpat_operator_token');
    expect(codeHostAccess('gitlab', 'https://gitlab.evil.example/g/docs', null, { operator: operator(), outbound: NONE }).token).toBeNull();
    const selfManaged = operator({ gitlab: 'https://git.acme.example/api/v4' });
    expect(codeHostAccess('gitlab', 'https://git.acme.example/g/docs', null, { operator: selfManaged, outbound: NONE }).token).toBe('glpat_operator_token');
    expect(codeHostAccess('gitlab', 'https://gitlab.com/g/docs', null, { operator: selfManaged, outbound: NONE }).token).toBeNull();
    // A GitHub token never goes to a repository said to be on GitLab, and push-only has no operator token.
    expect(codeHostAccess('gitlab', 'https://github.com/acme/docs', null, { operator: operator(), outbound: NONE }).token).toBeNull();
    expect(codeHostAccess('none', 'https://github.com/acme/docs', null, { operator: operator(), outbound: NONE })).toMatchObject({ token: null, withheld: null });
  });

  it("a project's own token goes to its repository's host, with the API derived from it unless the operator's API is on that host", () => {
    const own = codeHostAccess('github', 'https://git.other.example/acme/docs', 'project-token', { operator: operator({ github: 'https://ghe.acme.example/api/v3' }), outbound: NONE });
    expect(own).toMatchObject({ token: 'project-token', apiUrl: null, withheld: null });
    const sameHost = codeHostAccess('github', 'https://ghe.acme.example/acme/docs', 'project-token', { operator: operator({ github: 'https://ghe.acme.example/api/v3' }), outbound: NONE });
    expect(sameHost).toMatchObject({ token: 'project-token', apiUrl: 'https://ghe.acme.example/api/v3' });
  });
});

describe('links a code host answers with', () => {
  const access = codeHostAccess('github', 'https://github.com/acme/docs', null, { operator: operator(), outbound: NONE });
  it('are believed on the repository web origin only', () => {
    expect(checkedLink(access, 'https://github.com/acme/docs/pull/7')).toBe('https://github.com/acme/docs/pull/7');
    const local = codeHostAccess('github', 'http://127.0.0.1:8080/acme/docs.git', 'x', { operator: operator(), outbound: NONE });
    expect(checkedLink(local, 'http://127.0.0.1:8080/acme/docs/pull/1')).toBe('http://127.0.0.1:8080/acme/docs/pull/1');
  });
  it.each([
    'javascript:alert(document.cookie)',
    'JavaScript://github.com/%0aalert(1)',
    'data:text/html,<script>alert(1)</script>',
    'https://evil.example/acme/docs/pull/7',
    'https://github.com.evil.example/pull/7',
    'https://github.com@evil.example/pull/7',
    'https://user:pass@github.com/acme/docs/pull/7',
    'http://github.com:8443/acme/docs/pull/7',
    '//github.com/acme/docs/pull/7',
    '/acme/docs/pull/7',
    `https://github.com/${'a'.repeat(3000)}`,
  ])('refuses %s with a sentence', (link) => {
    expect(() => checkedLink(access, link)).toThrow(/is not on its own web address \(https:\/\/github\.com\); no link is recorded/);
  });
  it('refuses values that are not strings', () => {
    expect(() => checkedLink(access, { href: 'https://github.com/x' })).toThrow(/a link that is not on its own web address/);
  });
});

describe('end to end: a repository on another host than the operator token', () => {
  let e: E2E;
  let other: CodeHostServer;
  beforeAll(async () => {
    // The operator's token is for the code host on 127.0.0.1 (GITHUB_API_URL); this one is 127.0.0.2.
    e = await startE2E();
    other = await startCodeHost({ host: '127.0.0.2' });
  });
  afterAll(async () => {
    await other?.close();
    await e?.close();
  });

  const operatorBasic = Buffer.from(`x-access-token:${TOKEN}`).toString('base64');
  const leaked = () => [...other.gitAuthHeaders, ...other.github.requests.map((r) => r.authorization ?? '')].filter((h) => h.includes(TOKEN) || h.includes(operatorBasic));

  it('never sends the operator token there: git and the API go without it', async () => {
    const url = other.createRepo('acme/public-docs', { 'README.md': '# Docs\n' });
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', baseBranch: 'main' });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(sequence([toolCall('write_file', { path: 'a.md', content: '# A\n' }), toolCall('finish', { title: 'Add A', summary: 'Added a page.' })]));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add a page' } });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    // The host lets anyone push and open pull requests: the job works, without the operator's token.
    expect(job.status).toBe('completed');
    expect(job.prLink).toBe(`${other.origin}/acme/public-docs/pull/1`);
    expect(other.gitAuthHeaders.length + other.github.requests.length).toBeGreaterThan(0);
    expect(leaked()).toEqual([]);
    expect(other.github.requests.every((r) => r.authorization === undefined)).toBe(true);
  });

  it('fails with repository_token_required when that host wants a token, and sends it none', async () => {
    const locked = await startCodeHost({ host: '127.0.0.2', token: 'the-other-hosts-token' });
    try {
      const url = locked.createRepo('acme/private-docs', { 'README.md': '# Docs\n' });
      const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', baseBranch: 'main' });
      const key = await e.server.createKey(projectId);
      const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add a page' } });
      const job = await waitForJob(e.server, projectId, created.body.id, key);
      expect(job.status).toBe('failed');
      expect(job.error.code).toBe('repository_token_required');
      expect(job.error.message).toMatch(/^The repository is on 127\.0\.0\.2, and the operator's GITHUB_TOKEN is only sent to 127\.0\.0\.1; give the project its own repository token/);
      expect(locked.gitAuthHeaders.filter((h) => h.includes(operatorBasic))).toEqual([]);
      // With its own token, the same project works.
      await e.server.services.projects.update(projectId, { repoToken: 'the-other-hosts-token' });
      e.llm.setResponder(sequence([toolCall('write_file', { path: 'b.md', content: '# B\n' }), toolCall('finish', { title: 'Add B', summary: 'Added B.' })]));
      const again = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add B' } });
      expect((await waitForJob(e.server, projectId, again.body.id, key)).status).toBe('completed');
    } finally {
      await locked.close();
    }
  });
});

describe('end to end: a pull request link off the code host origin', () => {
  let e: E2E;
  beforeAll(async () => {
    e = await startE2E();
  });
  afterAll(async () => e?.close());

  it.each(['javascript:alert(document.cookie)', 'https://evil.example/acme/docs/pull/1'])('records no link for %s and says why', async (link) => {
    e.host.github.htmlUrl = () => link;
    const url = e.host.createRepo(`acme/links-${link.length}`, { 'README.md': '# Docs\n' });
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', baseBranch: 'main' });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(sequence([toolCall('write_file', { path: 'a.md', content: '# A\n' }), toolCall('finish', { title: 'Add A', summary: 'Added.' })]));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add a page' } });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    expect(job.status).toBe('completed');
    expect(job.prLink).toBeNull();
    const events = await jobEvents(e.server, projectId, job.id, key);
    const pr = events.find((x) => x.type === 'pull_request')!;
    expect(pr.data.url).toBeNull();
    expect(pr.data.linkRefused).toMatch(/^The code host answered with a link that is not on its own web address \(http:\/\/127\.0\.0\.1:\d+\); no link is recorded\.$/);
    expect(JSON.stringify(events)).not.toContain(link.startsWith('javascript') ? 'javascript:alert' : 'https://evil.example');
    const list = await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(list.text).not.toContain(link.startsWith('javascript') ? 'javascript:' : 'evil.example');
  });
});

describe('API calls with a token', () => {
  it('do not follow a redirect, so no token rides it (GitLab sends PRIVATE-TOKEN, which fetch keeps across origins)', async () => {
    const http = await import('node:http');
    const seen: (string | undefined)[] = [];
    const target = http.createServer((req, res) => {
      seen.push(req.headers['private-token'] as string | undefined);
      res.end('[]');
    });
    await new Promise<void>((r) => target.listen(0, '127.0.0.3', r));
    const redirector = http.createServer((_req, res) => {
      res.writeHead(302, { location: `http://127.0.0.3:${(target.address() as { port: number }).port}/steal` });
      res.end();
    });
    await new Promise<void>((r) => redirector.listen(0, '127.0.0.2', r));
    try {
      const { createCodeHost } = await import('../../src/codehost/index.ts');
      const url = `http://127.0.0.2:${(redirector.address() as { port: number }).port}/g/docs`;
      const gl = createCodeHost(codeHostAccess('gitlab', url, 'project-token-abc', { operator: operator(), outbound: { allow: ['127.0.0.0/8'] } }));
      await expect(gl.findOpen('b', 'main')).rejects.toMatchObject({ code: 'code_host_error' });
      expect(seen).toEqual([]);
    } finally {
      target.close();
      redirector.close();
    }
  });
});
