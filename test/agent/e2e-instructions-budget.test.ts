// The team's instructions and the spending limits end to end: a real Folio server with the real agent
// handler, git over smart HTTP with the GitHub API, and the local Chat Completions server, which records
// every request the model got.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sequence, toolCall, type ChatRequest } from '../fixtures/fake-openai.ts';
import { jobEvents, startE2E, waitForJob, type E2E } from './e2e-helpers.ts';

const PRICED = 'openai-compatible/test-model';
const FREE = 'openai-compatible/free-model';
const DOCS_RULE = 'DOCS-RULE-7: end every page under docs/ with a "See also" list.';
const ROOT_RULE = 'ROOT-RULE: headings in sentence case.';

const REPO = {
  'AGENTS.md': `# Agents\n\n${ROOT_RULE}\n`,
  'CLAUDE.md': `${'Long conventions line. '.repeat(1000)}LAST-WORDS-OF-CLAUDE\n`,
  'docs/AGENTS.md': `${DOCS_RULE}\n`,
  'docs/guide.md': '# Guide\n\nInstall it.\n',
  'blog/post.md': '# Post\n\nNews.\n',
};

describe('the team\'s instructions and spending limits, end to end', () => {
  let e: E2E;
  beforeAll(async () => {
    // Each model call is 100 input + 20 output tokens (the local server's default): $0.12 at $1000 per million.
    e = await startE2E({ FOLIO_MODEL_PRICES: `${PRICED}=1000:1000`, FOLIO_MODELS: FREE, FOLIO_WORKERS: '1' });
  });
  afterAll(async () => {
    await e?.close();
  });

  const requestsFrom = (start: number): ChatRequest[] => e.llm.requests.slice(start);
  const text = (reqs: ChatRequest[]) => JSON.stringify(reqs.map((r) => r.messages));

  it('docs/AGENTS.md reaches the model for a change under docs/ and not for one elsewhere; root files are in the prompt, cut when too long', async () => {
    const url = e.host.createRepo('acme/rules', REPO);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', instructions: 'PROJECT-RULE: say "sign in", never "login".' });
    const key = await e.server.createKey(projectId);

    let start = e.llm.requests.length;
    e.llm.setResponder(
      sequence([
        toolCall('read_file', { path: 'docs/guide.md' }),
        toolCall('edit_file', { path: 'docs/guide.md', old_string: 'Install it.', new_string: 'Install it.\n\n## See also\n\n- [Home](../README.md)' }),
        toolCall('finish', { title: 'Add see also', summary: 'Added a See also list.' }),
      ]),
    );
    const docsJob = (await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Improve the guide' } })).body;
    const done = await waitForJob(e.server, projectId, docsJob.id, key);
    expect(done.error).toBeNull();
    const docsRequests = requestsFrom(start);
    const system = JSON.stringify(docsRequests[0].messages.find((m) => m.role === 'system'));
    // Root files and the project's setting in the system prompt, below Folio's rules; CLAUDE.md cut.
    expect(system).toContain(ROOT_RULE);
    expect(system).toContain('PROJECT-RULE');
    expect(system).toContain("The team's conventions");
    expect(system.indexOf("The team's conventions")).toBeGreaterThan(system.indexOf('## How to work'));
    expect(system).toContain('[cut: the file has');
    expect(system).not.toContain('LAST-WORDS-OF-CLAUDE');
    expect(system).not.toContain(DOCS_RULE);
    // The first request has no tool results yet; the one after reading docs/guide.md carries docs/AGENTS.md, once.
    expect(text(docsRequests.slice(0, 1))).not.toContain('DOCS-RULE-7');
    const toolResults = docsRequests.at(-1)!.messages.filter((m) => m.role === 'tool').map((m) => JSON.stringify(m.content));
    expect(toolResults[0]).toContain('DOCS-RULE-7');
    expect(toolResults.filter((t) => t.includes('DOCS-RULE-7'))).toHaveLength(1);

    const events = await jobEvents(e.server, projectId, docsJob.id, key);
    const given = events.filter((x) => x.type === 'instructions').flatMap((x) => x.data.files);
    expect(given).toEqual([
      { path: 'AGENTS.md', scope: '', cut: false },
      { path: 'Folio project settings', scope: '', cut: false },
      { path: 'CLAUDE.md', scope: '', cut: true },
      { path: 'docs/AGENTS.md', scope: 'docs', cut: false },
    ]);
    const pr = e.host.github.pulls.find((p) => p.head === done.source.ref)!;
    expect(pr.body).toContain("Followed the team's instructions in `AGENTS.md`, `Folio project settings`, `CLAUDE.md`, `docs/AGENTS.md`.");

    // A change elsewhere never sees docs/AGENTS.md.
    start = e.llm.requests.length;
    e.llm.setResponder(
      sequence([
        toolCall('read_file', { path: 'blog/post.md' }),
        toolCall('edit_file', { path: 'blog/post.md', old_string: 'News.', new_string: 'Big news.' }),
        toolCall('finish', { title: 'Blog', summary: 'Edited the post.' }),
      ]),
    );
    const blogJob = (await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Edit the post' } })).body;
    expect((await waitForJob(e.server, projectId, blogJob.id, key)).error).toBeNull();
    const blogRequests = requestsFrom(start);
    expect(blogRequests.length).toBe(3);
    expect(text(blogRequests)).not.toContain('DOCS-RULE-7');
    expect(text(blogRequests)).toContain(ROOT_RULE);
    const blogEvents = await jobEvents(e.server, projectId, blogJob.id, key);
    expect(blogEvents.filter((x) => x.type === 'instructions').flatMap((x) => x.data.files.map((f: { path: string }) => f.path))).not.toContain('docs/AGENTS.md');
  });

  it('a job at its dollar limit stops before the next model call: budget_exceeded, the work pushed, the spend in its events', async () => {
    const url = e.host.createRepo('acme/spend', { 'README.md': '# Docs\n' });
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const key = await e.server.createKey(projectId);
    const start = e.llm.requests.length;
    e.llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'a.md', content: '# A\n' }),
        toolCall('write_file', { path: 'b.md', content: '# B\n' }),
        toolCall('read_file', { path: 'a.md' }),
        toolCall('write_file', { path: 'never.md', content: '# Never\n' }),
      ]),
    );
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Write pages', maxCostUsd: 0.3 } });
    expect(created.status, created.text).toBe(201);
    expect(created.body.limit).toEqual({ maxCostUsd: 0.3, maxTokens: null });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    // $0.12 a call: after three calls ($0.36) the fourth is not made.
    expect(requestsFrom(start)).toHaveLength(3);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('budget_exceeded');
    expect(job.error.message).toContain('spending limit of $0.30');
    expect(job.error.message).toContain('$0.36');
    expect(job.usage).toMatchObject({ totalTokens: 360, estimatedCostUsd: 0.36 });
    // What it did is on its branch; nothing more.
    expect(e.host.show('acme/spend', job.source.ref, 'a.md')).toBe('# A\n');
    expect(e.host.show('acme/spend', job.source.ref, 'b.md')).toBe('# B\n');
    expect(e.host.show('acme/spend', job.source.ref, 'never.md')).toBeNull();
    const events = await jobEvents(e.server, projectId, job.id, key);
    const stop = events.find((x) => x.type === 'budget_exceeded')!;
    expect(stop.data).toMatchObject({ costUsd: 0.36, maxCostUsd: 0.3, inputTokens: 300, outputTokens: 60 });
    const types = events.map((x) => x.type);
    expect(types.indexOf('push')).toBeGreaterThan(types.indexOf('budget_exceeded'));
    expect(events.find((x) => x.type === 'error')!.data).toMatchObject({ code: 'budget_exceeded' });
    expect(job.files.map((f: { path: string }) => f.path).sort()).toEqual(['a.md', 'b.md']);

    // A follow-up on the job stops before its first call: the limit is the job's.
    const before = e.llm.requests.length;
    expect((await e.server.api('POST', `/v2/agent/${projectId}/job/${job.id}/message`, { key, body: { prompt: 'Go on' } })).status).toBe(200);
    const again = await waitForJob(e.server, projectId, job.id, key, (j: any) => j.status !== 'active');
    expect(again.error.code).toBe('budget_exceeded');
    expect(e.llm.requests.length).toBe(before);
  });

  it('without a price the limit is in tokens', async () => {
    const url = e.host.createRepo('acme/tokens', { 'README.md': '# Docs\n' });
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', defaultMaxTokens: 250 });
    const key = await e.server.createKey(projectId);
    const start = e.llm.requests.length;
    e.llm.setResponder(sequence([toolCall('write_file', { path: 'a.md', content: '# A\n' }), toolCall('list_files', {}), toolCall('list_files', { path: '.' }), toolCall('list_files', {})]));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Write', model: FREE } });
    expect(created.body.limit).toEqual({ maxCostUsd: null, maxTokens: 250 });
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    // 120 tokens a call: 360 after three, over 250.
    expect(requestsFrom(start)).toHaveLength(3);
    expect(job.error.code).toBe('budget_exceeded');
    expect(job.error.message).toContain('spending limit of 250 tokens');
    expect(job.usage.estimatedCostUsd).toBeNull();
    expect(e.host.show('acme/tokens', job.source.ref, 'a.md')).toBe('# A\n');
  });
});
