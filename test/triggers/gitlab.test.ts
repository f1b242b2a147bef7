// Jobs started by GitLab webhooks, end to end: a GitLab-shaped sender (X-Gitlab-Token,
// Idempotency-Key) against a real Folio server running the real agent on a GitLab docs repository;
// the change is read from the fake GitLab API (merge request changes, repository compare).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequence, toolCall } from '../fixtures/fake-openai.ts';
import { gitlabMergeRequest, gitlabPush, sendGitLab } from '../fixtures/code-host-sender.ts';
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { configureTriggers, deliveries, endpoint, expectOneJobPerProject, jobsOf, messagesOf, projectsWatching } from './helpers.ts';

const DOCS = { 'index.md': '# Acme\n\nRun `acme build`.\n' };
const CODE = { 'lib/cli.rb': 'FLAGS = ["--verbose"]\n' };

describe('jobs started by GitLab webhooks', () => {
  let e: E2E;
  let projectId: string;
  let key: string;
  let secret: string;
  let codeUrl: string;
  let url: string;
  let base: string;

  beforeAll(async () => {
    e = await startE2E();
    const docsUrl = e.host.createRepo('group/docs', DOCS);
    e.host.createRepo('group/sub/api', CODE);
    codeUrl = `${e.host.origin}/group/sub/api`;
    projectId = await e.server.createProject({ repositoryUrl: docsUrl, codeHost: 'gitlab' });
    key = await e.server.createKey(projectId);
    secret = await configureTriggers(e.server, projectId, { repositories: [{ host: 'gitlab', repositoryUrl: codeUrl, events: ['merged'], paths: ['lib/**'] }] });
    url = endpoint(e.server, projectId, 'gitlab');
    base = e.host.revParse('group/sub/api', 'main');
  });
  afterAll(async () => {
    await e?.close();
  });

  const addMergeRequest = (iid: number, branch: string, title: string) =>
    e.host.gitlab.mergeRequests.push({ iid, project: 'group/sub/api', source_branch: branch, target_branch: 'main', title, description: '', state: 'opened' });

  it('a merged merge request starts one job that opens a docs merge request; a redelivery creates nothing', async () => {
    const head = e.host.commit('group/sub/api', 'feature/dry-run', { 'lib/cli.rb': 'FLAGS = ["--verbose", "--dry-run"]\n' }, 'Add --dry-run');
    addMergeRequest(1, 'feature/dry-run', 'Add --dry-run');
    e.llm.setResponder(
      sequence([
        toolCall('edit_file', { path: 'index.md', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nAdd `--dry-run` to preview.' }),
        toolCall('finish', { title: 'Document --dry-run', summary: 'Documented --dry-run.' }),
      ]),
    );
    const payload = gitlabMergeRequest('merge', { repo: 'group/sub/api', number: 1, title: 'Add --dry-run', body: 'Dry runs.', author: 'jane', base: { ref: 'main', sha: base }, head: { ref: 'feature/dry-run', sha: head } });
    const sent = await sendGitLab(url, secret, 'Merge Request Hook', payload, { uuid: 'gl-event-1' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const job = await waitForJob(e.server, projectId, sent.body.jobId, key);
    expect(job.status).toBe('completed');
    expect(job.trigger).toEqual({ kind: 'pull_request_merged', host: 'gitlab', repository: codeUrl, url: `${codeUrl}/-/merge_requests/1` });
    const docsMrs = e.host.gitlab.mergeRequests.filter((m) => m.project === 'group/docs');
    expect(docsMrs).toHaveLength(1);
    expect(job.prLink).toBe(`${e.host.origin}/group/docs/-/merge_requests/1`);
    expect(e.host.gitlab.invalid()).toEqual([]);
    expect(e.host.gitlab.requests.some((r) => r.path.endsWith('/merge_requests/1/changes'))).toBe(true);
    const [m] = await messagesOf(e.server, projectId, job.id, key);
    expect(m.prompt).toContain('merged (merge request !1)');
    expect(m.prompt).toContain('Author: jane');
    expect(m.prompt).toContain('+FLAGS = ["--verbose", "--dry-run"]');

    const again = await sendGitLab(url, secret, 'Merge Request Hook', payload, { uuid: 'gl-event-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ outcome: 'duplicate', jobId: job.id });
    expect(await jobsOf(e.server, projectId, key)).toHaveLength(1);
  });

  it('two projects watching the same repository each start one job for the same event; redeliveries are duplicates of their own job', async () => {
    // X-Gitlab-Event-UUID names the event, shared by every webhook it triggers (and a body hash would be too).
    const head = e.host.commit('group/sub/api', 'feature/shared', { 'lib/cli.rb': 'FLAGS = ["--verbose", "--shared"]\n' }, 'Add --shared');
    addMergeRequest(9, 'feature/shared', 'Add --shared');
    e.llm.setResponder(sequence([]));
    const watchers = await projectsWatching(e.server, 2, { repositoryUrl: `${e.host.origin}/group/docs`, codeHost: 'gitlab' }, { host: 'gitlab', repositoryUrl: codeUrl, events: ['merged'] });
    const payload = gitlabMergeRequest('merge', { repo: 'group/sub/api', number: 9, title: 'Add --shared', base: { ref: 'main', sha: base }, head: { ref: 'feature/shared', sha: head } });
    const jobs = await expectOneJobPerProject(e.server, watchers, (p) => sendGitLab(p.url, p.secret, 'Merge Request Hook', payload, { uuid: 'gl-event-shared' }));
    for (const job of jobs) expect(job.trigger).toEqual({ kind: 'pull_request_merged', host: 'gitlab', repository: codeUrl, url: `${codeUrl}/-/merge_requests/9` });
  });

  it('a wrong or missing token gets 401; malformed payloads 400; unknown events 202', async () => {
    const payload = gitlabMergeRequest('merge', { repo: 'group/sub/api', number: 1, title: 'x', base: { ref: 'main', sha: base }, head: { ref: 'x', sha: base } });
    expect((await sendGitLab(url, 'wrong', 'Merge Request Hook', payload)).status).toBe(401);
    expect((await sendGitLab(url, secret.slice(0, -1), 'Merge Request Hook', payload)).status).toBe(401);
    const missing = await sendGitLab(url, null, 'Merge Request Hook', payload);
    expect(missing.status).toBe(401);
    expect(missing.body.error).toMatch(/X-Gitlab-Token/);
    expect((await sendGitLab(url, secret, 'Merge Request Hook', null, { raw: 'nope' })).status).toBe(400);
    const noAttrs = await sendGitLab(url, secret, 'Merge Request Hook', { object_kind: 'merge_request', project: { path_with_namespace: 'group/sub/api' } });
    expect(noAttrs.status).toBe(400);
    expect(noAttrs.body.error).toMatch(/object_attributes is not an object/);
    const badSha = await sendGitLab(url, secret, 'Push Hook', gitlabPush('group/sub/api', { ref: 'refs/heads/main', before: '--upload-pack=x', after: base, message: 'x' }));
    expect(badSha.status).toBe(400);
    const pipeline = await sendGitLab(url, secret, 'Pipeline Hook', { object_kind: 'pipeline' });
    expect(pipeline.status).toBe(202);
    expect(pipeline.body.reason).toMatch(/"Pipeline Hook" is not one Folio acts on/);
    // The token checked out before the body is read, so the body may be larger than a GitHub one
    // (FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT), up to FOLIO_TRIGGER_BODY_LIMIT.
    const padded = await sendGitLab(url, secret, 'Pipeline Hook', { object_kind: 'pipeline', padding: 'p'.repeat(2 * 1024 * 1024) });
    expect(padded.status).toBe(202);
    // Too large: refused before the body is read, with the delivery id GitLab sent (Idempotency-Key).
    const big = await sendGitLab(url, secret, 'Push Hook', null, { raw: 'x'.repeat(5 * 1024 * 1024 + 10), uuid: 'gl-too-large' });
    expect(big.status).toBe(413);
    expect(big.body).toMatchObject({ code: 'payload_too_large', outcome: 'rejected', deliveryId: 'gl-too-large', reason: 'The delivery is larger than FOLIO_TRIGGER_BODY_LIMIT (5242880 bytes).' });
    expect(big.body.error).toBe(big.body.reason);
    // Only verified deliveries are recorded (the three malformed payloads); the wrong tokens and the
    // oversized body, which anyone could send, are only counted.
    const rejected = (await deliveries(e.server, projectId)).filter((d) => d.outcome === 'rejected');
    expect(rejected.map((d) => d.statusCode)).toEqual([400, 400, 400]);
    const counted = Object.fromEntries(e.server.services.triggers.receiver.refusals().filter((r) => r.host === 'gitlab').map((r) => [r.code, r.count]));
    expect(counted.invalid_signature).toBeGreaterThanOrEqual(3);
    expect(counted.payload_too_large).toBeGreaterThanOrEqual(1);
  });

  it('a merge request whose files miss the path filter starts nothing', async () => {
    const head = e.host.commit('group/sub/api', 'feature/ci', { '.gitlab-ci.yml': 'test: {}\n' }, 'CI');
    addMergeRequest(2, 'feature/ci', 'CI');
    const sent = await sendGitLab(url, secret, 'Merge Request Hook', gitlabMergeRequest('merge', { repo: 'group/sub/api', number: 2, title: 'CI', base: { ref: 'main', sha: base }, head: { ref: 'feature/ci', sha: head } }));
    expect(sent.status).toBe(202);
    expect(sent.body.reason).toMatch(/No changed file matches the path filters lib\/\*\*/);
  });

  it('with jobs started on opened merge requests, new commits follow up on the same job', async () => {
    await configureTriggers(e.server, projectId, { repositories: [{ host: 'gitlab', repositoryUrl: codeUrl, events: ['opened'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const first = e.host.commit('group/sub/api', 'feature/env', { 'lib/env.rb': 'PORT = 8080\n' }, 'Env');
    addMergeRequest(3, 'feature/env', 'Env settings');
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'env.md', content: '# Env\n\nPORT\n' }),
        toolCall('finish', { title: 'Document env', summary: 'Env page.' }),
        toolCall('write_file', { path: 'env.md', content: '# Env\n\nPORT, HOST\n' }),
        toolCall('finish', { title: 'Document HOST', summary: 'HOST too.' }),
      ]),
    );
    const mr = { repo: 'group/sub/api', number: 3, title: 'Env settings', base: { ref: 'main', sha: base }, head: { ref: 'feature/env', sha: first } };
    const opened = await sendGitLab(url, secret, 'Merge Request Hook', gitlabMergeRequest('open', mr));
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const job = await waitForJob(e.server, projectId, opened.body.jobId, key);
    const second = e.host.commit('group/sub/api', 'feature/env', { 'lib/env.rb': 'PORT = 8080\nHOST = "0.0.0.0"\n' }, 'Host');
    // An update without new commits (e.g. a title edit) starts nothing.
    const edit = await sendGitLab(url, secret, 'Merge Request Hook', gitlabMergeRequest('update', { ...mr, head: { ref: 'feature/env', sha: first } }));
    expect(edit.status).toBe(202);
    const update = await sendGitLab(url, secret, 'Merge Request Hook', gitlabMergeRequest('update', { ...mr, head: { ref: 'feature/env', sha: second }, oldrev: first }));
    expect(update.status, JSON.stringify(update.body)).toBe(200);
    expect(update.body).toMatchObject({ outcome: 'followed_up', jobId: job.id });
    const after = await waitForJob(e.server, projectId, job.id, key, (j: any) => j.status !== 'active');
    const messages = await messagesOf(e.server, projectId, job.id, key);
    expect(messages).toHaveLength(2);
    expect(messages[1].prompt).toContain('+HOST = "0.0.0.0"');
    expect(after.prLink).toBe(job.prLink);
    expect(e.host.gitlab.mergeRequests.filter((m) => m.project === 'group/docs' && m.source_branch === job.source.ref)).toHaveLength(1);
    expect(e.host.gitlab.invalid()).toEqual([]);
  });

  it('a push to the default branch reads the comparison', async () => {
    await configureTriggers(e.server, projectId, { repositories: [{ host: 'gitlab', repositoryUrl: codeUrl, events: ['push'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const before = e.host.revParse('group/sub/api', 'main');
    const after = e.host.commit('group/sub/api', 'main', { 'lib/log.rb': 'LEVEL = :info\n' }, 'Logging');
    e.llm.setResponder(sequence([]));
    const sent = await sendGitLab(url, secret, 'Push Hook', gitlabPush('group/sub/api', { ref: 'refs/heads/main', before, after, message: 'Logging' }));
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const job = await waitForJob(e.server, projectId, sent.body.jobId, key);
    expect(job.trigger.url).toBe(`${codeUrl}/-/compare/${before}...${after}`);
    const [m] = await messagesOf(e.server, projectId, job.id, key);
    expect(m.prompt).toContain('A lib/log.rb');
    expect(e.host.gitlab.requests.some((r) => r.path.includes('/repository/compare'))).toBe(true);
  });
});
