// The whole loop, end to end on real components: traffic with 404s on a Mintlify, a Docusaurus and
// an MkDocs site → the suggestion lists the paths and their likely pages → a job started from it
// (scripted model, local code host) adds redirects → the docs checks pass, and fail when the script
// redirects to a missing page → the pull request lists the paths and their visitors → after the
// merge the suggestion shows each path's not-found visitors before and after.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply } from '../fixtures/fake-openai.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS } from '../fixtures/docs-sites.ts';
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { isoWeek, WeeklyAutoFix } from '../../src/suggestions/weekly.ts';
import { eventSentence } from '../../src/jobs/event-text.ts';

const HUMAN_UA = 'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
const AI_UA = 'Mozilla/5.0 AppleWebKit/537.36 (KHTML, like Gecko); compatible; ChatGPT-User/1.0; +https://openai.com/bot';

let e: E2E;
beforeAll(async () => {
  e = await startE2E();
});
afterAll(async () => {
  await e?.close();
});

const call = (name: string, args: Record<string, unknown>): FakeReply => ({ toolCalls: [{ name, args }] });
const finish = (title: string) => call('finish', { title, summary: 'Added redirects for the broken paths.' });

function script(replies: FakeReply[]): void {
  let i = 0;
  e.llm.setResponder(() => replies[i++] ?? finish('Done'));
}

const docusaurusConfig = (redirects: string) =>
  `module.exports = {\n  title: 'Acme',\n  presets: [['classic', { docs: { sidebarPath: './sidebars.js' } }]],\n  plugins: [['@docusaurus/plugin-client-redirects', { redirects: [${redirects}] }]],\n};\n`;
const mkdocsConfig = (maps: Record<string, string>) =>
  `${MKDOCS.files['mkdocs.yml']}plugins:\n  - search\n  - redirects:\n      redirect_maps:\n${Object.entries(maps)
    .map(([from, to]) => `        '${from}': '${to}'\n`)
    .join('')}`;
const mintlifyConfig = (redirects: { source: string; destination: string }[]) => {
  const json = JSON.parse(MINTLIFY.files['docs.json']);
  json.redirects = redirects;
  return JSON.stringify(json, null, 2) + '\n';
};

interface Case {
  name: string;
  repo: string;
  files: Record<string, string>;
  framework: string;
  /** Two not-found paths and the page each most likely moved to. */
  broken: { path: string; expected: string }[];
  /** The config file and its text with redirects for both paths (`to` overrides the second target). */
  fix: (secondTarget?: string) => { path: string; content: string };
  missingTarget: string;
}

const CASES: Case[] = [
  {
    name: 'Mintlify',
    repo: 'acme/loop-mint',
    files: MINTLIFY.files,
    framework: 'mintlify',
    broken: [
      { path: '/guides/authentication', expected: '/guides/auth' },
      { path: '/guides/webhook-signing', expected: '/guides/webhooks' },
    ],
    fix: (second = '/guides/webhooks') => ({
      path: 'docs.json',
      content: mintlifyConfig([
        { source: '/old-start', destination: '/quickstart' },
        { source: '/guides/authentication', destination: '/guides/auth' },
        { source: '/guides/webhook-signing', destination: second },
      ]),
    }),
    missingTarget: '/guides/signing',
  },
  {
    name: 'Docusaurus',
    repo: 'acme/loop-docusaurus',
    files: { ...DOCUSAURUS.files, 'docusaurus.config.js': docusaurusConfig(`{ from: '/docs/old-intro', to: '/docs/' }`) },
    framework: 'docusaurus',
    broken: [
      { path: '/docs/guides/authentication', expected: '/docs/guides/auth' },
      { path: '/docs/guides/webhook', expected: '/docs/guides/webhooks' },
    ],
    fix: (second = '/docs/guides/webhooks') => ({
      path: 'docusaurus.config.js',
      content: docusaurusConfig(
        `{ from: '/docs/old-intro', to: '/docs/' }, { from: '/docs/guides/authentication', to: '/docs/guides/auth' }, { from: '/docs/guides/webhook', to: '${second}' }`,
      ),
    }),
    missingTarget: '/docs/guides/hooks',
  },
  {
    name: 'MkDocs',
    repo: 'acme/loop-mkdocs',
    files: { ...MKDOCS.files, 'mkdocs.yml': mkdocsConfig({ 'old.md': 'index.md' }) },
    framework: 'mkdocs',
    broken: [
      { path: '/guides/authentication/', expected: '/guides/auth' },
      { path: '/guides/webhook/', expected: '/guides/webhooks' },
    ],
    fix: (second = 'guides/webhooks.md') => ({
      path: 'mkdocs.yml',
      content: mkdocsConfig({ 'old.md': 'index.md', 'guides/authentication.md': 'guides/auth.md', 'guides/webhook.md': second }),
    }),
    missingTarget: 'guides/hooks.md',
  },
];

async function send(projectId: string, key: string, events: Record<string, unknown>[]) {
  const res = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
  expect(res.status).toBe(202);
  expect(res.body.rejected).toEqual([]);
}

/** Each visitor's own address (automatic runs count identities the server derives from address and agent). */
const ipOf = (who: string) => `203.0.113.${(who.startsWith('a') ? 100 : 0) + Number(who.slice(1))}`;

/** Not-found traffic: 4 humans and 2 AI agents on the first path, 3 humans on the second, 1 on a rare one, and 3 AI agents asking for llms.txt. */
function traffic(c: Case, at: number) {
  const ev = (path: string, who: string, ua: string, extra: Record<string, unknown> = {}) => ({ path, userAgent: ua, visitorId: who, ip: ipOf(who), status: 404, timestamp: at, ...extra });
  return [
    ...[1, 2, 3, 4].map((n) => ev(c.broken[0].path, `h${n}`, HUMAN_UA, { referrer: 'https://www.google.com/search?q=x' })),
    ...[1, 2].map((n) => ev(c.broken[0].path, `a${n}`, AI_UA)),
    ...[1, 2, 3].map((n) => ev(c.broken[1].path, `h${n}`, HUMAN_UA)),
    ev(c.broken[1].path, 'h1', HUMAN_UA),
    ev('/rarely-asked', 'h9', HUMAN_UA),
    ...[1, 2, 3].map((n) => ev('/llms.txt', `a${n}`, AI_UA)),
  ];
}

describe.each(CASES)('the loop on $name', (c) => {
  it('traffic → suggestion → job with redirects → checks → pull request → before and after', { timeout: 60_000 }, async () => {
    const url = e.host.createRepo(c.repo, c.files);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
    const key = await e.server.createKey(projectId);
    await send(projectId, key, traffic(c, Date.now() - 2 * 86_400_000));

    const listed = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.site).toMatchObject({ read: true, framework: c.framework, error: null });
    const broken = listed.body.suggestions.find((s: any) => s.kind === 'broken_paths');
    // One suggestion covers both paths above the threshold (3 visitors), busiest first.
    expect(broken.paths.map((p: any) => p.path)).toEqual(c.broken.map((b) => b.path));
    expect(broken.paths[0].visitors).toEqual({ human: 4, ai: 2, total: 6 });
    expect(broken.paths[0].referrers).toContainEqual({ host: 'www.google.com', visitors: 4 });
    expect(broken.paths[1]).toMatchObject({ visitors: { human: 3, ai: 0, total: 3 }, views: 4 });
    for (const [i, b] of c.broken.entries()) expect(broken.paths[i].candidates[0].url).toBe(b.expected);
    expect(broken.prompt).toContain(`\`${c.broken[0].path}\`: 6 visitors (4 human, 2 AI)`);
    const markdown = listed.body.suggestions.find((s: any) => s.kind === 'agent_markdown');
    expect(markdown.paths.map((p: any) => p.path)).toEqual(['/llms.txt']);
    expect(markdown.prompt).toContain('has no llms.txt');

    // The job: the model adds both redirects.
    const fix = c.fix();
    script([call('write_file', fix), finish('Redirect broken paths')]);
    const started = await e.server.api('POST', `/v2/agent/${projectId}/suggestions/${broken.id}/job`, { key });
    expect(started.status).toBe(201);
    expect(started.body.job.trigger).toEqual({ kind: 'suggestion', suggestionId: broken.id, suggestionKind: 'broken_paths', automatic: false });
    const job = await waitForJob(e.server, projectId, started.body.job.id, key);
    expect(job.status).toBe('completed');
    // Its first event says it came from the suggestion, in the dashboard's and the CLI's words.
    const [first] = (await e.server.api('GET', `/v2/agent/${projectId}/job/${job.id}/events?limit=1`, { key })).body.events;
    expect(first).toMatchObject({ type: 'job.created', data: { trigger: started.body.job.trigger } });
    expect(eventSentence(first)).toMatch(new RegExp(`^Job created from a traffic suggestion \\(broken paths, ${broken.id}\\): `));
    // The prompt and the structured context reached the model.
    const told = JSON.stringify(e.llm.requests.at(-1)!.messages);
    expect(told).toContain(c.broken[1].path);
    expect(told).toContain('Context (JSON)');

    const changes = await e.server.api('GET', `/v2/agent/${projectId}/job/${job.id}/changes`, { key });
    expect(changes.body.checks.ran).toContain('redirects');
    expect(changes.body.checks.problems).toEqual([]);
    const pr = e.host.github.pulls.find((p) => `acme/${p.repo}` === c.repo)!;
    expect(pr.body).toContain(`\`${c.broken[0].path}\`: 6 visitors (4 human, 2 AI)`);
    expect(pr.body).toContain(`\`${c.broken[1].path}\`: 3 visitors (3 human, 0 AI)`);

    // A follow-up whose redirect leads nowhere: the checks say so.
    script([call('write_file', c.fix(c.missingTarget)), finish('Redirect broken paths')]);
    const n = e.llm.requests.length;
    await e.server.api('POST', `/v2/agent/${projectId}/job/${job.id}/message`, { key, body: { prompt: 'Point the second redirect elsewhere.' } });
    await waitForJob(e.server, projectId, job.id, key, (j: any) => j.status !== 'active' && e.llm.requests.length > n);
    const bad = await e.server.api('GET', `/v2/agent/${projectId}/job/${job.id}/changes`, { key });
    expect(bad.body.checks.problems.map((p: any) => `${p.check} ${p.target}`)).toEqual([`redirects ${c.missingTarget}`]);

    // While its pull request is open, the paths are not proposed again, and the same id cannot start twice.
    const during = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    expect(during.body.suggestions.map((s: any) => s.kind)).toEqual(['agent_markdown']);
    expect(during.body.started[0]).toMatchObject({ suggestionId: broken.id, job: { id: job.id }, pullRequest: { state: 'open' }, measuredFrom: 'completion' });
    const again = await e.server.api('POST', `/v2/agent/${projectId}/suggestions/${broken.id}/job`, { key });
    expect(again.status).toBe(404);
    expect(again.body.code).toBe('suggestion_not_found');
  });
});

describe('after the merge', () => {
  it('shows each path before and after the merge, and proposes a path again only if it still fails', { timeout: 60_000 }, async () => {
    const c = CASES[0];
    const url = e.host.createRepo('acme/loop-merge', c.files);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
    const key = await e.server.createKey(projectId);
    await send(projectId, key, traffic(c, Date.now() - 5 * 86_400_000));
    const listed = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    const broken = listed.body.suggestions.find((s: any) => s.kind === 'broken_paths');
    script([call('write_file', c.fix()), finish('Redirect broken paths')]);
    const started = await e.server.api('POST', `/v2/agent/${projectId}/suggestions/${broken.id}/job`, { key });
    await waitForJob(e.server, projectId, started.body.job.id, key);

    // The code host merges it two days ago; one path still fails afterwards (one visitor).
    const pr = e.host.github.pulls.find((p) => p.repo === 'loop-merge')!;
    const mergedAt = Date.now() - 2 * 86_400_000;
    pr.mergedAt = new Date(mergedAt).toISOString();
    pr.state = 'closed';
    await send(projectId, key, [{ path: c.broken[1].path, userAgent: HUMAN_UA, visitorId: 'late', status: 404, timestamp: Date.now() - 86_400_000 }]);

    const after = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    const s = after.body.started[0];
    expect(s).toMatchObject({ pullRequest: { state: 'merged', mergedAt: new Date(mergedAt).toISOString() }, measuredFrom: 'merge', beforeDays: 30 });
    expect(s.paths).toEqual([
      { path: c.broken[0].path, before: { human: 4, ai: 2, total: 6 }, after: { human: 0, ai: 0, total: 0 } },
      { path: c.broken[1].path, before: { human: 3, ai: 0, total: 3 }, after: { human: 1, ai: 0, total: 1 } },
    ]);
    const again = after.body.suggestions.find((x: any) => x.kind === 'broken_paths');
    expect(again.paths.map((p: any) => p.path)).toEqual([c.broken[1].path]);
  });
});

describe('bad input', () => {
  it('an unknown suggestion, another project\'s suggestion, a malformed id and a bad threshold', async () => {
    const url = e.host.createRepo('acme/loop-bad', MINTLIFY.files);
    const a = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const b = await e.server.createProject({ repositoryUrl: url, codeHost: 'github' });
    const keyA = await e.server.createKey(a);
    const keyB = await e.server.createKey(b);
    await send(a, keyA, traffic(CASES[0], Date.now() - 86_400_000));
    const listed = await e.server.api('GET', `/v2/agent/${a}/suggestions`, { key: keyA });
    const id = listed.body.suggestions[0].id;

    const other = await e.server.api('POST', `/v2/agent/${b}/suggestions/${id}/job`, { key: keyB });
    expect(other.status).toBe(404);
    expect(other.body.code).toBe('suggestion_not_found');
    const unknown = await e.server.api('POST', `/v2/agent/${a}/suggestions/sug_${'0'.repeat(24)}/job`, { key: keyA });
    expect(unknown.status).toBe(404);
    expect(unknown.body.error).toMatch(/has no current suggestion/);
    const malformed = await e.server.api('POST', `/v2/agent/${a}/suggestions/--upload-pack=x/job`, { key: keyA });
    expect(malformed.status).toBe(400);
    const threshold = await e.server.api('GET', `/v2/agent/${a}/suggestions?minVisitors=0`, { key: keyA });
    expect(threshold.status).toBe(400);
    const range = await e.server.api('GET', `/v2/agent/${a}/suggestions?dateFrom=2026-02-01&dateTo=2026-01-01`, { key: keyA });
    expect(range.status).toBe(400);
    expect(range.body.code).toBe('invalid_date_range');
    const foreign = await e.server.api('GET', `/v2/agent/${a}/suggestions`, { key: keyB });
    expect(foreign.status).toBe(403);
  });

  it('a repository that cannot be read: the paths are still proposed, without candidates, and the site says why', async () => {
    const projectId = await e.server.createProject({ repositoryUrl: `${e.host.origin}/acme/missing.git`, codeHost: 'github' });
    const key = await e.server.createKey(projectId);
    await send(projectId, key, traffic(CASES[0], Date.now() - 86_400_000));
    const listed = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    expect(listed.status).toBe(200);
    expect(listed.body.site).toMatchObject({ read: false, pages: 0, error: expect.stringMatching(/\S/) });
    expect(listed.body.site.error).not.toContain('ghp_');
    const broken = listed.body.suggestions.find((s: any) => s.kind === 'broken_paths');
    expect(broken.paths.every((p: any) => p.candidates.length === 0)).toBe(true);
  });
});

describe('the weekly automatic job', () => {
  it('is off by default, and once on starts the broken-paths job exactly once per week however many processes check', { timeout: 60_000 }, async () => {
    const c = CASES[0];
    const url = e.host.createRepo('acme/loop-weekly', c.files);
    const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
    const key = await e.server.createKey(projectId);
    await send(projectId, key, traffic(c, Date.now() - 86_400_000));
    const { services } = e.server;
    const now = Date.now();
    expect((await services.weekly.runDue(now)).filter((o) => o.projectId === projectId)).toEqual([]);

    await services.projects.update(projectId, { autoFixMinVisitors: 4 });
    script([call('write_file', c.fix()), finish('Redirect broken paths')]);
    // Two processes' checkers at once, and this one twice: one claim wins the week.
    const other = new WeeklyAutoFix(services.store.db, services.suggestions, services.log);
    const runs = (await Promise.all([services.weekly.runDue(now), other.runDue(now), services.weekly.runDue(now)])).flat().filter((o) => o.projectId === projectId);
    expect(runs).toHaveLength(1);
    expect(runs[0]).toMatchObject({ week: isoWeek(now), outcome: 'started' });
    const job = await waitForJob(e.server, projectId, runs[0].jobId!, key);
    expect(job.trigger).toMatchObject({ kind: 'suggestion', suggestionKind: 'broken_paths', automatic: true });
    // Only the path with 4 or more visitors (6) is covered at this threshold.
    const listed = await e.server.api('GET', `/v2/agent/${projectId}/suggestions`, { key });
    expect(listed.body.started[0].paths.map((p: any) => p.path)).toEqual([c.broken[0].path]);
    expect(listed.body.started[0].automatic).toBe(true);
    expect((await other.runDue(now + 3_600_000)).filter((o) => o.projectId === projectId)).toEqual([]);
  });

  it('names ISO weeks by their Thursday', () => {
    expect(isoWeek(Date.UTC(2026, 10, 26))).toBe('2026-W48');
    expect(isoWeek(Date.UTC(2027, 0, 1))).toBe('2026-W53');
    expect(isoWeek(Date.UTC(2024, 11, 30))).toBe('2025-W01');
  });
});
