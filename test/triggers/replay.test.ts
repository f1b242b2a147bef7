// One code change starts at most one job per project: a signed body replayed with new delivery ids
// (GitHub's X-GitHub-Delivery, GitLab's X-Gitlab-Event-UUID) is a duplicate of what it means — the
// pushed range, the merged pull request and its merge commit, a pull request at its head — also
// after its delivery records are forgotten. Unsigned and unknown-project deliveries leave no stored
// row, only a count, and their bodies are not even read; a GitHub body too large to verify is
// refused before it is read.
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { toolCall } from '../fixtures/fake-openai.ts';
import { githubPullRequest, githubPush, gitlabMergeRequest, gitlabPush, sendGitHub, sendGitLab } from '../fixtures/code-host-sender.ts';
import { startE2E, type E2E } from '../agent/e2e-helpers.ts';
import { configureTriggers, deliveries, endpoint, jobsOf, messagesOf } from './helpers.ts';

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
  e.host.createRepo('acme/web', { 'app.ts': 'export {};\n' });
  e.host.createRepo('grp/web', { 'app.rb': '# app\n' });
  projectId = await e.server.createProject({ repositoryUrl: docsUrl, codeHost: 'github' });
  key = await e.server.createKey(projectId);
  githubSecret = await configureTriggers(e.server, projectId, {
    repositories: [
      { host: 'github', repositoryUrl: `${e.host.origin}/acme/api`, events: ['merged', 'push'] },
      { host: 'gitlab', repositoryUrl: `${e.host.origin}/grp/api`, events: ['merged', 'push'] },
      { host: 'github', repositoryUrl: `${e.host.origin}/acme/web`, events: ['opened', 'merged'] },
      { host: 'gitlab', repositoryUrl: `${e.host.origin}/grp/web`, events: ['opened', 'merged'] },
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
const url = (host: 'github' | 'gitlab') => endpoint(e.server, projectId, host);

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
    const merge = e.host.commit('acme/api', 'main', { 'src/cli.ts': 'export const x = 1;\n' }, 'Merge pull request #7');
    const payload = githubPullRequest('closed', { repo: 'acme/api', number: 7, title: 'X', base: { ref: 'main', sha: base }, head: { ref: 'feature/x', sha: head } }, { merged: true, mergeCommit: merge });
    const before = await jobCount();
    const [a, b] = await Promise.all(['merged-a', 'merged-b'].map((id) => sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'pull_request', payload, { deliveryId: id })));
    expect([a.status, b.status].sort()).toEqual([200, 201]);
    const later = await sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'pull_request', payload, { deliveryId: 'merged-c' });
    expect(later.body).toMatchObject({ outcome: 'duplicate', jobId: [a, b].find((x) => x.status === 201)!.body.jobId });
    expect(later.body.reason).toContain(`pull request #7 merged as ${merge.slice(0, 12)}`);
    expect(await jobCount()).toBe(before + 1);
  });

  it('GitLab: a push and a merge replayed with new event UUIDs start one job each', async () => {
    const glBase = e.host.revParse('grp/api', 'main');
    const after = e.host.commit('grp/api', 'main', { 'src/cli.rb': '# changed\n' }, 'Change');
    const push = gitlabPush('grp/api', { ref: 'refs/heads/main', before: glBase, after, message: 'Change' });
    const head = e.host.commit('grp/api', 'feature/y', { 'src/cli.rb': '# y\n' }, 'Y', 'main');
    const merge = gitlabMergeRequest('merge', { repo: 'grp/api', number: 3, title: 'Y', base: { ref: 'main', sha: after }, head: { ref: 'feature/y', sha: head }, mergeCommit: after });
    const before = await jobCount();
    const url = endpoint(e.server, projectId, 'gitlab');
    const pushes = [await sendGitLab(url, githubSecret, 'Push Hook', push), await sendGitLab(url, githubSecret, 'Push Hook', push)];
    const merges = [await sendGitLab(url, githubSecret, 'Merge Request Hook', merge), await sendGitLab(url, githubSecret, 'Merge Request Hook', merge)];
    expect(pushes.map((p) => p.body.outcome)).toEqual(['started', 'duplicate']);
    expect(merges.map((m) => m.body.outcome)).toEqual(['started', 'duplicate']);
    expect(await jobCount()).toBe(before + 2);
  });
});

describe('replays the delivery records no longer show', () => {
  it('a replay after the delivery records are forgotten still starts nothing (GitHub and GitLab)', async () => {
    const from = e.host.revParse('acme/api', 'main');
    const after = e.host.commit('acme/api', 'main', { 'src/cli.ts': 'export const late = 1;\n' }, 'Late');
    const push = githubPush('acme/api', { ref: 'refs/heads/main', before: from, after, message: 'Late' });
    const glFrom = e.host.revParse('grp/api', 'main');
    const glAfter = e.host.commit('grp/api', 'main', { 'src/cli.rb': '# late\n' }, 'Late');
    const glPush = gitlabPush('grp/api', { ref: 'refs/heads/main', before: glFrom, after: glAfter, message: 'Late' });
    const first = [await sendGitHub(url('github'), githubSecret, 'push', push), await sendGitLab(url('gitlab'), githubSecret, 'Push Hook', glPush)];
    expect(first.map((f) => f.body.outcome)).toEqual(['started', 'started']);
    const jobs = await jobCount();
    // As after FOLIO_TRIGGER_DELIVERY_RETENTION_DAYS: every delivery record is gone.
    await e.server.services.triggers.store.pruneDeliveries(Date.now() + 1);
    expect(await deliveries(e.server, projectId)).toEqual([]);
    const replays = [await sendGitHub(url('github'), githubSecret, 'push', push), await sendGitLab(url('gitlab'), githubSecret, 'Push Hook', glPush)];
    expect(replays.map((r) => [r.status, r.body.outcome, r.body.jobId])).toEqual([
      [200, 'duplicate', first[0].body.jobId],
      [200, 'duplicate', first[1].body.jobId],
    ]);
    expect(await jobCount()).toBe(jobs);
  });

  it('the same delivery id is a duplicate even when its body names another change', async () => {
    const from = e.host.revParse('acme/api', 'main');
    const one = e.host.commit('acme/api', 'main', { 'src/cli.ts': 'export const one = 1;\n' }, 'One');
    const two = e.host.commit('acme/api', 'main', { 'src/cli.ts': 'export const two = 2;\n' }, 'Two');
    const first = await sendGitHub(url('github'), githubSecret, 'push', githubPush('acme/api', { ref: 'refs/heads/main', before: from, after: one, message: 'One' }), { deliveryId: 'same-id' });
    expect(first.body.outcome).toBe('started');
    const jobs = await jobCount();
    const again = await sendGitHub(url('github'), githubSecret, 'push', githubPush('acme/api', { ref: 'refs/heads/main', before: one, after: two, message: 'Two' }), { deliveryId: 'same-id' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ outcome: 'duplicate', jobId: first.body.jobId, reason: expect.stringMatching(/^This delivery was handled before by job /) });
    expect(await jobCount()).toBe(jobs);
  });
});

describe('pull requests replayed while they are open', () => {
  it('GitHub: reopened or marked ready at the same head reruns nothing; new commits follow up once; the merge once', async () => {
    const from = e.host.revParse('acme/web', 'main');
    const h1 = e.host.commit('acme/web', 'feature/w', { 'app.ts': 'export const w = 1;\n' }, 'W', 'main');
    e.host.github.pulls.push({ number: 4, owner: 'acme', repo: 'web', head: 'feature/w', base: 'main', title: 'W', body: '', draft: false, state: 'open' });
    const pr = { repo: 'acme/web', number: 4, title: 'W', base: { ref: 'main', sha: from }, head: { ref: 'feature/w', sha: h1 } };
    const send = (action: string, shape: typeof pr, extra = {}) => sendGitHub(url('github'), githubSecret, 'pull_request', githubPullRequest(action, shape, extra));
    const jobs = await jobCount();
    const opened = await send('opened', pr);
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    // The base branch moved meanwhile: the same code at the same head, so nothing to do again.
    const moved = { ...pr, base: { ref: 'main', sha: e.host.commit('acme/web', 'main', { 'README.md': 'elsewhere\n' }, 'Elsewhere') } };
    const again = [await send('reopened', moved), await send('ready_for_review', moved), await send('opened', pr)];
    expect(again.map((a) => [a.status, a.body.outcome, a.body.jobId])).toEqual(Array(3).fill([200, 'duplicate', opened.body.jobId]));
    expect(again[0].body.reason).toContain(`pull request #4 at ${h1.slice(0, 12)}`);

    const h2 = e.host.commit('acme/web', 'feature/w', { 'app.ts': 'export const w = 2;\n' }, 'W2');
    const newCommits = { ...pr, head: { ref: 'feature/w', sha: h2 } };
    const synced = [await send('synchronize', newCommits, { before: h1, after: h2 }), await send('synchronize', newCommits, { before: h1, after: h2 })];
    expect(synced.map((a) => a.body.outcome)).toEqual(['followed_up', 'duplicate']);
    const merge = e.host.commit('acme/web', 'main', { 'app.ts': 'export const w = 2;\n' }, 'Merge pull request #4');
    const merged = [await send('closed', newCommits, { merged: true, mergeCommit: merge }), await send('closed', newCommits, { merged: true, mergeCommit: merge })];
    expect(merged.map((a) => [a.body.outcome, a.body.jobId])).toEqual([
      ['followed_up', opened.body.jobId],
      ['duplicate', opened.body.jobId],
    ]);
    // One job; its prompt, the new commits and the merge: the agent ran three turns, not six.
    expect(await jobCount()).toBe(jobs + 1);
    expect(await messagesOf(e.server, projectId, opened.body.jobId, key)).toHaveLength(3);
  });

  it('GitLab: reopened at the same head reruns nothing; new commits follow up once; the merge once', async () => {
    const from = e.host.revParse('grp/web', 'main');
    const h1 = e.host.commit('grp/web', 'feature/w', { 'app.rb': '# w1\n' }, 'W', 'main');
    e.host.gitlab.mergeRequests.push({ iid: 5, project: 'grp/web', source_branch: 'feature/w', target_branch: 'main', title: 'W', description: '', state: 'opened' });
    const mr = { repo: 'grp/web', number: 5, title: 'W', base: { ref: 'main', sha: from }, head: { ref: 'feature/w', sha: h1 } };
    const send = (action: string, shape: Parameters<typeof gitlabMergeRequest>[1]) => sendGitLab(url('gitlab'), githubSecret, 'Merge Request Hook', gitlabMergeRequest(action, shape));
    const jobs = await jobCount();
    const opened = await send('open', mr);
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const reopened = await send('reopen', mr);
    expect(reopened.body).toMatchObject({ outcome: 'duplicate', jobId: opened.body.jobId });
    const h2 = e.host.commit('grp/web', 'feature/w', { 'app.rb': '# w2\n' }, 'W2');
    const updated = { ...mr, head: { ref: 'feature/w', sha: h2 }, oldrev: h1 };
    expect([(await send('update', updated)).body.outcome, (await send('update', updated)).body.outcome]).toEqual(['followed_up', 'duplicate']);
    const merge = e.host.commit('grp/web', 'main', { 'app.rb': '# w2\n' }, 'Merge branch feature/w');
    const merged = { ...mr, head: { ref: 'feature/w', sha: h2 }, mergeCommit: merge };
    expect([(await send('merge', merged)).body.outcome, (await send('merge', merged)).body.outcome]).toEqual(['followed_up', 'duplicate']);
    expect(await jobCount()).toBe(jobs + 1);
    expect(await messagesOf(e.server, projectId, opened.body.jobId, key)).toHaveLength(3);
  });
});

describe('claiming what a change means', () => {
  it('transactions claiming the same meaning at once: exactly one wins, by the unique key alone (no project lock taken)', async () => {
    const { store } = e.server.services.triggers;
    const claim = () => store.db.transaction().execute((trx) => store.claimMeaning(trx, projectId, 'github:acme/api:push:race..race'));
    const won = await Promise.all([claim(), claim(), claim()]);
    expect(won.filter(Boolean)).toHaveLength(1);
    // Another project holds its own claim on the same meaning.
    const other = await e.server.createProject({ repositoryUrl: `${e.host.origin}/acme/docs.git` });
    expect(await store.db.transaction().execute((trx) => store.claimMeaning(trx, other, 'github:acme/api:push:race..race'))).toBe(true);
  });
});

describe('unsigned and unknown-project deliveries', () => {
  it('leave no stored row, only a count', async () => {
    const { db } = e.server.services.store;
    const { receiver, store } = e.server.services.triggers;
    const stored = async () => ({
      deliveries: (await db.selectFrom('trigger_deliveries').select('id').execute()).length,
      meanings: (await db.selectFrom('trigger_meanings').select('project_id').execute()).length,
    });
    const rows = await stored();
    const refusedBefore = (await store.settings(projectId)).refusedDeliveries;
    const counts = () => receiver.refusals().reduce((n, r) => n + r.count, 0);
    const counted = counts();
    const payload = githubPush('acme/api', { ref: 'refs/heads/main', before: base, after: base, message: 'text chosen by the sender' });
    expect((await sendGitHub(endpoint(e.server, projectId, 'github'), 'wrong', 'push', payload)).status).toBe(401);
    expect((await sendGitHub(endpoint(e.server, projectId, 'github'), githubSecret, 'push', payload, { signature: null })).status).toBe(401);
    expect((await sendGitLab(endpoint(e.server, projectId, 'gitlab'), null, 'Push Hook', payload)).status).toBe(401);
    expect((await sendGitHub(endpoint(e.server, 'prj_nope', 'github'), githubSecret, 'push', payload)).status).toBe(404);
    expect(await stored()).toEqual(rows);
    const reasons = await db.selectFrom('trigger_deliveries').select('reason').execute();
    expect(JSON.stringify(reasons)).not.toContain('text chosen by the sender');
    // Counted per process for /metrics (all four), and in the project's settings (the three that
    // reached an existing project), written in batches.
    expect(counts()).toBe(counted + 4);
    await receiver.saveRefusals();
    expect(await store.settings(projectId)).toMatchObject({ refusedDeliveries: refusedBefore + 3, lastRefusedAt: expect.any(String) });
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

  it('a GitHub body announced larger than Folio reads unverified is refused 413 before it is sent', async () => {
    const answer = await headOnly(`/v1/triggers/${projectId}/github`, {
      'x-github-event': 'push',
      'x-hub-signature-256': `sha256=${'0'.repeat(64)}`,
      'content-length': String(2 * 1024 * 1024),
    });
    expect(answer).toMatch(/^HTTP\/1\.1 413/);
    expect(answer).toContain('"code":"payload_too_large"');
    expect(answer).toContain('larger than FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT (1048576 bytes), the most Folio reads before its X-Hub-Signature-256 can be checked');
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
