import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeHostAccess, createCodeHost, CodeHostError, parseRepositoryUrl } from '../../src/codehost/index.ts';
import { githubApiBase } from '../../src/codehost/github/client.ts';
import { gitlabApiBase } from '../../src/codehost/gitlab/client.ts';
import { triggerLabel } from '../../src/codehost/kinds.ts';
import { LOCAL_GIT, operatorApi, startCodeHost, gitSync, type CodeHostServer } from '../fixtures/git-server.ts';
import path from 'node:path';

const TOKEN = 'tok_codehost_0123456789';
let host: CodeHostServer;

beforeAll(async () => {
  host = await startCodeHost({ token: TOKEN });
});
afterAll(async () => host.close());

function branch(fullPath: string, name: string) {
  gitSync(['branch', name, 'main'], path.join(host.root, `${fullPath}.git`));
}

describe('repository URLs and API bases', () => {
  it('parses https, ssh and scp-like URLs', () => {
    expect(parseRepositoryUrl('https://github.com/acme/docs.git')).toEqual({ origin: 'https://github.com', fullPath: 'acme/docs' });
    expect(parseRepositoryUrl('git@gitlab.example.com:group/sub/docs.git')).toEqual({ origin: 'https://gitlab.example.com', fullPath: 'group/sub/docs' });
    expect(parseRepositoryUrl('ssh://git@github.com/acme/docs')).toEqual({ origin: 'https://github.com', fullPath: 'acme/docs' });
    expect(() => parseRepositoryUrl('https://github.com/onlyowner')).toThrow(CodeHostError);
    expect(() => parseRepositoryUrl('not a url')).toThrow(/not a URL/);
  });
  it('derives the GitHub API for github.com and GHES, with an override', () => {
    expect(githubApiBase('https://github.com/acme/docs')).toBe('https://api.github.com');
    expect(githubApiBase('https://ghe.corp.example/acme/docs.git')).toBe('https://ghe.corp.example/api/v3');
    expect(githubApiBase('https://github.com/acme/docs', 'http://127.0.0.1:9/api/')).toBe('http://127.0.0.1:9/api');
    expect(gitlabApiBase('https://gitlab.com/g/docs')).toBe('https://gitlab.com/api/v4');
    expect(gitlabApiBase('https://git.corp.example:8443/g/docs')).toBe('https://git.corp.example:8443/api/v4');
  });
});

describe("a job's trigger in words", () => {
  it("names what happened in the host's own words, and the host", () => {
    expect(triggerLabel({ kind: 'pull_request_merged', host: 'github' })).toBe('Merged pull request on GitHub');
    expect(triggerLabel({ kind: 'pull_request_opened', host: 'gitlab' })).toBe('Opened merge request on GitLab');
    expect(triggerLabel({ kind: 'push', host: 'gitlab' })).toBe('Push to the default branch on GitLab');
    // From a server that knows more kinds or hosts: shown as sent.
    expect(triggerLabel({ kind: 'tag', host: 'bitbucket' })).toBe('tag on bitbucket');
  });
});

describe('GitHub (GHES layout on the local host)', () => {
  it('opens once, then reuses and updates the description', async () => {
    const url = host.createRepo('acme/gh1', { 'a.md': 'a\n' });
    branch('acme/gh1', 'folio/job_a');
    const gh = createCodeHost(codeHostAccess('github', url, TOKEN, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    const input = { branch: 'folio/job_a', baseBranch: 'main', title: 'T', body: 'first', draft: false };
    expect(await gh.findOpen('folio/job_a', 'main')).toBeNull();
    const a = await gh.upsert(input);
    expect(a).toEqual({ url: `${host.origin}/acme/gh1/pull/1`, number: 1, created: true });
    const b = await gh.upsert({ ...input, body: 'second' });
    expect(b).toEqual({ url: a!.url, number: 1, created: false });
    const mine = host.github.pulls.filter((p) => p.repo === 'gh1');
    expect(mine).toHaveLength(1);
    expect(mine[0].body).toBe('second');
    expect(host.github.invalid()).toEqual([]);
  });

  it('says whether the pull request of a branch is open, merged (and when) or closed', async () => {
    const url = host.createRepo('acme/gh-state', { 'a.md': 'a\n' });
    branch('acme/gh-state', 'folio/job_s');
    const gh = createCodeHost(codeHostAccess('github', url, TOKEN, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    expect(await gh.pullRequestState('folio/job_s', 'main')).toBeNull();
    await gh.upsert({ branch: 'folio/job_s', baseBranch: 'main', title: 'T', body: 'x', draft: false });
    expect(await gh.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'open', mergedAt: null });
    const pr = host.github.pulls.find((p) => p.repo === 'gh-state')!;
    Object.assign(pr, { state: 'closed', mergedAt: '2026-11-20T10:00:00Z' });
    expect(await gh.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'merged', mergedAt: Date.parse('2026-11-20T10:00:00Z') });
    delete pr.mergedAt;
    expect(await gh.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'closed', mergedAt: null });
    expect(host.github.invalid()).toEqual([]);
  });

  it('opens drafts when asked', async () => {
    const url = host.createRepo('acme/gh2', { 'a.md': 'a\n' });
    branch('acme/gh2', 'folio/job_b');
    const gh = createCodeHost(codeHostAccess('github', url, TOKEN, { operator: operatorApi(`${host.origin}/api/v3`), outbound: LOCAL_GIT.outbound }));
    await gh.upsert({ branch: 'folio/job_b', baseBranch: 'main', title: 'Draft it', body: 'b', draft: true });
    expect(host.github.pulls.find((p) => p.repo === 'gh2')?.draft).toBe(true);
  });

  it('reports API failures with the status and GitHub message', async () => {
    const url = host.createRepo('acme/gh3', { 'a.md': 'a\n' });
    const bad = createCodeHost(codeHostAccess('github', url, 'wrong', { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    const err = await bad.upsert({ branch: 'x', baseBranch: 'main', title: 'T', body: 'b', draft: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CodeHostError);
    expect((err as CodeHostError).status).toBe(401);
    expect((err as Error).message).toContain('Bad credentials');
    const gh = createCodeHost(codeHostAccess('github', url, TOKEN, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    const missing = await gh.upsert({ branch: 'no-such-branch', baseBranch: 'main', title: 'T', body: 'b', draft: false }).catch((e: unknown) => e);
    expect((missing as CodeHostError).status).toBe(422);
    host.github.failNext(502);
    const down = await gh.findOpen('x', 'main').catch((e: unknown) => e);
    expect((down as CodeHostError).message).toMatch(/HTTP 502/);
  });
});

describe('GitLab merge requests', () => {
  it('opens once (draft by title), then reuses and updates the description', async () => {
    const url = host.createRepo('grp/sub/gl1', { 'a.md': 'a\n' });
    const gl = createCodeHost(codeHostAccess('gitlab', url, TOKEN, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    const input = { branch: 'folio/job_c', baseBranch: 'main', title: 'T', body: 'first', draft: true };
    const a = await gl.upsert(input);
    expect(a).toEqual({ url: `${host.origin}/grp/sub/gl1/-/merge_requests/1`, number: 1, created: true });
    const b = await gl.upsert({ ...input, body: 'second' });
    expect(b?.created).toBe(false);
    const mrs = host.gitlab.mergeRequests.filter((m) => m.project === 'grp/sub/gl1');
    expect(mrs).toHaveLength(1);
    expect(mrs[0]).toMatchObject({ title: 'Draft: T', description: 'second' });
    expect(host.gitlab.invalid()).toEqual([]);
  });
  it('says whether the merge request of a branch is open, merged (and when) or closed', async () => {
    const url = host.createRepo('grp/gl3', { 'a.md': 'a\n' });
    const gl = createCodeHost(codeHostAccess('gitlab', url, TOKEN, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    expect(await gl.pullRequestState('folio/job_s', 'main')).toBeNull();
    await gl.upsert({ branch: 'folio/job_s', baseBranch: 'main', title: 'T', body: 'x', draft: false });
    expect(await gl.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'open', mergedAt: null });
    const mr = host.gitlab.mergeRequests.find((m) => m.project === 'grp/gl3')!;
    Object.assign(mr, { state: 'merged', mergedAt: '2026-11-20T10:00:00Z' });
    expect(await gl.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'merged', mergedAt: Date.parse('2026-11-20T10:00:00Z') });
    mr.state = 'closed';
    expect(await gl.pullRequestState('folio/job_s', 'main')).toEqual({ state: 'closed', mergedAt: null });
    expect(host.gitlab.invalid()).toEqual([]);
  });
  it('reports failures', async () => {
    const url = host.createRepo('grp/gl2', { 'a.md': 'a\n' });
    const gl = createCodeHost(codeHostAccess('gitlab', url, 'nope', { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    const err = await gl.upsert({ branch: 'b', baseBranch: 'main', title: 'T', body: 'x', draft: false }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(CodeHostError);
    expect((err as CodeHostError).status).toBe(401);
  });
});

describe('push-only', () => {
  it('never opens anything', async () => {
    const none = createCodeHost(codeHostAccess('none', '/tmp/x.git', null, { operator: operatorApi(null), outbound: LOCAL_GIT.outbound }));
    expect(await none.upsert({ branch: 'b', baseBranch: 'main', title: 'T', body: 'x', draft: false })).toBeNull();
    expect(await none.pullRequestState('b', 'main')).toBeNull();
    expect(await none.findOpen('b', 'main')).toBeNull();
  });
});
