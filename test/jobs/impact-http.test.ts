// GET /v2/agent/{projectId}/job/{id}/impact end to end on real components: a Mintlify repository on
// the local code host (git smart HTTP and the GitHub API), a job (scripted model, the real agent)
// that moves a page, edits another and adds a redirect; its pull request open (409), then merged
// three days ago by the host; the touched pages with their site paths and the exact counts of the
// events sent through the events API; the same pages read again from the job's commits when they
// were not stored (a job that pushed before Folio stored them); 404, 409 and 400 for hostile input.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply } from '../fixtures/fake-openai.ts';
import { MINTLIFY } from '../fixtures/docs-sites.ts';
import { startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { FolioClient, FolioError } from '../../src/client/index.ts';
import { runCli as run } from '../client/fixtures/run-cli.ts';

const DAY = 86_400_000;
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

/** docs.json with the page moved in the navigation and a redirect from its old address. */
function movedConfig(): string {
  const json = JSON.parse(MINTLIFY.files['docs.json']);
  json.navigation.tabs[0].groups[1].pages[0] = 'guides/authentication';
  json.redirects.push({ source: '/guides/auth', destination: '/guides/authentication' });
  return JSON.stringify(json, null, 2) + '\n';
}

const zero = { humans: 0, ai: 0, views: 0, fromAiAnswers: 0, notFound: 0 };

describe('the impact of a merged job', () => {
  let projectId: string;
  let key: string;
  let jobId: string;
  let mergedAt: number;

  it('answers per page and in total once the host says the pull request was merged', { timeout: 90_000 }, async () => {
    const url = e.host.createRepo('acme/impact', MINTLIFY.files);
    projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', checks: 'warn' });
    key = await e.server.createKey(projectId);
    let i = 0;
    const replies: FakeReply[] = [
      call('move_file', { from: 'guides/auth.mdx', to: 'guides/authentication.mdx' }),
      call('write_file', { path: 'docs.json', content: movedConfig() }),
      call('write_file', { path: 'quickstart.mdx', content: `${MINTLIFY.files['quickstart.mdx']}\nOne more line.\n` }),
      call('finish', { title: 'Rename the auth guide', summary: 'Moved it and kept the old address working.' }),
    ];
    e.llm.setResponder(() => replies[i++] ?? call('finish', { title: 'Done', summary: 'Done.' }));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Rename the auth guide to authentication.' } });
    expect(created.status).toBe(201);
    jobId = created.body.id;
    const job = await waitForJob(e.server, projectId, jobId, key);
    expect(job.status).toBe('completed');
    expect(job.prLink).not.toBeNull();
    expect(job.mergedAt).toBeNull();

    // The host merges it at noon four days ago (UTC): three whole days after the merge's day are over.
    const pr = e.host.github.pulls.find((p) => p.repo === 'impact')!;
    const today = Math.floor(Date.now() / DAY) * DAY;
    mergedAt = today - 4 * DAY + DAY / 2;
    pr.mergedAt = new Date(mergedAt).toISOString();
    pr.state = 'closed';

    // Traffic in the two whole days either side of the merge's day.
    const at = (offset: number) => new Date(mergedAt + offset).toISOString();
    const ev = (path: string, who: string, ua: string, t: number, extra: Record<string, unknown> = {}) => ({ path, userAgent: ua, visitorId: who, timestamp: at(t), ...extra });
    const events = [
      ev('/guides/auth', 'h1', HUMAN_UA, -DAY),
      ev('/guides/auth/', 'h2', HUMAN_UA, -1.5 * DAY),
      ev('/quickstart', 'h3', HUMAN_UA, -DAY, { referrer: 'https://chatgpt.com/c/1' }),
      ev('/guides/auth.md', 'a1', AI_UA, -DAY),
      ev('/guides/auth', 'h4', HUMAN_UA, -DAY, { status: 404 }),
      ev('/guides/authentication', 'h1', HUMAN_UA, DAY),
      ev('/guides/authentication/', 'h5', HUMAN_UA, DAY, { referrer: 'https://chatgpt.com/c/2' }),
      ev('/guides/auth', 'h4', HUMAN_UA, DAY, { status: 404 }),
      ev('/quickstart', 'a2', AI_UA, DAY),
      ev('/index', 'h6', HUMAN_UA, DAY),
      // Outside the two-day windows (the first event there is, just after a midnight).
      ev('/quickstart', 'h7', HUMAN_UA, -3.5 * DAY + 1),
    ];
    const sent = await e.server.api('POST', `/v1/analytics/${projectId}/events`, { key, body: { events } });
    expect(sent.status).toBe(202);

    const res = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact?days=2`, { key });
    expect(res.status).toBe(200);
    // One analytics read against the project's hourly limit, as a report is.
    expect(res.headers.get('ratelimit-limit')).toBeTruthy();
    expect(res.body).toMatchObject({
      jobId,
      pullRequest: { url: job.prLink, mergedAt: new Date(mergedAt).toISOString() },
      days: 2,
      windowDays: 2,
      clipped: null,
      // Whole days: the merge's own day in neither window.
      before: { from: new Date(today - 6 * DAY).toISOString(), to: new Date(today - 4 * DAY).toISOString() },
      after: { from: new Date(today - 3 * DAY).toISOString(), to: new Date(today - DAY).toISOString() },
    });
    const byChange = Object.fromEntries(res.body.pages.map((p: any) => [p.change, p]));
    // docs.json is no page: left out.
    expect(res.body.pages.map((p: any) => p.change).sort()).toEqual(['edited', 'moved', 'redirect']);
    expect(byChange.moved).toEqual({
      change: 'moved', path: '/guides/authentication', previousPath: '/guides/auth', file: 'guides/authentication.mdx', redirectTo: null,
      before: { humans: 2, ai: 1, views: 3, fromAiAnswers: 0, notFound: 1 },
      after: { humans: 2, ai: 0, views: 2, fromAiAnswers: 1, notFound: 1 },
    });
    expect(byChange.edited).toEqual({
      change: 'edited', path: '/quickstart', previousPath: null, file: 'quickstart.mdx', redirectTo: null,
      before: { humans: 1, ai: 0, views: 1, fromAiAnswers: 1, notFound: 0 },
      after: { humans: 0, ai: 1, views: 1, fromAiAnswers: 0, notFound: 0 },
    });
    expect(byChange.redirect).toEqual({
      change: 'redirect', path: '/guides/auth', previousPath: null, file: null, redirectTo: '/guides/authentication',
      before: { humans: 2, ai: 1, views: 3, fromAiAnswers: 0, notFound: 1 },
      after: { ...zero, notFound: 1 },
    });
    // Visitors counted once across the pages.
    expect(res.body.total).toEqual({
      before: { humans: 3, ai: 1, views: 4, fromAiAnswers: 1, notFound: 1 },
      after: { humans: 2, ai: 1, views: 3, fromAiAnswers: 1, notFound: 1 },
    });

    // Asked again within the minute (the jobs list's badge): the same answer, served without reading
    // the traffic, so no analytics read is spent.
    const again = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact?days=2`, { key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(res.body);
    expect(again.headers.get('ratelimit-remaining')).toBeNull();

    // Fourteen days asked: clipped to the three whole days over since the merge's day, and to the data
    // (3.5 days before the merge, just after a midnight: two whole days).
    const long = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact`, { key });
    expect(long.status).toBe(200);
    expect(Number(long.headers.get('ratelimit-remaining'))).toBe(Number(res.headers.get('ratelimit-remaining')) - 1);
    expect(long.body.days).toBe(14);
    expect(long.body.windowDays).toBe(2);
    expect(long.body.clipped).toMatch(/recorded traffic starts 3\.5 days before the merge: both windows are 2 whole days instead of 14/);
    expect(long.body.total.before.humans).toBe(3);

    // The jobs list knows it is merged.
    const list = await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key });
    expect(list.body.jobs.find((j: any) => j.id === jobId).mergedAt).toBe(new Date(mergedAt).toISOString());
  });

  it('reads the pages from the job\'s commits when they were not stored, and stores them', { timeout: 60_000 }, async () => {
    const store = await openStore(loadConfig(e.server.env));
    try {
      await store.db.updateTable('job_changes').set({ pages: null }).where('job_id', '=', jobId).execute();
    } finally {
      await store.close();
    }
    const res = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact?days=3`, { key });
    expect(res.status).toBe(200);
    expect(res.body.pages.map((p: any) => `${p.change} ${p.path}`).sort()).toEqual(['edited /quickstart', 'moved /guides/authentication', 'redirect /guides/auth']);
    const again = await openStore(loadConfig(e.server.env));
    try {
      const row = await again.db.selectFrom('job_changes').select('pages').where('job_id', '=', jobId).executeTakeFirstOrThrow();
      expect(JSON.parse(row.pages!)).toHaveLength(3);
    } finally {
      await again.close();
    }
  });

  it('a job that added and removed pages, merged two days ago: short windows, said so; merged an hour ago: 409', { timeout: 90_000 }, async () => {
    const run = async (replies: FakeReply[], prompt: string) => {
      let i = 0;
      e.llm.setResponder(() => replies[i++] ?? call('finish', { title: 'Pages', summary: 'Pages.' }));
      const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt } });
      return waitForJob(e.server, projectId, created.body.id, key);
    };
    const docs = JSON.parse(MINTLIFY.files['docs.json']);
    docs.navigation.tabs[0].groups[1].pages = ['guides/auth', 'guides/tokens'];
    const job = await run(
      [
        call('write_file', { path: 'guides/tokens.mdx', content: '---\ntitle: Tokens\n---\n\nTokens.\n' }),
        call('delete_file', { path: 'guides/webhooks.mdx' }),
        call('write_file', { path: 'docs.json', content: JSON.stringify(docs, null, 2) + '\n' }),
      ],
      'Replace the webhooks page with a tokens page.',
    );
    expect(job.files.map((f: any) => `${f.status} ${f.path}`).sort()).toEqual(['added guides/tokens.mdx', 'deleted guides/webhooks.mdx', 'modified docs.json']);
    // At noon two days ago (UTC): one whole day after the merge's day is over.
    const merged = Math.floor(Date.now() / DAY) * DAY - 2 * DAY + DAY / 2;
    const pr = e.host.github.pulls.find((p) => p.head === job.source.ref)!;
    Object.assign(pr, { mergedAt: new Date(merged).toISOString(), state: 'closed' });
    await e.server.api('POST', `/v1/analytics/${projectId}/events`, {
      key,
      body: {
        events: [
          { path: '/guides/webhooks', userAgent: HUMAN_UA, visitorId: 'w1', timestamp: new Date(merged - DAY).toISOString() },
          { path: '/guides/webhooks', userAgent: HUMAN_UA, visitorId: 'w2', status: 404, timestamp: new Date(merged + DAY).toISOString() },
          { path: '/guides/tokens', userAgent: AI_UA, visitorId: 't1', timestamp: new Date(merged + DAY).toISOString() },
        ],
      },
    });
    // The jobs list asks the host about it (in the background): a later list shows the merge.
    let listed: any;
    for (let tries = 0; tries < 100 && !listed?.mergedAt; tries++) {
      listed = (await e.server.api('GET', `/v2/agent/${projectId}/jobs`, { key })).body.jobs.find((j: any) => j.id === job.id);
      if (!listed.mergedAt) await new Promise((r) => setTimeout(r, 50));
    }
    expect(listed.mergedAt).toBe(new Date(merged).toISOString());
    expect((await e.server.api('GET', `/v2/agent/${projectId}/job/${job.id}`, { key })).body.mergedAt).toBe(new Date(merged).toISOString());

    const res = await e.server.api('GET', `/v2/agent/${projectId}/job/${job.id}/impact`, { key });
    expect(res.status).toBe(200);
    expect(res.body.windowDays).toBe(1);
    // Noon two calendar days ago is 1.5 to 2.5 days ago, by the time of day the test runs at.
    const ago = /^The pull request was merged (\d+(?:\.\d)?) days ago: both windows are 1 whole day instead of 14\.$/.exec(res.body.clipped);
    expect(ago, res.body.clipped).not.toBeNull();
    expect(Number(ago![1])).toBeGreaterThanOrEqual(1.5);
    expect(Number(ago![1])).toBeLessThanOrEqual(2.5);
    expect(res.body.pages).toEqual([
      { change: 'added', path: '/guides/tokens', previousPath: null, file: 'guides/tokens.mdx', redirectTo: null, before: zero, after: { ...zero, ai: 1, views: 1 } },
      { change: 'removed', path: '/guides/webhooks', previousPath: null, file: 'guides/webhooks.mdx', redirectTo: null, before: { ...zero, humans: 1, views: 1 }, after: { ...zero, notFound: 1 } },
    ]);

    // Merged an hour ago: not yet.
    const recent = await run([call('write_file', { path: 'guides/tokens.mdx', content: '---\ntitle: Tokens\n---\n\nMore tokens.\n' })], 'Expand the tokens page.');
    Object.assign(e.host.github.pulls.find((p) => p.head === recent.source.ref)!, { mergedAt: new Date(Date.now() - 3_600_000).toISOString(), state: 'closed' });
    const early = await e.server.api('GET', `/v2/agent/${projectId}/job/${recent.id}/impact`, { key });
    expect(early.status).toBe(409);
    expect(early.body.code).toBe('impact_not_ready');
    expect(early.body.error).toMatch(/its effect is compared over whole UTC days after the day of the merge, from \d{4}-\d\d-\d\dT00:00:00\.000Z \(in about (2[3-9]|3\d|4[0-7]) hours\)\.$/);
    // Nothing was read: no analytics read spent.
    expect(early.headers.get('ratelimit-remaining')).toBeNull();
  });

  it('the typed client and `folio jobs impact` (table, --json, --csv)', { timeout: 60_000 }, async () => {
    const client = new FolioClient({ baseUrl: e.server.url, apiKey: key, projectId });
    const impact = await client.getJobImpact(jobId, { days: 2 });
    expect(impact.total.after).toEqual({ humans: 2, ai: 1, views: 3, fromAiAnswers: 1, notFound: 1 });
    await expect(client.getJobImpact(jobId, { days: 91 })).rejects.toMatchObject({ status: 400 });
    const missing = await client.getJobImpact(`job_${'1'.repeat(26)}`).catch((err: unknown) => err);
    expect(missing).toBeInstanceOf(FolioError);
    expect(missing).toMatchObject({ status: 404, code: 'job_not_found' });

    const env = { FOLIO_URL: e.server.url, FOLIO_API_KEY: key, FOLIO_PROJECT: projectId };
    const table = await run(['jobs', 'impact', jobId, '--days', '2'], env);
    expect(table.code).toBe(0);
    expect(table.stdout).toContain(`Merged ${new Date(mergedAt).toISOString()}`);
    expect(table.stdout).toMatch(/\(2 whole days each, UTC; the day of the merge in neither\)/);
    expect(table.stdout).toMatch(/PAGE +CHANGE +HUMANS +AI +VIEWS +FROM AI ANSWERS +NOT FOUND/);
    expect(table.stdout).toMatch(/\/guides\/authentication +moved from \/guides\/auth +2→2 +1→0 +3→2 +0→1 +1→1/);
    expect(table.stdout).toMatch(/\/quickstart +edited +1→0 +0→1 +1→1 +1→0 +0→0/);
    expect(table.stdout).toMatch(/\/guides\/auth +redirect to \/guides\/authentication +2→0 +1→0 +3→0 +0→0 +1→1/);
    expect(table.stdout).toMatch(/Total +3→2 +1→1 +4→3 +1→1 +1→1/);
    const json = await run(['jobs', 'impact', jobId, '--days', '2', '--json'], env);
    expect(JSON.parse(json.stdout)).toEqual(impact);
    const csv = await run(['jobs', 'impact', jobId, '--days', '2', '--csv'], env);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines[0]).toBe('path,change,previous_path,redirect_to,humans_before,humans_after,ai_before,ai_after,views_before,views_after,fromAiAnswers_before,fromAiAnswers_after,notFound_before,notFound_after');
    expect(lines).toContain('/guides/authentication,moved,/guides/auth,,2,2,1,0,3,2,0,1,1,1');
    expect(lines.at(-1)).toBe(',total,,,3,2,1,1,4,3,1,1,1,1');
    const bad = await run(['jobs', 'impact', jobId, '--days', '0'], env);
    expect(bad.code).not.toBe(0);
    const notReady = await run(['jobs', 'impact', `job_${'1'.repeat(26)}`], env);
    expect(notReady.code).not.toBe(0);
    expect(notReady.stderr).toMatch(/does not exist/);
  });

  it('404 for an unknown job or another project\'s, 400 for bad days, 409 for a job without a pull request', { timeout: 60_000 }, async () => {
    const other = await e.server.createProject({ repositoryUrl: e.host.createRepo('acme/impact-other', MINTLIFY.files), codeHost: 'github' });
    const otherKey = await e.server.createKey(other);
    const foreign = await e.server.api('GET', `/v2/agent/${other}/job/${jobId}/impact`, { key: otherKey });
    expect(foreign.status).toBe(404);
    expect(foreign.body.code).toBe('job_not_found');
    const wrongKey = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact`, { key: otherKey });
    expect(wrongKey.status).toBe(403);
    const unknown = await e.server.api('GET', `/v2/agent/${projectId}/job/job_${'0'.repeat(26)}/impact`, { key });
    expect(unknown.status).toBe(404);
    expect(unknown.body.code).toBe('job_not_found');
    for (const days of ['0', '91', 'abc', '1.5', '-3']) {
      const bad = await e.server.api('GET', `/v2/agent/${projectId}/job/${jobId}/impact?days=${days}`, { key });
      expect(bad.status, days).toBe(400);
      expect(bad.body.code).toBe('invalid_request');
    }
    // A job whose pull request is open: not merged yet (asked of the host).
    let turn = 0;
    e.llm.setResponder(() => (turn++ === 0 ? call('write_file', { path: 'quickstart.mdx', content: '---\ntitle: Quickstart\n---\n\nShorter.\n' }) : call('finish', { title: 'Shorter', summary: 'Shorter.' })));
    const opened = await e.server.api('POST', `/v2/agent/${other}/job`, { key: otherKey, body: { prompt: 'Shorten the quickstart.' } });
    const openJob = await waitForJob(e.server, other, opened.body.id, otherKey);
    expect(openJob.prLink).not.toBeNull();
    const open = await e.server.api('GET', `/v2/agent/${other}/job/${openJob.id}/impact`, { key: otherKey });
    expect(open.status).toBe(409);
    expect(open.body.code).toBe('impact_not_ready');
    expect(open.body.error).toMatch(/is not merged yet/);
    // One closed without merging.
    turn = 0;
    const closing = await e.server.api('POST', `/v2/agent/${other}/job`, { key: otherKey, body: { prompt: 'Shorten the quickstart again.' } });
    const closedJob = await waitForJob(e.server, other, closing.body.id, otherKey);
    e.host.github.pulls.find((p) => p.head === closedJob.source.ref)!.state = 'closed';
    const closed = await e.server.api('GET', `/v2/agent/${other}/job/${closedJob.id}/impact`, { key: otherKey });
    expect(closed.status).toBe(409);
    expect(closed.body.error).toMatch(/was closed without merging/);
    // A job that changed nothing has no pull request.
    e.llm.setResponder(() => call('finish', { title: 'Nothing', summary: 'Nothing to change.' }));
    const created = await e.server.api('POST', `/v2/agent/${other}/job`, { key: otherKey, body: { prompt: 'Check the docs.' } });
    await waitForJob(e.server, other, created.body.id, otherKey);
    const none = await e.server.api('GET', `/v2/agent/${other}/job/${created.body.id}/impact`, { key: otherKey });
    expect(none.status).toBe(409);
    expect(none.body.code).toBe('impact_not_ready');
    expect(none.body.error).toMatch(/has no pull request/);
  });
});
