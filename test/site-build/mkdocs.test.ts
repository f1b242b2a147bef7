// The site's own build as a check, end to end: a real Folio server with the real agent, a scripted
// model, the fake code host, and the real `mkdocs build --strict` under bubblewrap. The build's
// warnings go back to the model in a fix round, to the job's checks and to the pull request; strict
// mode fails a job whose build still fails; a build already failing on the base branch is not
// blamed; /healthz stays fast while a build runs. Skips by name without bubblewrap or mkdocs (CI has both).
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeReply } from '../fixtures/fake-openai.ts';
import { jobEvents, startE2E, waitForJob, type E2E } from '../agent/e2e-helpers.ts';
import { tempDir } from '../helpers/server.ts';

const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;
const HAS_MKDOCS = ['/usr/bin/mkdocs', '/usr/local/bin/mkdocs'].some((p) => existsSync(p));

/** A plain MkDocs site (the built-in theme: no plugins to install). */
const SITE = {
  'mkdocs.yml': 'site_name: Acme\nnav:\n  - Home: index.md\n  - Guides:\n      - guides/auth.md\n',
  'docs/index.md': '# Acme\n\nSee [tokens](guides/auth.md#api-tokens).\n',
  'docs/guides/auth.md': '# Auth\n\n## API tokens\n\nCreate one in the dashboard.\n',
};

const call = (name: string, args: Record<string, unknown>): FakeReply => ({ toolCalls: [{ name, args }] });
const finish = (title: string, summary: string) => call('finish', { title, summary });

let e: E2E;
let buildDir: string;
beforeAll(async () => {
  buildDir = tempDir('folio-build-e2e-');
  e = await startE2E({ FOLIO_BUILD_DIR: buildDir, FOLIO_BUILD_PROCESSES: '64' });
});
afterAll(async () => {
  await e?.close();
  if (buildDir) rmSync(buildDir, { recursive: true, force: true });
});

async function runJob(repo: string, files: Record<string, string>, replies: FakeReply[], project: Record<string, unknown> = {}) {
  const url = e.host.createRepo(repo, files);
  const projectId = await e.server.createProject({ repositoryUrl: url, codeHost: 'github', ...project });
  const key = await e.server.createKey(projectId);
  let i = 0;
  e.llm.setResponder(() => replies[i++] ?? finish('Done', 'Script ended.'));
  const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Describe the site' } });
  expect(created.status).toBe(201);
  const job = await waitForJob(e.server, projectId, created.body.id, key, undefined, 90_000);
  const checks = (await jobEvents(e.server, projectId, job.id, key)).filter((x) => x.type === 'checks').map((x) => x.data);
  return { job, checks, projectId, key };
}

/** What the model was told last (the fix request of a round). */
const lastToldToModel = () =>
  e.llm.requests
    .at(-1)!
    .messages.filter((m) => m.role === 'user')
    .map((m) => (typeof m.content === 'string' ? m.content : JSON.stringify(m.content)))
    .join('\n');

const BREAK_CONFIG = call('edit_file', { path: 'mkdocs.yml', old_string: 'site_name: Acme\n', new_string: 'site_name: Acme\nsite_descriptio: Docs for Acme\n' });
const FIX_CONFIG = call('edit_file', { path: 'mkdocs.yml', old_string: 'site_descriptio:', new_string: 'site_description:' });
const ADD_LINE = call('edit_file', { path: 'docs/guides/auth.md', old_string: 'Create one in the dashboard.', new_string: 'Create one in the dashboard; tokens expire after 90 days.' });

describe.skipIf(!HAS_BWRAP || !HAS_MKDOCS)('mkdocs build --strict as a check (needs bubblewrap and mkdocs)', () => {
  it('a change that breaks the strict build is sent back with the build’s warning, fixed in a fix round, and the PR says the build passed', async () => {
    const repo = 'acme/build-fix';
    const { job, checks } = await runJob(repo, SITE, [ADD_LINE, BREAK_CONFIG, finish('Expiry', 'Documented token expiry.'), FIX_CONFIG, finish('Expiry', 'Fixed the configuration key.')]);
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');
    // Round 1: Folio's own checks pass, the build does not; round 2: everything passes.
    expect(checks.map((c) => [c.ok, c.build.status])).toEqual([
      [false, 'failed'],
      [true, 'passed'],
    ]);
    expect(checks[0].build).toMatchObject({ tool: 'mkdocs', setup: 'none' });
    expect(checks[0].build.command).toMatch(/^mkdocs build --strict --config-file 'mkdocs.yml'/);
    expect(checks[0].problems).toEqual([
      expect.objectContaining({ check: 'build', path: 'mkdocs.yml', message: expect.stringMatching(/^mkdocs: Config value:? '?site_descriptio'?.*Unrecognised configuration name: site_descriptio/) }),
    ]);
    expect(checks[1].ran).toContain('build');
    // The fix round told the model what the build said.
    const toldInRound = e.llm.requests.find((r) => JSON.stringify(r.messages).includes('Unrecognised configuration name'));
    expect(toldInRound).toBeDefined();
    const pr = e.host.github.pulls.find((x) => x.repo === 'build-fix')!;
    expect(pr.body).toMatch(/✅ Site build \(mkdocs\): `mkdocs build --strict .*` passed in \d+\.\d s\./);
  });

  it('a broken link the build reports carries its file and line', async () => {
    const { checks } = await runJob('acme/build-lines', SITE, [
      call('write_file', { path: 'docs/guides/limits.md', content: '# Limits\n\nSome text.\n\nSee [the API](api.md).\n' }),
      call('edit_file', { path: 'mkdocs.yml', old_string: '      - guides/auth.md\n', new_string: '      - guides/auth.md\n      - guides/limits.md\n' }),
      finish('Limits', 'Added limits.'),
      finish('Limits', 'Left as is.'),
      finish('Limits', 'Left as is.'),
      finish('Limits', 'Left as is.'),
    ]);
    const build = checks[0].problems.filter((p: any) => p.check === 'build');
    expect(build).toEqual([expect.objectContaining({ path: 'docs/guides/limits.md', line: 5, target: 'guides/api.md' })]);
    // Folio's own link check finds the same link.
    expect(checks[0].problems).toContainEqual(expect.objectContaining({ check: 'links', path: 'docs/guides/limits.md', line: 5 }));
    expect(lastToldToModel()).toContain('docs/guides/limits.md:5 (build): mkdocs:');
  });

  it('strict: a build the job cannot fix fails the job with checks_failed', async () => {
    const { job } = await runJob('acme/build-strict', SITE, [ADD_LINE, BREAK_CONFIG, finish('A', 'a'), finish('A', 'b'), finish('A', 'c'), finish('A', 'd')], { checks: 'strict' });
    expect(job.status).toBe('failed');
    expect(job.error.code).toBe('checks_failed');
    expect(job.error.message).toMatch(/mkdocs\.yml: mkdocs: Config value.*site_descriptio/);
  });

  it('a build already failing on the base branch is not blamed, and the project can turn builds off', async () => {
    const broken = { ...SITE, 'mkdocs.yml': `${SITE['mkdocs.yml']}unknown_key: 1\n` };
    const { job, checks } = await runJob('acme/build-base', broken, [ADD_LINE, finish('Expiry', 'Documented token expiry.')], { checks: 'strict' });
    expect(job.status).toBe('completed');
    expect(checks).toHaveLength(1);
    expect(checks[0]).toMatchObject({ ok: true, preExistingCount: 1, build: { status: 'failed' } });
    expect(checks[0].preExisting[0]).toMatchObject({ check: 'build', path: 'mkdocs.yml' });

    const off = await runJob('acme/build-off', SITE, [ADD_LINE, BREAK_CONFIG, finish('Expiry', 'Documented.')], { checks: 'strict', build: 'off' });
    expect(off.job.status).toBe('completed');
    expect(off.checks[0].build).toBeUndefined();
    expect(off.checks[0].ran).not.toContain('build');
  });

  it('/healthz stays fast while a build forks and burns CPU in its sandbox', async () => {
    const url = e.host.createRepo('acme/build-heavy', SITE);
    const projectId = await e.server.createProject({
      repositoryUrl: url,
      codeHost: 'github',
      buildCommand: 'b() { b | b & }; b; i=0; while [ $i -lt 3000000 ]; do i=$((i+1)); done; exit 0',
      buildTimeoutSeconds: 10,
    });
    const key = await e.server.createKey(projectId);
    let i = 0;
    const replies = [ADD_LINE, finish('Expiry', 'Documented.')];
    e.llm.setResponder(() => replies[i++] ?? finish('Done', 'Done.'));
    const created = await e.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: 'Describe' } });
    const latencies: number[] = [];
    for (const started = Date.now(); Date.now() - started < 60_000; ) {
      const t = Date.now();
      const res = await fetch(`${e.server.url}/healthz`);
      latencies.push(Date.now() - t);
      expect(res.status).toBe(200);
      const job = (await e.server.api('GET', `/v2/agent/${projectId}/job/${created.body.id}`, { key })).body;
      if (job.status !== 'active') break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const job = await waitForJob(e.server, projectId, created.body.id, key);
    const checks = (await jobEvents(e.server, projectId, job.id, key)).filter((x) => x.type === 'checks');
    // The build ran for seconds, and /healthz was asked all along.
    expect(checks[0].data.build.tool).toBe('custom');
    expect(checks[0].data.build.ms).toBeGreaterThan(1000);
    expect(latencies.length).toBeGreaterThan(5);
    // Measured while the build ran (the task asks for it explicitly): every answer well under a second.
    expect(Math.max(...latencies)).toBeLessThan(1000);
  });
});

