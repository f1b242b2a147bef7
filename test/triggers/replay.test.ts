// One code change starts at most one job per project: a signed body replayed with new delivery ids
// (GitHub's X-GitHub-Delivery, GitLab's X-Gitlab-Event-UUID) is a duplicate of what it means — the
// pushed range, the merged pull request at its head. Unsigned and unknown-project deliveries leave
// no stored row, only a count, and their bodies are not even read.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCall } from '../fixtures/fake-openai.ts';
import { githubPullRequest, githubPush, gitlabMergeRequest, gitlabPush, sendGitHub, sendGitLab } from '../fixtures/code-host-sender.ts';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { configureTriggers, deliveries, endpoint, jobsOf } from './helpers.ts';

let e: E2E;
let projectId: string;
let key: string;
let githubSecret: string;
let base: string;

beforeAll(async () => {
  e = await startE2E();
  const docsUrl = e.host.createRepo('acme/docs', { 'README.md': '# Docs\n' });
  e.host.createRepo('acme/api', { 'src/cli.ts': 'export {};\n' });
  e.host.createRepo('grp/api', { 'src/cli.rb': '# cli\n' });
  projectId = await e.server.createProject({ repositoryUrl: docsUrl, codeHost: 'github' });
  key = await e.server.createKey(projectId);
  githubSecret = await configureTriggers(e.server, projectId, {
    repositories: [
      { host: 'github', repositoryUrl: `${e.host.origin}/acme/api`, events: ['merged', 'push'] },
      { host: 'gitlab', repositoryUrl: `${e.host.origin}/grp/api`, events: ['merged', 'push'] },
    ],
  });
  base = e.host.revParse('acme/api', 'main');
  // Every job finishes at once: only how many start matters here.
  e.llm.setResponder(() => toolCall('finish', { title: 'Nothing', summary: 'Nothing to do.' }));
});
afterAll(async () => e?.close());

async function jobCount(): Promise<number> {
  return (await jobsOf(e.server, projectId, key)).length;
}

describe('replayed deliveries', () => {
  it('the same signed push sent three times with new delivery ids starts one job', async () => {
    const after = e.host.commit('acme/api', 'main', { 'src/cli.ts': 'export const a = 1;\n' }, 'Change');
    const payload = githubPush('acme/api', { ref: 'refs/heads/main', before: base, after, message: 'Change' });
    const before = await jobCount();
    const answers = [];
    for (const id of ['push-1', 'push-2', 'push-3']) answers.push(await sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'push', payload, { deliveryId: id }));
    expect(answers.map((a) => a.status)).toEqual([201, 200, 200]);
    expect(answers.slice(1).map((a) => a.body.outcome)).toEqual(['duplicate', 'duplicate']);
    expect(answers[2].body).toMatchObject({ jobId: answers[0].body.jobId, reason: expect.stringMatching(/handled before/) });
    expect(await jobCount()).toBe(before + 1);
  });

  it('a merged pull request replayed does not rerun the agent; two replays at once start one job', async () => {
    const head = e.host.commit('acme/api', 'feature/x', { 'src/cli.ts': 'export const x = 1;\n' }, 'X', 'main');
    e.host.github.pulls.push({ number: 7, owner: 'acme', repo: 'api', head: 'feature/x', base: 'main', title: 'X', body: '', draft: false, state: 'closed' });
    const payload = githubPullRequest('closed', { repo: 'acme/api', number: 7, title: 'X', base: { ref: 'main', sha: base }, head: { ref: 'feature/x', sha: head } }, { merged: true });
    const before = await jobCount();
    const [a, b] = await Promise.all(['merged-a', 'merged-b'].map((id) => sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'pull_request', payload, { deliveryId: id })));
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const later = await sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'pull_request', payload, { deliveryId: 'merged-c' });
    expect(later.body.outcome).toBe('duplicate');
    expect(await jobCount()).toBe(before + 1);
  });

  it('GitLab: a push and a merge replayed with new event UUIDs start one job each', async () => {
    const glBase = e.host.revParse('grp/api', 'main');
    const after = e.host.commit('grp/api', 'main', { 'src/cli.rb': '# changed\n' }, 'Change');
    const push = gitlabPush('grp/api', { ref: 'refs/heads/main', before: glBase, after, message: 'Change' });
    const head = e.host.commit('grp/api', 'feature/y', { 'src/cli.rb': '# y\n' }, 'Y', 'main');
    const merge = gitlabMergeRequest('merge', { repo: 'grp/api', number: 3, title: 'Y', base: { ref: 'main', sha: after }, head: { ref: 'feature/y', sha: head } });
    const before = await jobCount();
    const url = endpoint(e.server, projectId, 'gitlab');
    const pushes = [await sendGitLab(url, githubSecret, 'Push Hook', push), await sendGitLab(url, githubSecret, 'Push Hook', push)];
    const merges = [await sendGitLab(url, githubSecret, 'Merge Request Hook', merge), await sendGitLab(url, githubSecret, 'Merge Request Hook', merge)];
    expect(pushes.map((p) => p.body.outcome)).toEqual(['started', 'duplicate']);
    expect(merges.map((m) => m.body.outcome)).toEqual(['started', 'duplicate']);
    expect(await jobCount()).toBe(before + 2);
  });
});

describe('unsigned and unknown-project deliveries', () => {
  it('leave no stored row, only a count', async () => {
    const rows = (await deliveries(e.server, projectId)).length;
    const counts = () => e.server.services.triggers.receiver.refusals().reduce((n, r) => n + r.count, 0);
    const counted = counts();
    const payload = githubPush('acme/api', { ref: 'refs/heads/main', before: base, after: base, message: 'text chosen by the sender' });
    expect((await sendGitHub(endpoint(e.server, projectId, 'github'), 'wrong', 'push', payload)).status).toBe(401);
    expect((await sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'push', payload, { signature: null })).status).toBe(401);
    expect((await sendGitLab(endpoint(e.server, projectId, 'gitlab'), null, 'Push Hook', payload)).status).toBe(401);
    expect((await sendGitHub(endpoint(e.server, 'prj_nope', 'github'), githubSecret, 'push', payload)).status).toBe(404);
    expect((await deliveries(e.server, projectId)).length).toBe(rows);
    const stored = await e.server.services.store.db.selectFrom('trigger_deliveries').select('reason').execute();
    expect(JSON.stringify(stored)).not.toContain('text chosen by the sender');
    expect(counts()).toBe(counted + 4);
  });

  /** Sends only a request head announcing a large body, then waits for the answer without sending it. */
  function headOnly(path: string, headers: Record<string, string>): Promise<string> {
    const { port } = new URL(e.server.url);
    return new Promise((resolve, reject) => {
      const socket = net.connect(Number(port), '127.0.0.1', () => {
        const lines = Object.entries({ host: '127.0.0.1', 'content-type': 'application/json', 'content-length': String(5 * 1024 * 1024), ...headers }).map(([k, v]) => `${k}: ${v}`);
        socket.write(`POST ${path} HTTP/1.1\r\n${lines.join('\r\n')}\r\n\r\n`);
      });
      let got = '';
      socket.on('data', (d) => {
        got += d.toString('utf8');
        if (got.includes('\r\n\r\n') && got.includes('}')) {
          socket.destroy();
          resolve(got);
        }
      });
      socket.on('error', reject);
      socket.on('close', () => resolve(got));
    });
  }

  it('are answered before their body is read: an unknown project, a wrong GitLab token, a missing GitHub signature', async () => {
    const unknown = await headOnly('/v1/triggers/prj_nope/github', { 'x-github-event': 'push', 'x-hub-signature-256': `sha256=${'0'.repeat(64)}` });
    expect(unknown).toMatch(/^HTTP\/1\.1 404/);
    expect(unknown).toContain('"code":"project_not_found"');
    const gitlab = await headOnly(`/v1/triggers/${projectId}/gitlab`, { 'x-gitlab-event': 'Push Hook', 'x-gitlab-token': 'wrong' });
    expect(gitlab).toMatch(/^HTTP\/1\.1 401/);
    const github = await headOnly(`/v1/triggers/${projectId}/github`, { 'x-github-event': 'push' });
    expect(github).toMatch(/^HTTP\/1\.1 401/);
    expect(github).toContain('"code":"invalid_signature"');
  });
});

describe('a secret Folio cannot open', () => {
  it('answers 503 failed (trigger_secret_unavailable), before the body, and records nothing', async () => {
    const other = await e.server.createProject({ repositoryUrl: `${e.host.origin}/acme/docs.git` });
    await configureTriggers(e.server, other, { repositories: [{ host: 'github', repositoryUrl: `${e.host.origin}/acme/api`, events: ['push'] }] });
    // As if FOLIO_SECRET changed since the secret was sealed.
    await e.server.services.store.db.updateTable('trigger_settings').set({ secret: 'enc:v1:not-sealed-with-this-secret' }).where('project_id', '=', other).execute();
    const sent = await sendGitHub(endpoint(e.server, other, 'github'), 'whatever', 'ping', {});
    expect(sent.status).toBe(503);
    expect(sent.body).toMatchObject({ outcome: 'failed', code: 'trigger_secret_unavailable' });
    expect(await deliveries(e.server, other)).toEqual([]);
  });
});
