// Pull requests a docs team can merge: the docs-aware checks, the PR description, the job's files and
// usage, end to end through the HTTP API with the real agent, a scripted Chat Completions model and
// the fake code hosts (GitHub and GitLab), one repository per docs framework.
import http from 'node:http';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply, Responder } from '../fixtures/fake-openai.ts';
import { gitSync } from '../fixtures/git-server.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS, type DocsSite } from '../fixtures/docs-sites.ts';
import { jobEvents, startE2E, waitForJob, type E2E } from './e2e-helpers.ts';

const PUBLIC_URL = 'https://folio.example.com';

let e: E2E;
beforeAll(async () => {
  e = await startE2E({ FOLIO_PUBLIC_URL: PUBLIC_URL, FOLIO_MODEL_PRICES: 'openai-compatible/test-model=2:8' });
});
afterAll(async () => {
  await e?.close();
});

const call = (name: string, args: Record<string, unknown>): FakeReply => ({ toolCalls: [{ name, args }] });
const finish = (title: string, summary: string) => call('finish', { title, summary });

/** Plays `replies` in order (then finishes), each with its own token counts, and sums what it reported. */
function scripted(replies: FakeReply[]): { responder: Responder; tokens: { input: number; output: number } } {
  const tokens = { input: 0, output: 0 };
  let i = 0;
  const responder: Responder = () => {
    const base = replies[i] ?? finish('Done', 'Script ended.');
    const usage = { prompt: 1000 + i * 37, completion: 50 + i * 3 };
    i++;
    tokens.input += usage.prompt;
    tokens.output += usage.completion;
    return { ...(base as object), usage } as FakeReply;
  };
  return { responder, tokens };
}

/** User messages the model was sent (the last request holds the whole conversation). */
function toldToModel(): string {
  const last = e.llm.requests.at(-1)!;
  return last.messages
    .filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');
}

async function project(repo: string, files: Record<string, string>, opts: { codeHost?: 'github' | 'gitlab' | 'none'; checks?: 'strict' | 'warn' | 'off' } = {}) {
  const url = e.host.createRepo(repo, files);
  // Folio's own checks only: the site's build has its own suite (test/site-build/).
  const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: opts.codeHost ?? 'github', checks: opts.checks, build: 'off' });
  const key = await e.server.createKey(projectId);
  return { projectId, key };
}

async function runJob(p: { projectId: string; key: string }, prompt: string, replies: FakeReply[]) {
  const s = scripted(replies);
  e.llm.setResponder(s.responder);
  const created = await e.server.api('POST', `/v2/agent/${p.projectId}/job`, { key: p.key, body: { prompt } });
  expect(created.status).toBe(201);
  const job = await waitForJob(e.server, p.projectId, created.body.id, p.key);
  return { job, tokens: s.tokens };
}

async function followUp(p: { projectId: string; key: string }, jobId: string, prompt: string, replies: FakeReply[]) {
  const s = scripted(replies);
  e.llm.setResponder(s.responder);
  const n = e.llm.requests.length;
  const res = await e.server.api('POST', `/v2/agent/${p.projectId}/job/${jobId}/message`, { key: p.key, body: { prompt } });
  expect(res.status).toBe(200);
  const job = await waitForJob(e.server, p.projectId, jobId, p.key, (j: any) => j.status !== 'active' && e.llm.requests.length > n);
  return { job, tokens: s.tokens };
}

/** `git diff --numstat -M` of the pushed branch against where it forked, as the job's `files` shape. */
function numstat(repo: string, branch: string) {
  const out = gitSync(['diff', '--numstat', '-M', `main...${branch}`], path.join(e.host.root, `${repo}.git`));
  return out
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((l) => {
      const [a, d, p] = l.split('\t');
      return { path: p.includes(' => ') ? p.replace(/^(.*)\{(.*) => (.*)\}(.*)$/, '$1$3$4').replace(/^.* => /, '') : p, additions: Number(a), deletions: Number(d) };
    })
    .sort((x, y) => x.path.localeCompare(y.path));
}

const NEW_PAGE = '---\ntitle: Rate limits\n---\n\n## Per key\n\nSee [tokens](/guides/auth#api-tokens) and [the limits API](/api/limits).\n';

/** What the framework-wide cases need to know of each framework's site. */
interface FrameworkCase {
  name: string;
  site: DocsSite;
  /** An edit of the page with the broken link already on the base branch that keeps that link's line. */
  touchBrokenPage: { old_string: string; new_string: string };
  /** Tool calls that add a page with one broken link (`href`, on `line`) and list it in the navigation. */
  brokenNewPage: { calls: FakeReply[]; page: string; line: number; href: string };
}

const mintlifyNav = JSON.parse(MINTLIFY.files['docs.json']);
mintlifyNav.navigation.tabs[0].groups[0].pages.push('limits');

const FRAMEWORKS: FrameworkCase[] = [
  {
    name: 'Mintlify',
    site: MINTLIFY,
    touchBrokenPage: { old_string: 'Run `acme init`.', new_string: 'Run `acme init --yes`.' },
    brokenNewPage: {
      calls: [
        call('write_file', { path: 'docs.json', content: JSON.stringify(mintlifyNav) }),
        call('write_file', { path: 'limits.mdx', content: '---\ntitle: Limits\n---\n\nSee [the API](/api/limits).\n' }),
      ],
      page: 'limits.mdx',
      line: 5,
      href: '/api/limits',
    },
  },
  {
    name: 'Docusaurus',
    site: DOCUSAURUS,
    touchBrokenPage: { old_string: '## Details {#custom-id}', new_string: '## Details {#custom-id}\n\nTokens expire after 90 days.' },
    brokenNewPage: {
      calls: [
        call('edit_file', { path: 'sidebars.js', old_string: "'intro',", new_string: "'intro',\n    'limits'," }),
        call('write_file', { path: 'docs/limits.md', content: '---\ntitle: Limits\n---\n\nSee [the API](/docs/api/limits).\n' }),
      ],
      page: 'docs/limits.md',
      line: 5,
      href: '/docs/api/limits',
    },
  },
  {
    name: 'MkDocs',
    site: MKDOCS,
    touchBrokenPage: { old_string: '## Café Über', new_string: '## Café Über\n\nAccents are fine.' },
    brokenNewPage: {
      calls: [
        call('edit_file', { path: 'mkdocs.yml', old_string: '  - Home: index.md\n', new_string: '  - Home: index.md\n  - Limits: limits.md\n' }),
        call('write_file', { path: 'docs/limits.md', content: '# Limits\n\nSee [the API](api/limits.md).\n' }),
      ],
      page: 'docs/limits.md',
      line: 3,
      href: 'api/limits.md',
    },
  },
];
/** [name, case] rows for it.each, so test names read "Docusaurus: …". */
const BY_NAME = FRAMEWORKS.map((f) => [f.name, f] as const);

describe('docs checks before the pull request', () => {
  it('Mintlify: a new page without navigation and with a broken link is sent back, fixed, and the PR says so; a follow-up updates it in place', async () => {
    const p = await project('acme/mint', MINTLIFY.files);
    const config = JSON.parse(MINTLIFY.files['docs.json']);
    config.navigation.tabs[0].groups[1].pages.push('guides/rate-limits');
    const { job, tokens } = await runJob(p, 'Document rate limits', [
      call('write_file', { path: 'guides/rate-limits.mdx', content: NEW_PAGE }),
      finish('Document rate limits', 'Added a rate limits page.'),
      // Told of both problems: list the page and fix the link.
      call('write_file', { path: 'docs.json', content: JSON.stringify(config, null, 2) + '\n' }),
      call('edit_file', { path: 'guides/rate-limits.mdx', old_string: '/api/limits', new_string: '/guides/webhooks' }),
      finish('Document rate limits', 'Added a rate limits page, listed under Guides.'),
    ]);
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');
    const told = toldToModel();
    expect(told).toContain('New page guides/rate-limits.mdx is not in the navigation: add "guides/rate-limits" to docs.json "navigation"');
    expect(told).toContain('Link "/api/limits" does not lead to a page');
    expect(JSON.parse(e.host.show('acme/mint', job.source.ref, 'docs.json')!).navigation.tabs[0].groups[1].pages).toContain('guides/rate-limits');

    // Events say which checks ran, round by round.
    const events = await jobEvents(e.server, p.projectId, job.id, p.key);
    const checks = events.filter((x) => x.type === 'checks').map((x) => x.data);
    expect(checks.map((c) => [c.round, c.ok, c.problemCount])).toEqual([
      [1, false, 2],
      [2, true, 0],
    ]);
    expect(checks[0].ran).toEqual(['links', 'anchors', 'assets', 'navigation', 'redirects']);
    expect(checks[0].mode).toBe('warn');

    // The PR description: summary, instruction, files, checks, link back to the job.
    const pr = e.host.github.pulls.find((x) => x.repo === 'mint')!;
    expect(pr.body).toContain('## Summary\n\nAdded a rate limits page, listed under Guides.');
    expect(pr.body).toContain('**Prompt**\n\n> Document rate limits');
    expect(pr.body).toMatch(/## Files changed \(2, \+\d+ −\d+\)/);
    expect(pr.body).toContain('| `guides/rate-limits.mdx` | added |');
    expect(pr.body).toContain('## Docs checks');
    expect(pr.body).toContain('ran: links, anchors, assets, navigation, redirects');
    expect(pr.body).toContain('✅ No problems introduced by this job.');
    expect(pr.body).toContain(`[Open job \`${job.id}\` in Folio](${PUBLIC_URL}/projects/${p.projectId}/jobs/${job.id})`);
    expect(e.host.github.invalid()).toEqual([]);

    // files = git diff --numstat of the pushed branch; usage = what the model reported.
    expect(job.files.map((f: any) => ({ path: f.path, additions: f.additions, deletions: f.deletions })).sort((x: any, y: any) => x.path.localeCompare(y.path))).toEqual(
      numstat('acme/mint', job.source.ref),
    );
    expect(job.files.find((f: any) => f.path === 'guides/rate-limits.mdx').status).toBe('added');
    expect(job.usage).toEqual({
      inputTokens: tokens.input,
      outputTokens: tokens.output,
      totalTokens: tokens.input + tokens.output,
      estimatedCostUsd: Math.round(tokens.input * 2 + tokens.output * 8) / 1e6,
    });

    // The diff and checks the dashboard shows, from the store.
    const changes = await e.server.api('GET', `/v2/agent/${p.projectId}/job/${job.id}/changes`, { key: p.key });
    expect(changes.status).toBe(200);
    expect(changes.body.diff).toContain('diff --git a/guides/rate-limits.mdx b/guides/rate-limits.mdx');
    expect(changes.body.diff).toContain('+## Per key');
    expect(changes.body.diffTruncated).toBe(false);
    expect(changes.body.checks).toMatchObject({ mode: 'warn', framework: 'mintlify', problems: [], pagesChecked: 1 });
    expect(changes.body.headSha).toBe(gitSync(['rev-parse', job.source.ref], path.join(e.host.root, 'acme/mint.git')).trim());

    // A follow-up rewrites the same description: both instructions, the new files, the checks.
    const second = await followUp(p, job.id, 'Also mention the burst limit', [
      call('edit_file', { path: 'guides/rate-limits.mdx', old_string: '## Per key', new_string: '## Per key\n\nBursts of 20 requests are allowed.' }),
      finish('Burst limit', 'Mentioned the burst limit.'),
    ]);
    expect(second.job.status).toBe('completed');
    expect(e.host.github.pulls.filter((x) => x.repo === 'mint')).toHaveLength(1);
    expect(pr.body).toContain('## Summary\n\nMentioned the burst limit.');
    expect(pr.body).toContain('**Follow-up 1**\n\n> Also mention the burst limit\n\n**Agent:** **Burst limit** — Mentioned the burst limit.');
    expect(pr.body).toContain('**Prompt**\n\n> Document rate limits');
    expect(pr.body).toContain('✅ No problems introduced by this job.');
    expect(e.host.github.requests.filter((r) => r.method === 'PATCH' && r.path.endsWith('/pulls/' + pr.number)).length).toBeGreaterThanOrEqual(1);
    expect(second.job.usage.inputTokens).toBe(tokens.input + second.tokens.input);
    expect(second.job.files.map((f: any) => ({ path: f.path, additions: f.additions, deletions: f.deletions })).sort((x: any, y: any) => x.path.localeCompare(y.path))).toEqual(
      numstat('acme/mint', job.source.ref),
    );

    // The project's usage per day and per job.
    const usage = await e.server.api('GET', `/v2/agent/${p.projectId}/usage?days=7`, { key: p.key });
    expect(usage.status).toBe(200);
    expect(usage.body.totals).toMatchObject({ inputTokens: second.job.usage.inputTokens, outputTokens: second.job.usage.outputTokens, unpricedTokens: 0 });
    expect(usage.body.days).toEqual([expect.objectContaining({ date: new Date().toISOString().slice(0, 10), jobs: 1, inputTokens: second.job.usage.inputTokens })]);
    expect(usage.body.jobs).toEqual([expect.objectContaining({ id: job.id, estimatedCostUsd: second.job.usage.estimatedCostUsd })]);
    expect((await e.server.api('GET', `/v2/agent/${p.projectId}/usage?days=0`, { key: p.key })).status).toBe(400);
  });

  it.each(BY_NAME)('%s: a broken link already on the base branch is not blamed', async (name, { site, touchBrokenPage }) => {
    const repo = `preexisting-${name.toLowerCase()}`;
    const p = await project(`acme/${repo}`, site.files);
    const n = e.llm.requests.length;
    const { page, href, line } = site.brokenOnBase;
    const { job } = await runJob(p, 'Touch up the page', [call('edit_file', { path: page, ...touchBrokenPage }), finish('Touch up', 'Touched up the page.')]);
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');
    // One finish was enough: no round was spent on the old broken link.
    expect(e.llm.requests.length - n).toBe(2);
    const checks = (await jobEvents(e.server, p.projectId, job.id, p.key)).filter((x) => x.type === 'checks');
    expect(checks.map((c) => [c.data.ok, c.data.preExistingCount])).toEqual([[true, 1]]);
    const pr = e.host.github.pulls.find((x) => x.repo === repo)!;
    expect(pr.body).toContain('✅ No problems introduced by this job.');
    expect(pr.body).toContain('<details><summary>1 problem already on main (not caused by this job)</summary>');
    expect(pr.body).toContain(`\`${page}:${line}\` (links): Link "${href}" does not lead to a page`);
  });

  it.each(BY_NAME)('%s strict: a job that cannot fix its broken link fails with checks_failed and pushes nothing', async (name, { site, brokenNewPage }) => {
    const repo = `strict-${name.toLowerCase()}`;
    const p = await project(`acme/${repo}`, site.files, { checks: 'strict' });
    const { job } = await runJob(p, 'Document limits', [
      ...brokenNewPage.calls,
      finish('Limits', 'Added.'),
      finish('Limits', 'I could not find the API page.'),
      finish('Limits', 'Still cannot.'),
      finish('Limits', 'Giving up.'),
    ]);
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('checks_failed');
    expect(job.error.message).toContain('after 3 fix rounds');
    expect(job.error.message).toContain(`${brokenNewPage.page}:${brokenNewPage.line}: Link "${brokenNewPage.href}" does not lead to a page`);
    expect(job.prLink).toBeNull();
    expect(e.host.log(`acme/${repo}`, job.source.ref)).toBeNull();
    expect(e.host.github.pulls.filter((x) => x.repo === repo)).toHaveLength(0);
    const changes = await e.server.api('GET', `/v2/agent/${p.projectId}/job/${job.id}/changes`, { key: p.key });
    // Only the link is left: the page is in the navigation.
    expect(changes.body.checks).toMatchObject({ mode: 'strict', problems: [expect.objectContaining({ check: 'links', path: brokenNewPage.page, target: brokenNewPage.href })] });
    expect(changes.body.files).toEqual([]);
  });

  it('Mintlify: a moved page gets a redirect', async () => {
    const p = await project('acme/moved', MINTLIFY.files);
    const config = JSON.parse(MINTLIFY.files['docs.json']);
    config.navigation.tabs[0].groups[1].pages[1].pages = ['guides/events/webhooks'];
    config.redirects.push({ source: '/guides/webhooks', destination: '/guides/events/webhooks' });
    const { job } = await runJob(p, 'Move the webhooks page under events/', [
      call('move_file', { from: 'guides/webhooks.mdx', to: 'guides/events/webhooks.mdx' }),
      finish('Move webhooks', 'Moved the page.'),
      call('write_file', { path: 'docs.json', content: JSON.stringify(config, null, 2) }),
      call('edit_file', { path: 'guides/events/webhooks.mdx', old_string: './auth#api-tokens', new_string: '../auth#api-tokens' }),
      finish('Move webhooks', 'Moved the page, kept its old address with a redirect.'),
    ]);
    expect(job.error).toBeNull();
    const told = toldToModel();
    expect(told).toContain('add {"source": "/guides/webhooks", "destination": "/guides/events/webhooks"} to "redirects" in docs.json');
    expect(told).toContain('still lists "guides/webhooks", but this job moved guides/webhooks.mdx to guides/events/webhooks.mdx');
    const pushed = JSON.parse(e.host.show('acme/moved', job.source.ref, 'docs.json')!);
    expect(pushed.redirects).toContainEqual({ source: '/guides/webhooks', destination: '/guides/events/webhooks' });
    expect(job.files).toContainEqual(expect.objectContaining({ path: 'guides/events/webhooks.mdx', status: 'renamed', previousPath: 'guides/webhooks.mdx' }));
    const pr = e.host.github.pulls.find((x) => x.repo === 'moved')!;
    expect(pr.body).toContain('| `guides/events/webhooks.mdx` | renamed from `guides/webhooks.mdx` |');
  });

  it('Docusaurus on GitLab: a doc missing from sidebars.js and with a broken link is sent back and fixed; the merge request description is updated by a follow-up', async () => {
    const p = await project('group/docusaurus', DOCUSAURUS.files, { codeHost: 'gitlab' });
    const { job } = await runJob(p, 'Add a limits doc', [
      call('write_file', { path: 'docs/guides/limits.md', content: '---\ntitle: Limits\n---\n\n## Per key\n\nSee [tokens](./auth.md#api-tokens) and [webhooks](/docs/guides/webhook).\n' }),
      finish('Limits doc', 'Added.'),
      // Told of both problems: list the doc and fix the link.
      call('edit_file', { path: 'sidebars.js', old_string: "'guides/auth',", new_string: "'guides/auth', 'guides/limits'," }),
      call('edit_file', { path: 'docs/guides/limits.md', old_string: '(/docs/guides/webhook)', new_string: '(/docs/guides/webhooks)' }),
      finish('Limits doc', 'Added and listed in the sidebar.'),
    ]);
    expect(job.error).toBeNull();
    const told = toldToModel();
    expect(told).toContain('New page docs/guides/limits.md is not in the navigation: add "guides/limits" to sidebars.js');
    expect(told).toContain('Link "/docs/guides/webhook" does not lead to a page');
    expect(e.host.show('group/docusaurus', job.source.ref, 'docs/guides/limits.md')).toContain('[webhooks](/docs/guides/webhooks)');
    const checks = (await jobEvents(e.server, p.projectId, job.id, p.key)).filter((x) => x.type === 'checks').map((x) => x.data);
    expect(checks.map((c) => [c.round, c.ok, c.problemCount])).toEqual([
      [1, false, 2],
      [2, true, 0],
    ]);
    const mr = e.host.gitlab.mergeRequests.find((m) => m.project === 'group/docusaurus')!;
    expect(mr.description).toContain('Mode **warn** · docusaurus · ran: links, anchors, assets, navigation');
    expect(mr.description).toContain('✅ No problems introduced by this job.');
    const n = e.host.gitlab.requests.filter((r) => r.method === 'PUT').length;
    await followUp(p, job.id, 'Link the webhooks doc too', [
      call('edit_file', { path: 'docs/guides/limits.md', old_string: '(./auth.md#api-tokens)', new_string: '(./auth.md#api-tokens) and [webhooks](/docs/guides/webhooks#signing)' }),
      finish('Link webhooks', 'Linked the webhooks doc.'),
    ]);
    expect(e.host.gitlab.mergeRequests.filter((m) => m.project === 'group/docusaurus')).toHaveLength(1);
    expect(e.host.gitlab.requests.filter((r) => r.method === 'PUT').length).toBe(n + 1);
    expect(mr.description).toContain('**Follow-up 1**\n\n> Link the webhooks doc too');
    expect(mr.description).toContain('## Summary\n\nLinked the webhooks doc.');
    expect(e.host.gitlab.invalid()).toEqual([]);
  });

  it('MkDocs: a page missing from nav is sent back and fixed; checks off skip all of it', async () => {
    const p = await project('acme/mkdocs', MKDOCS.files);
    const { job } = await runJob(p, 'Add a limits page', [
      call('write_file', { path: 'docs/guides/limits.md', content: '# Limits\n\nSee [tokens](auth.md#api-tokens) and [gone](../nowhere.md).\n' }),
      finish('Limits', 'Added.'),
      call('edit_file', { path: 'mkdocs.yml', old_string: '      - guides/webhooks.md\n', new_string: '      - guides/webhooks.md\n      - guides/limits.md\n' }),
      call('edit_file', { path: 'docs/guides/limits.md', old_string: ' and [gone](../nowhere.md)', new_string: '' }),
      finish('Limits', 'Added, in the nav.'),
    ]);
    expect(job.error).toBeNull();
    const told = toldToModel();
    expect(told).toContain('add "guides/limits.md" to mkdocs.yml nav');
    expect(told).toContain('Link "../nowhere.md" does not lead to a page');
    expect(e.host.show('acme/mkdocs', job.source.ref, 'mkdocs.yml')).toContain('- guides/limits.md');

    const off = await project('acme/mkdocs-off', MKDOCS.files, { checks: 'off' });
    const n = e.llm.requests.length;
    const r = await runJob(off, 'Add a page', [call('write_file', { path: 'docs/x.md', content: '[gone](nowhere.md)\n' }), finish('X', 'Added.')]);
    expect(r.job.status).toBe('completed');
    expect(e.llm.requests.length - n).toBe(2);
    const events = await jobEvents(e.server, off.projectId, r.job.id, off.key);
    expect(events.some((x) => x.type === 'checks')).toBe(false);
    expect(e.host.github.pulls.find((x) => x.repo === 'mkdocs-off')!.body).toContain('## Docs checks\n\nOff for this project.');
  });

  it('hostile links from the model: nothing is fetched, nothing escapes, the job ends normally', async () => {
    let hits = 0;
    const internal = http.createServer((_req, res) => {
      hits++;
      res.end('internal');
    });
    await new Promise<void>((r) => internal.listen(0, '127.0.0.1', r));
    const port = (internal.address() as { port: number }).port;
    try {
      const p = await project('acme/hostile', MINTLIFY.files);
      const many = Array.from({ length: 2500 }, (_, i) => `[l${i}](/missing/${i})`).join(' ');
      const evil = [
        '---',
        'title: Evil',
        '---',
        `[a](../../../../etc/passwd) ![b](/../../../proc/self/environ) [c](http://127.0.0.1:${port}/admin) [d](http://169.254.169.254/latest/meta-data/) <img src="http://localhost:${port}/i.png" />`,
        many,
      ].join('\n\n');
      const { job } = await runJob(p, 'Break things', [
        call('write_file', { path: 'evil.mdx', content: evil }),
        call('write_file', { path: '../outside.mdx', content: 'x' }),
        call('write_file', { path: 'big.mdx', content: `# Big\n\n${'word '.repeat(100_000)}` }),
        finish('Evil', 'Done.'),
      ]);
      // warn: rounds exhausted (the script ends with finishes), problems listed in the PR.
      expect(job.status).toBe('completed');
      expect(hits).toBe(0);
      const pr = e.host.github.pulls.find((x) => x.repo === 'hostile')!;
      expect(pr.body).toContain('Link "../../../../etc/passwd" leads outside the repository.');
      expect(pr.body).toContain('… and ');
      expect(pr.body.length).toBeLessThanOrEqual(60_000);
      expect(e.host.show('acme/hostile', job.source.ref, '../outside.mdx')).toBeNull();
      const changes = await e.server.api('GET', `/v2/agent/${p.projectId}/job/${job.id}/changes`, { key: p.key });
      expect(changes.body.checks.truncated).toBe(true);
    } finally {
      await new Promise<void>((r) => internal.close(() => r()));
    }
  });
});
