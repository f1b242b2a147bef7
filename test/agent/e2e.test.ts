// End to end through the HTTP API with the real agent: fake Chat Completions server, git over smart
// HTTP, GitHub / GitLab REST fakes checked against their API descriptions, and push-only.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequence, toolCall } from '../fixtures/fake-openai.ts';
import { createBareRepo, gitSync } from '../fixtures/git-server.ts';
import { jobEvents, startE2E, TOKEN, waitForJob, type E2E } from './e2e-helpers.ts';
import { eventually } from '../helpers/handlers.ts';

const DOCS = {
  'docs.json': JSON.stringify({ name: 'Acme', navigation: [{ group: 'Start', pages: ['index'] }] }, null, 2) + '\n',
  'index.mdx': '---\ntitle: Home\ndescription: Start here\n---\n\n# Acme CLI\n\nRun `acme build`.\n',
};

describe('agent jobs end to end', () => {
  let e: E2E;
  beforeAll(async () => {
    e = await startE2E();
  });
  afterAll(async () => {
    await e?.close();
  });

  it('GitHub: job edits files, pushes the branch, opens exactly one PR; a follow-up adds a commit and updates it', async () => {
    const url = e.host.createRepo('acme/docs', DOCS);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', baseBranch: 'main', draftPrs: true });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(
      sequence([
        toolCall('list_files', {}),
        toolCall('read_file', { path: 'index.mdx' }),
        toolCall('edit_file', { path: 'index.mdx', old_string: 'Run `acme build`.', new_string: 'Run `acme build`.\n\nUse `--dry-run` to preview.' }),
        toolCall('finish', { title: 'Document --dry-run', summary: 'Added the --dry-run flag to the home page.' }),
      ]),
    );
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Document the new --dry-run flag' } });
    expect(created.status).toBe(201);
    const jobId = created.body.id;
    const job = await waitForJob(e.server, projectId, jobId, key);
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');
    expect(job.prLink).toBe(`${e.host.origin}/acme/docs/pull/1`);
    const branch = job.source.ref;
    expect(branch).toBe(`folio/${jobId}`);
    expect(e.host.show('acme/docs', branch, 'index.mdx')).toContain('Use `--dry-run` to preview.');
    expect(e.host.log('acme/docs', branch)).toEqual(['Document --dry-run', 'Initial docs']);
    expect(e.host.github.pulls).toHaveLength(1);
    expect(e.host.github.pulls[0]).toMatchObject({ head: branch, base: 'main', title: 'Document --dry-run', draft: true });
    expect(e.host.github.invalid()).toEqual([]);
    // The model saw the tools and the docs framework, and the key for the compatible server was sent.
    expect(e.llm.requests[0].tools?.map((t) => t.function.name).sort()).toEqual(
      ['delete_file', 'edit_file', 'finish', 'list_files', 'move_file', 'read_file', 'search', 'write_file'],
    );
    expect(JSON.stringify(e.llm.requests[0].messages)).toContain('docs.json');
    expect(e.llm.authHeaders[0]).toBe('Bearer sk-compat-secret-key');

    const events = await jobEvents(e.server, projectId, jobId, key);
    const types = events.map((x) => x.type);
    for (const t of ['workspace', 'tool_call', 'tool_result', 'usage', 'validation', 'commit', 'push', 'pull_request']) expect(types).toContain(t);
    const all = JSON.stringify(events) + JSON.stringify(e.llm.requests);
    expect(all).not.toContain(TOKEN);
    expect(all).not.toContain(Buffer.from(`x-access-token:${TOKEN}`).toString('base64'));

    // Follow-up: same branch, new commit, same PR with an updated description; the model sees the history.
    const before = e.llm.requests.length;
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'flags.mdx', content: '---\ntitle: Flags\n---\n\n## --dry-run\n\nPreview without writing.\n' }),
        toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index",\n        "flags"' }),
        toolCall('finish', { title: 'Add a flags page', summary: 'New flags page linked from navigation.' }),
      ]),
    );
    const fu = await e.server.api('POST', `/v2/agent/${projectId}/job/${jobId}/message`, { key, body: { prompt: 'Also add a flags page' } });
    expect(fu.status).toBe(200);
    const after = await waitForJob(e.server, projectId, jobId, key, (j: any) => j.status !== 'active' && e.llm.requests.length > before);
    expect(after.status).toBe('completed');
    expect(after.prLink).toBe(job.prLink);
    expect(e.host.log('acme/docs', branch)).toEqual(['Add a flags page', 'Document --dry-run', 'Initial docs']);
    expect(JSON.parse(e.host.show('acme/docs', branch, 'docs.json')!).navigation[0].pages).toEqual(['index', 'flags']);
    expect(e.host.github.pulls).toHaveLength(1);
    expect(e.host.github.pulls[0].body).toContain('Added the --dry-run flag');
    expect(e.host.github.pulls[0].body).toContain('New flags page');
    expect(e.host.github.invalid()).toEqual([]);
    const followUpPrompt = JSON.stringify(e.llm.requests[before].messages);
    expect(followUpPrompt).toContain('Document the new --dry-run flag');
    expect(followUpPrompt).toContain('Added the --dry-run flag to the home page.');
    expect(followUpPrompt).toContain('Also add a flags page');
  });

  it('nothing changed: completed with prLink null and the agent summary', async () => {
    const url = e.host.createRepo('acme/nochange', DOCS);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(sequence([toolCall('search', { pattern: 'dry-run' }), toolCall('finish', { title: 'Nothing to do', summary: 'Already documented.' })]));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Check the docs' } });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    expect(job.status).toBe('completed');
    expect(job.prLink).toBeNull();
    expect(e.host.log('acme/nochange', job.source.ref)).toBeNull();
    expect(e.host.github.pulls.filter((p) => p.repo === 'nochange')).toHaveLength(0);
  });

  it('GitLab: opens a merge request and reuses it', async () => {
    const url = e.host.createRepo('group/sub/docs', DOCS);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'gitlab' });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'new.md', content: '# New\n' }),
        toolCall('edit_file', { path: 'docs.json', old_string: '"index"', new_string: '"index", "new"' }),
        toolCall('finish', { title: 'Add new page', summary: 'Added.' }),
      ]),
    );
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add a page' } });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    expect(job.error).toBeNull();
    expect(job.prLink).toBe(`${e.host.origin}/group/sub/docs/-/merge_requests/1`);
    expect(e.host.gitlab.mergeRequests).toHaveLength(1);
    expect(e.host.gitlab.mergeRequests[0]).toMatchObject({ project: 'group/sub/docs', source_branch: job.source.ref, target_branch: 'main', title: 'Add new page' });
    expect(e.host.show('group/sub/docs', job.source.ref, 'new.md')).toBe('# New\n');

    e.llm.setResponder(sequence([toolCall('write_file', { path: 'new.md', content: '# New\n\nMore.\n' }), toolCall('finish', { title: 'More', summary: 'Expanded the page.' })]));
    const n = e.llm.requests.length;
    await e.server.api('POST', `/v2/agent/${projectId}/job/${job.id}/message`, { key, body: { prompt: 'Expand it' } });
    const after = await waitForJob(e.server, projectId, job.id, key, (j: any) => j.status !== 'active' && e.llm.requests.length > n);
    expect(after.prLink).toBe(job.prLink);
    expect(e.host.gitlab.mergeRequests).toHaveLength(1);
    expect(e.host.gitlab.mergeRequests[0].description).toContain('Expanded the page.');
    expect(e.host.gitlab.invalid()).toEqual([]);
  });

  it('push-only to a local bare repository', async () => {
    const bareRoot = mkdtempSync(path.join(os.tmpdir(), 'folio-bare-'));
    try {
      const bare = path.join(bareRoot, 'docs.git');
      createBareRepo(bare, { 'mkdocs.yml': 'site_name: Acme\nnav:\n  - Home: index.md\n', 'docs/index.md': '# Home\n' });
      const projectId = await e.server.createProject({ repositoryUrl: bare, codeHost: 'none' });
      const key = await e.server.createKey(projectId);
      e.llm.setResponder(sequence([toolCall('write_file', { path: 'docs/usage.md', content: '# Usage\n' }), toolCall('finish', { title: 'Usage page', summary: 'Added usage.' })]));
      const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Add usage' } });
      const job = await waitForJob(e.server, projectId, created.body.id, key);
      expect(job.status).toBe('completed');
      expect(job.prLink).toBeNull();
      expect(gitSync(['show', `${job.source.ref}:docs/usage.md`], bare)).toBe('# Usage\n');
      expect(JSON.stringify(e.llm.requests.at(-2)?.messages)).toContain('MkDocs');
    } finally {
      rmSync(bareRoot, { recursive: true, force: true });
    }
  });

  it('guardrail and provider failures end the job failed with their code', async () => {
    const url = e.host.createRepo('acme/fail', DOCS);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const key = await e.server.createKey(projectId);
    e.llm.setResponder(() => toolCall('read_file', { path: 'index.mdx' }));
    const a = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Loop forever' } });
    const failed = await waitForJob(e.server, projectId, a.body.id, key);
    expect(failed.status).toBe('failed');
    expect(failed.error.code).toBe('no_progress');

    e.llm.setResponder(() => ({ status: 400, error: 'This model does not support tools' }));
    const b = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Anything' } });
    const bad = await waitForJob(e.server, projectId, b.body.id, key);
    expect(bad.status).toBe('failed');
    expect(bad.error.code).toBe('model_error');
    expect(bad.error.message).toContain('This model does not support tools');
    expect(e.host.github.pulls.filter((p) => p.repo === 'fail')).toHaveLength(0);
  });

  it('archiving an active job stops the run and removes its worktree', async () => {
    const url = e.host.createRepo('acme/archive', DOCS);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const key = await e.server.createKey(projectId);
    let hung = 0;
    e.llm.setResponder(() => (hung++ === 0 ? toolCall('write_file', { path: 'a.md', content: 'a\n' }) : { hang: true }));
    const n = e.llm.requests.length;
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Work slowly' } });
    await e.llm.waitForRequests(n + 2);
    const archive = await e.server.services.jobs.archive(projectId, created.body.id);
    expect(archive).toBeTruthy();
    const job = await waitForJob(e.server, projectId, created.body.id, key, (j) => j.status === 'archived');
    expect(job.archivedAt).not.toBeNull();
    const wt = path.join(e.server.dataDir, 'worktrees', created.body.id);
    const { existsSync } = await import('node:fs');
    // The run stops and gives its worktree back (no timing asserted: eventually() waits generously).
    await eventually(async () => !existsSync(wt), 30_000);
    expect(e.host.log('acme/archive', job.source.ref)).toBeNull();
  });
});
