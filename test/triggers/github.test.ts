// Jobs started by GitHub webhooks, end to end: a GitHub-shaped sender signs deliveries to a real
// Folio server running the real agent (scripted model), which reads the change from the fake GitHub
// API, edits the docs repository and opens a docs pull request on the same fake host.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequence, toolCall } from '../fixtures/fake-openai.ts';
import { githubPullRequest, githubPush, sendGitHub } from '../fixtures/code-host-sender.ts';
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { configureTriggers, deliveries, endpoint, expectOneJobPerProject, jobsOf, messagesOf, projectsWatching } from './helpers.ts';

const DOCS = {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Home\ndescription: Start here\n---\n\n# Acme CLI\n\nRun `acme build`.\n',
};
const CODE = { 'src/cli.ts': 'export const flags = ["--verbose"];\n', 'README.md': '# Acme\n' };

describe('jobs started by GitHub webhooks', () => {
  let e: E2E;
  let projectId: string;
  let key: string;
  let secret: string;
  let codeUrl: string;
  let url: string;
  let base: string;

  beforeAll(async () => {
    e = await startE2E();
    const docsUrl = e.host.createRepo('acme/docs', DOCS);
    e.host.createRepo('acme/api', CODE);
    codeUrl = `${e.host.origin}/acme/api`;
    projectId = await e.server.createProject({ repositoryUrl: docsUrl, codeHost: 'github' });
    key = await e.server.createKey(projectId);
    secret = await configureTriggers(e.server, projectId, { repositories: [{ host: 'github', repositoryUrl: codeUrl, events: ['merged'] }] });
    url = endpoint(e.server, projectId, 'github');
    base = e.host.revParse('acme/api', 'main');
  });
  afterAll(async () => {
    await e?.close();
  });

  it('a merged pull request starts one job that opens a docs pull request; a redelivery creates nothing', async () => {
    const head = e.host.commit('acme/api', 'feature/dry-run', { 'src/cli.ts': 'export const flags = ["--verbose", "--dry-run"];\n' }, 'Add --dry-run');
    e.host.github.pulls.push({ number: 1, owner: 'acme', repo: 'api', head: 'feature/dry-run', base: 'main', title: 'Add --dry-run', body: '', draft: false, state: 'closed' });
    e.llm.setResponder(
      sequence([
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nAdd `--dry-run` to preview.' }),
        toolCall('finish', { title: 'Document --dry-run', summary: 'Documented the new --dry-run flag.' }),
      ]),
    );
    const payload = githubPullRequest('closed', { repo: 'acme/api', number: 1, title: 'Add --dry-run', body: 'Adds a **dry run** mode.', author: 'octocat', base: { ref: 'main', sha: base }, head: { ref: 'feature/dry-run', sha: head } }, { merged: true });
    const sent = await sendGitHub(url, secret, 'pull_request', payload, { deliveryId: 'delivery-merged-1' });
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    expect(sent.body).toMatchObject({ outcome: 'started', deliveryId: 'delivery-merged-1' });
    const jobId = sent.body.jobId;

    const job = await waitForJob(e.server, projectId, jobId, key);
    expect(job.status).toBe('completed');
    expect(job.trigger).toEqual({ kind: 'pull_request_merged', host: 'github', repository: codeUrl, url: `${codeUrl}/pull/1` });
    const docsPulls = e.host.github.pulls.filter((p) => p.repo === 'docs');
    expect(docsPulls).toHaveLength(1);
    expect(job.prLink).toBe(`${e.host.origin}/acme/docs/pull/${docsPulls[0].number}`);
    expect(e.host.show('acme/docs', job.source.ref, 'index.mdx')).toContain('--dry-run');
    expect(e.host.github.invalid()).toEqual([]);
    expect(e.host.github.requests.some((r) => r.method === 'GET' && r.path === '/repos/acme/api/pulls/1/files')).toBe(true);

    // The prompt is the template filled with the change: title, author, link, description and the diff.
    const [first] = await messagesOf(e.server, projectId, jobId, key);
    expect(first.prompt).toContain('merged (pull request #1)');
    expect(first.prompt).toContain('Change: Add --dry-run');
    expect(first.prompt).toContain(`Link: ${codeUrl}/pull/1`);
    expect(first.prompt).toContain('Author: octocat');
    expect(first.prompt).toContain('```text\nAdds a **dry run** mode.\n```');
    expect(first.prompt).toContain('M src/cli.ts');
    expect(first.prompt).toContain('+export const flags = ["--verbose", "--dry-run"];');

    // The same delivery again (GitHub's "Redeliver"): nothing new.
    const again = await sendGitHub(url, secret, 'pull_request', payload, { deliveryId: 'delivery-merged-1' });
    expect(again.status).toBe(200);
    expect(again.body).toMatchObject({ outcome: 'duplicate', jobId });
    expect(await jobsOf(e.server, projectId, key)).toHaveLength(1);
    const recorded = await deliveries(e.server, projectId);
    expect(recorded.slice(0, 2).map((d) => d.outcome)).toEqual(['duplicate', 'started']);
    expect(recorded[1]).toMatchObject({ jobId, changeUrl: `${codeUrl}/pull/1`, statusCode: 201, event: 'pull_request' });
  });

  it('two projects watching the same repository each start one job for the same delivery; redeliveries are duplicates of their own job', async () => {
    // GitHub sends each webhook of the repository its own copy of the event, with the same X-GitHub-Delivery.
    const head = e.host.commit('acme/api', 'feature/shared', { 'src/cli.ts': 'export const flags = ["--verbose", "--shared"];\n' }, 'Add --shared');
    e.host.github.pulls.push({ number: 9, owner: 'acme', repo: 'api', head: 'feature/shared', base: 'main', title: 'Add --shared', body: '', draft: false, state: 'closed' });
    e.llm.setResponder(sequence([]));
    const watchers = await projectsWatching(e.server, 2, { repositoryUrl: `${e.host.origin}/acme/docs`, codeHost: 'github' }, { host: 'github', repositoryUrl: codeUrl, events: ['merged'] });
    const payload = githubPullRequest('closed', { repo: 'acme/api', number: 9, title: 'Add --shared', base: { ref: 'main', sha: base }, head: { ref: 'feature/shared', sha: head } }, { merged: true });
    const jobs = await expectOneJobPerProject(e.server, watchers, (p) => sendGitHub(p.url, p.secret, 'pull_request', payload, { deliveryId: 'delivery-shared-1' }));
    for (const job of jobs) expect(job.trigger).toEqual({ kind: 'pull_request_merged', host: 'github', repository: codeUrl, url: `${codeUrl}/pull/9` });
  });

  it('a bad or missing signature gets 401 and is counted, not recorded; nothing starts', async () => {
    const recordedBefore = (await deliveries(e.server, projectId)).length;
    const payload = githubPullRequest('closed', { repo: 'acme/api', number: 1, title: 'x', base: { ref: 'main', sha: base }, head: { ref: 'feature/dry-run', sha: base } }, { merged: true });
    const before = (await jobsOf(e.server, projectId, key)).length;
    const wrong = await sendGitHub(url, 'not-the-secret', 'pull_request', payload);
    expect(wrong.status).toBe(401);
    expect(wrong.body).toMatchObject({ code: 'invalid_signature', outcome: 'rejected' });
    expect(wrong.body.error).toMatch(/X-Hub-Signature-256/);
    const missing = await sendGitHub(url, secret, 'pull_request', payload, { signature: null });
    expect(missing.status).toBe(401);
    const garbage = await sendGitHub(url, secret, 'pull_request', payload, { signature: 'sha256=zz' });
    expect(garbage.status).toBe(401);
    // Signed over other bytes than those sent.
    const tampered = await sendGitHub(url, secret, 'pull_request', payload, { raw: JSON.stringify({ ...payload, number: 2 }), signature: (await import('../fixtures/code-host-sender.ts')).signGitHub(secret, JSON.stringify(payload)) });
    expect(tampered.status).toBe(401);
    expect((await jobsOf(e.server, projectId, key)).length).toBe(before);
    // Anyone can send these: no row with the sender's text, only the count.
    const recorded = await deliveries(e.server, projectId);
    expect(recorded.length).toBe(recordedBefore);
    expect(e.server.services.triggers.receiver.refusals().find((r) => r.host === 'github' && r.code === 'invalid_signature')?.count).toBeGreaterThanOrEqual(4);
    // Nothing secret is recorded or answered.
    expect(JSON.stringify(recorded) + JSON.stringify(wrong.body)).not.toContain(secret);
  });

  it('malformed payloads get 400, unknown events 202 with a reason, a ping 200', async () => {
    const notJson = await sendGitHub(url, secret, 'pull_request', null, { raw: '{"action": "closed",' });
    expect(notJson.status).toBe(400);
    expect(notJson.body).toMatchObject({ code: 'invalid_payload', outcome: 'rejected' });
    const noPr = await sendGitHub(url, secret, 'pull_request', { action: 'closed', repository: { full_name: 'acme/api' } });
    expect(noPr.status).toBe(400);
    expect(noPr.body.error).toMatch(/pull_request is not an object/);
    const badNumber = await sendGitHub(url, secret, 'pull_request', { action: 'closed', pull_request: { number: 'x' }, repository: { full_name: 'acme/api' } });
    expect(badNumber.status).toBe(400);
    const array = await sendGitHub(url, secret, 'push', [1, 2, 3]);
    expect(array.status).toBe(400);
    const wrongType = await sendGitHub(url, secret, 'pull_request', {}, { contentType: 'text/plain', raw: 'hello' });
    expect(wrongType.status).toBe(400);

    const issues = await sendGitHub(url, secret, 'issues', { action: 'opened' });
    expect(issues.status).toBe(202);
    expect(issues.body).toMatchObject({ outcome: 'ignored' });
    expect(issues.body.reason).toMatch(/"issues" is not one Folio acts on/);
    const ping = await sendGitHub(url, secret, 'ping', { zen: 'Keep it logically awesome.', hook_id: 1 });
    expect(ping.status).toBe(200);
    expect(ping.body.outcome).toBe('ignored');

    // Form-encoded deliveries (a GitHub webhook option) are read too.
    const form = new URLSearchParams({ payload: JSON.stringify({ zen: 'x' }) }).toString();
    const formPing = await sendGitHub(url, secret, 'ping', null, { raw: form, contentType: 'application/x-www-form-urlencoded' });
    expect(formPing.status).toBe(200);

    // A closed, unmerged pull request, another repository, a push to another branch: nothing to do.
    const closed = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', { repo: 'acme/api', number: 5, title: 'x', base: { ref: 'main', sha: base }, head: { ref: 'x', sha: base } }));
    expect(closed.status).toBe(202);
    expect(closed.body.reason).toMatch(/closed without being merged/);
    const other = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', { repo: 'acme/other', number: 5, title: 'x', base: { ref: 'main', sha: base }, head: { ref: 'x', sha: base } }, { merged: true }));
    expect(other.status).toBe(202);
    expect(other.body.reason).toMatch(/not watched/);
    const branch = await sendGitHub(url, secret, 'push', githubPush('acme/api', { ref: 'refs/heads/dev', before: base, after: base, message: 'x' }));
    expect(branch.status).toBe(202);
    expect(branch.body.reason).toMatch(/not to the default branch/);
    // NUL in names from the payload never reaches the store (PostgreSQL would refuse it).
    const nulRef = await sendGitHub(url, secret, 'push', githubPush('acme/api', { ref: 'refs/heads/de\u0000v', before: base, after: base, message: 'x' }));
    expect(nulRef.status).toBe(202);
    const nulRepo = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', { repo: 'acme/o\u0000ther', number: 5, title: 'x', base: { ref: 'main', sha: base }, head: { ref: 'x', sha: base } }, { merged: true }));
    expect(nulRepo.status).toBe(202);
    expect(nulRepo.body.reason).toMatch(/acme\/other is not watched/);
    const notEnabled = await sendGitHub(url, secret, 'push', githubPush('acme/api', { ref: 'refs/heads/main', before: base, after: base, message: 'x' }));
    expect(notEnabled.status).toBe(202);
    expect(notEnabled.body.reason).toMatch(/does not start jobs on pushes/);
    expect((await deliveries(e.server, projectId)).filter((d) => d.outcome === 'ignored').length).toBeGreaterThanOrEqual(6);
  });

  it('a path filter that no changed file matches starts nothing; a label filter too', async () => {
    await configureTriggers(e.server, projectId, { repositories: [{ host: 'github', repositoryUrl: codeUrl, events: ['merged'], paths: ['docs/**', 'src/api/**'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const head = e.host.commit('acme/api', 'feature/readme', { 'README.md': '# Acme\n\nMore.\n' }, 'README');
    e.host.github.pulls.push({ number: 2, owner: 'acme', repo: 'api', head: 'feature/readme', base: 'main', title: 'README', body: '', draft: false, state: 'closed' });
    const before = (await jobsOf(e.server, projectId, key)).length;
    const pr = { repo: 'acme/api', number: 2, title: 'README', base: { ref: 'main', sha: base }, head: { ref: 'feature/readme', sha: head } };
    const sent = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', pr, { merged: true }));
    expect(sent.status).toBe(202);
    expect(sent.body.reason).toMatch(/No changed file matches the path filters docs\/\*\*, src\/api\/\*\*/);

    await configureTriggers(e.server, projectId, { repositories: [{ host: 'github', repositoryUrl: codeUrl, events: ['merged'], labels: ['docs-needed'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const unlabelled = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', pr, { merged: true }));
    expect(unlabelled.status).toBe(202);
    expect(unlabelled.body.reason).toMatch(/none of the labels docs-needed/);
    expect((await jobsOf(e.server, projectId, key)).length).toBe(before);

    e.llm.setResponder(sequence([]));
    // Text no store keeps (NUL) and control characters in the change are dropped from the prompt.
    const labelled = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', { ...pr, title: 'README\u0000 update\u0007', body: 'a\u0000b', labels: ['bug', 'Docs-Needed'] }, { merged: true }));
    expect(labelled.status, JSON.stringify(labelled.body)).toBe(201);
    await waitForJob(e.server, projectId, labelled.body.jobId, key);
    const [m] = await messagesOf(e.server, projectId, labelled.body.jobId, key);
    expect(m.prompt).toContain('Change: README update');
    expect(m.prompt).not.toMatch(/[\u0000\u0007]/);
  });

  it('with jobs started on opened pull requests, later pushes to it follow up on the same job', async () => {
    await configureTriggers(e.server, projectId, { repositories: [{ host: 'github', repositoryUrl: codeUrl, events: ['opened', 'merged'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const first = e.host.commit('acme/api', 'feature/config', { 'src/config.ts': 'export const port = 8080;\n' }, 'Add config');
    e.host.github.pulls.push({ number: 3, owner: 'acme', repo: 'api', head: 'feature/config', base: 'main', title: 'Config file', body: '', draft: false, state: 'open' });
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'config.mdx', content: '---\ntitle: Config\n---\n\nPort 8080.\n' }),
        toolCall('finish', { title: 'Document config', summary: 'Added a config page.' }),
        toolCall('write_file', { path: 'config.mdx', content: '---\ntitle: Config\n---\n\nPort 8080, host 0.0.0.0.\n' }),
        toolCall('finish', { title: 'Document host', summary: 'Added the host setting.' }),
      ]),
    );
    const pr = { repo: 'acme/api', number: 3, title: 'Config file', body: 'Adds settings.', base: { ref: 'main', sha: base }, head: { ref: 'feature/config', sha: first } };
    const opened = await sendGitHub(url, secret, 'pull_request', githubPullRequest('opened', pr));
    expect(opened.status, JSON.stringify(opened.body)).toBe(201);
    const jobId = opened.body.jobId;
    const job = await waitForJob(e.server, projectId, jobId, key);
    expect(job.trigger.kind).toBe('pull_request_opened');
    expect(job.prLink).not.toBeNull();

    const second = e.host.commit('acme/api', 'feature/config', { 'src/config.ts': 'export const port = 8080;\nexport const host = "0.0.0.0";\n' }, 'Add host');
    const pushed = await sendGitHub(url, secret, 'pull_request', githubPullRequest('synchronize', { ...pr, head: { ref: 'feature/config', sha: second } }, { before: first, after: second }));
    expect(pushed.status, JSON.stringify(pushed.body)).toBe(200);
    expect(pushed.body).toMatchObject({ outcome: 'followed_up', jobId });
    const after = await waitForJob(e.server, projectId, jobId, key, (j: any) => j.status !== 'active');
    await waitForJob(e.server, projectId, jobId, key, () => true);
    const messages = await messagesOf(e.server, projectId, jobId, key);
    expect(messages).toHaveLength(2);
    expect(messages[1].prompt).toContain('updated with new commits (pull request #3)');
    expect(messages[1].prompt).toContain('+export const host = "0.0.0.0";');
    // Only the new commits: the first commit's line is context at most, not an addition.
    expect(messages[1].prompt).not.toContain('+export const port = 8080;');
    expect(after.prLink).toBe(job.prLink);
    expect(e.host.github.pulls.filter((p) => p.repo === 'docs' && p.head === job.source.ref)).toHaveLength(1);

    // The merge of the same pull request follows up too, instead of starting a second job.
    const merged = await sendGitHub(url, secret, 'pull_request', githubPullRequest('closed', { ...pr, head: { ref: 'feature/config', sha: second } }, { merged: true }));
    expect(merged.body).toMatchObject({ outcome: 'followed_up', jobId });
    await waitForJob(e.server, projectId, jobId, key, (j: any) => j.status !== 'active');
  });

  it('a push to the default branch starts a job when enabled, reading the comparison', async () => {
    await configureTriggers(e.server, projectId, { repositories: [{ host: 'github', repositoryUrl: codeUrl, events: ['push'], paths: ['src/**'] }] });
    secret = (await e.server.services.triggers.store.secret(projectId))!;
    const before = e.host.revParse('acme/api', 'main');
    const after = e.host.commit('acme/api', 'main', { 'src/log.ts': 'export const level = "info";\n' }, 'Add logging');
    e.llm.setResponder(sequence([]));
    const sent = await sendGitHub(url, secret, 'push', githubPush('acme/api', { ref: 'refs/heads/main', before, after, message: 'Add logging\n\nLong body', pusher: 'dev', files: { added: ['src/log.ts'] } }));
    expect(sent.status, JSON.stringify(sent.body)).toBe(201);
    const job = await waitForJob(e.server, projectId, sent.body.jobId, key);
    expect(job.trigger).toEqual({ kind: 'push', host: 'github', repository: codeUrl, url: `${codeUrl}/compare/${before}...${after}` });
    const [m] = await messagesOf(e.server, projectId, job.id, key);
    expect(m.prompt).toContain('pushed to the default branch');
    expect(m.prompt).toContain('A src/log.ts');
    expect(e.host.github.requests.some((r) => r.path === `/repos/acme/api/compare/${before}...${after}`)).toBe(true);
    expect(e.host.github.invalid()).toEqual([]);
  });

  it('a body over the limit gets 413; an unknown project 404; a project without a secret 404', async () => {
    // GitHub's signature covers the whole body, so at most FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT (1 MiB)
    // of it is read before it can be checked.
    const padded = await sendGitHub(url, secret, 'ping', { zen: 'z'.repeat(1000 * 1024) });
    expect(padded.status).toBe(200);
    const big = await sendGitHub(url, secret, 'push', null, { raw: 'x'.repeat(1024 * 1024 + 1), deliveryId: 'delivery-too-large' });
    expect(big.status).toBe(413);
    // Answered like every other delivery, with the API's error body too.
    const reason = 'The delivery is larger than FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT (1048576 bytes), the most Folio reads before its X-Hub-Signature-256 can be checked.';
    expect(big.body).toEqual({ outcome: 'rejected', reason, deliveryId: 'delivery-too-large', error: reason, code: 'payload_too_large' });
    // Counted, not recorded: its signature could not be checked.
    expect((await deliveries(e.server, projectId)).some((d) => d.deliveryId === 'delivery-too-large')).toBe(false);
    const unknown = await sendGitHub(endpoint(e.server, 'prj_nope', 'github'), secret, 'ping', {}, { deliveryId: 'delivery-nowhere' });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: 'project_not_found', outcome: 'rejected', deliveryId: 'delivery-nowhere', error: 'Project "prj_nope" does not exist.' });
    const bare = await e.server.createProject({ repositoryUrl: `${e.host.origin}/acme/docs.git` });
    const none = await sendGitHub(endpoint(e.server, bare, 'github'), secret, 'ping', {});
    expect(none.status).toBe(404);
    expect(none.body).toMatchObject({ code: 'triggers_not_configured', outcome: 'rejected' });
  });
});
