// The site build's pieces on real files: the output of MkDocs and `mint broken-links` read as
// problems with file and line, which build a site gets (and the sentence when it cannot run here),
// and the setup step run once per set of lockfiles, its result read-only to the builds after it.
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig, type BuildConfig } from '../../src/config.ts';
import { detectDocs, type DocsProfile } from '../../src/agent/prompts.ts';
import { openWorkspace } from '../../src/agent/workspace.ts';
import { buildProblems, cleanOutput } from '../../src/site-build/problems.ts';
import { planBuild } from '../../src/site-build/plans.ts';
import { SiteBuilds, withBuild } from '../../src/site-build/index.ts';
import { tempDir } from '../helpers/server.ts';

const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;
const PAGES: Record<string, string> = {
  'docs/guides/limits.md': '# Limits\n\nText.\n\nSee [the API](api.md) and [x](../missing.md#a).\n',
  'guide.mdx': '---\ntitle: Guide\n---\n\nBack [home](/).\n\nBroken [link](/nope/deeper#x).\n',
  'index.mdx': 'See [nothing](/missing-page).\n',
};
const read = async (p: string) => PAGES[p] ?? null;

describe('build output as problems', () => {
  it('reads MkDocs WARNING and ERROR lines (1.4 and later wordings), with the page and the line of its link', async () => {
    const text = [
      'INFO     -  Cleaning site directory',
      "\x1b[33mWARNING \x1b[0m -  Documentation file 'guides/limits.md' contains a link to 'guides/api.md' which is not found in the documentation files.",
      "WARNING -  Doc file 'guides/limits.md' contains a link '../missing.md#a', but the target is not found among documentation files.",
      "ERROR    -  Config value 'plugins': The \"search2\" plugin is not installed",
      'Aborted with 3 warnings in strict mode!',
    ].join('\n');
    const problems = await buildProblems({ tool: 'mkdocs', cwd: '', docsRoot: 'docs', configFile: 'mkdocs.yml', text: cleanOutput(text, '/work'), passed: false, read });
    expect(problems).toEqual([
      { check: 'build', path: 'docs/guides/limits.md', line: 5, target: 'guides/api.md', message: "mkdocs: Documentation file 'guides/limits.md' contains a link to 'guides/api.md' which is not found in the documentation files." },
      { check: 'build', path: 'docs/guides/limits.md', line: 5, target: '../missing.md#a', message: "mkdocs: Doc file 'guides/limits.md' contains a link '../missing.md#a', but the target is not found among documentation files." },
      { check: 'build', path: 'mkdocs.yml', line: null, target: 'Config value \'plugins\': The "search2" plugin is not installed', message: 'mkdocs: Config value \'plugins\': The "search2" plugin is not installed' },
    ]);
  });

  it('reads `mint broken-links` output: each file, then its links', async () => {
    const text = 'found 2 broken links in 2 files\n\nguide.mdx\n ⎿  /nope/deeper#x\n\nindex.mdx\n ⎿  /missing-page\n';
    const problems = await buildProblems({ tool: 'mint', cwd: '', docsRoot: '', configFile: 'docs.json', text, passed: false, read });
    expect(problems).toEqual([
      { check: 'build', path: 'guide.mdx', line: 7, target: '/nope/deeper#x', message: 'mint broken-links: "/nope/deeper#x" is a broken link.' },
      { check: 'build', path: 'index.mdx', line: 1, target: '/missing-page', message: 'mint broken-links: "/missing-page" is a broken link.' },
    ]);
  });

  it('reads Docusaurus’s broken-links report: each page and the link it has', async () => {
    const text = '[ERROR] Error: Unable to build website for locale en.\n  [cause]: Error: Docusaurus found broken links!\n\n  - Broken link on source page path = /docs/guide:\n     -> linking to /docs/nowhere\n     -> linking to ../x\n';
    const problems = await buildProblems({ tool: 'docusaurus', cwd: '', docsRoot: 'docs', configFile: 'docusaurus.config.js', text, passed: false, read });
    expect(problems.map((p) => p.message)).toEqual([
      'docusaurus build: the page /docs/guide links to /docs/nowhere, which is not a page.',
      'docusaurus build: the page /docs/guide links to ../x, which is not a page.',
    ]);
  });

  it('a failed build whose output says nothing readable is one problem with its last lines; the sandbox’s paths are removed', async () => {
    const text = cleanOutput('step 1\nError: cannot read /work/src/x.md\nexit', '/work');
    const problems = await buildProblems({ tool: 'custom', cwd: '', docsRoot: '', configFile: '.', text, passed: false, read });
    expect(problems).toEqual([{ check: 'build', path: '.', line: null, target: null, message: 'The site build (custom) failed; its output ends with:\nstep 1\nError: cannot read src/x.md\nexit' }]);
    expect(await buildProblems({ tool: 'custom', cwd: '', docsRoot: '', configFile: '.', text: '', passed: true, read })).toEqual([]);
  });

  it('adds the build to the checks report: its problems among the others, `build` in what ran unless it was skipped', () => {
    const base = { framework: 'mkdocs', ran: ['links' as const], pagesChecked: 1, problems: [], preExisting: [], truncated: false };
    const report = { tool: 'mkdocs', command: 'mkdocs build --strict', status: 'failed' as const, reason: 'x', setup: 'none' as const, ms: 5 };
    const p = { check: 'build' as const, path: 'mkdocs.yml', line: null, target: 't', message: 'm' };
    expect(withBuild(base, { report, problems: [p], preExisting: [] })).toEqual({ ...base, ran: ['links', 'build'], problems: [p], build: report });
    expect(withBuild(base, { report: { ...report, status: 'skipped' }, problems: [], preExisting: [] }).ran).toEqual(['links']);
    expect(withBuild(base, null)).toBe(base);
  });
});

describe('which build a site gets', () => {
  const profile = (framework: string, configFile: string | null): DocsProfile => ({ framework, configFile, docsRoot: 'docs', mdFormat: 'md', headingIds: false, conventions: [], markdownFiles: 1 }) as DocsProfile;
  const none = async () => false;
  const settings = { enabled: true, setup: null, command: null, timeoutSeconds: null };

  it('the project’s command first, then the framework’s; none for a site without a build', async () => {
    expect(await planBuild(profile('mkdocs', 'mkdocs.yml'), { ...settings, command: 'make docs', setup: 'make deps' }, { toolsDir: '/nowhere', setupNetwork: false }, none)).toMatchObject({ tool: 'custom', command: 'make docs', setup: 'make deps' });
    expect(await planBuild(profile('plain', null), settings, { toolsDir: '/nowhere', setupNetwork: false }, none)).toBeNull();
  });

  it('says in one sentence why a framework’s build cannot run here', async () => {
    expect(await planBuild(profile('mintlify', 'docs.json'), settings, { toolsDir: '/nowhere', setupNetwork: false }, none)).toEqual({
      tool: 'mint',
      command: 'mint broken-links',
      skip: 'The Mintlify CLI is not in the build tool cache (/nowhere/mint), so the site build did not run: run scripts/install-build-tools.sh, or, in Folio\'s image, add mint to the build argument FOLIO_BUILD_TOOLS (docs/deployment.md).',
    });
    expect(await planBuild(profile('docusaurus', 'website/docusaurus.config.js'), settings, { toolsDir: '/nowhere', setupNetwork: false }, none)).toMatchObject({
      tool: 'docusaurus',
      skip: "Docusaurus needs the site's npm packages and the setup step may not reach the registries (FOLIO_BUILD_SETUP_NETWORK is off), so the site build did not run.",
    });
    const has = async (p: string) => p === 'website/package-lock.json';
    expect(await planBuild(profile('docusaurus', 'website/docusaurus.config.js'), settings, { toolsDir: '/nowhere', setupNetwork: true }, has)).toMatchObject({
      tool: 'docusaurus',
      cwd: 'website',
      setup: 'npm ci --no-audit --no-fund',
      lockfiles: ['website/package-lock.json'],
    });
  });
});

describe.skipIf(!HAS_BWRAP)('the setup step (needs bubblewrap)', () => {
  let dataDir: string;
  let buildDir: string;
  let site: string;
  let config: BuildConfig;
  beforeAll(() => {
    dataDir = tempDir('folio-setup-data-');
    buildDir = tempDir('folio-setup-build-');
    site = tempDir('folio-setup-site-');
    writeFileSync(path.join(site, 'package.json'), '{"name":"site","version":"1.0.0"}\n');
    mkdirSync(path.join(site, 'docs'));
    writeFileSync(path.join(site, 'docs/index.md'), '# Home\n');
    config = loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'x'.repeat(32), FOLIO_BUILD_DIR: buildDir }).build;
  });
  afterAll(() => {
    for (const d of [dataDir, buildDir, site]) if (d) rmSync(d, { recursive: true, force: true });
  });

  async function run(builds: SiteBuilds, setup: string, command: string) {
    const ws = await openWorkspace(site);
    const turn = builds.forTurn({
      profile: await detectDocs(ws),
      settings: { enabled: true, setup, command, timeoutSeconds: null },
      base: async () => ({ files: [], readMany: async () => new Map() }),
      priorChanges: async () => [],
      signal: new AbortController().signal,
    })!;
    return (await turn.run(ws))!;
  }

  it('runs once per lockfiles: a fix round reuses it, read-only; a changed lockfile runs it again', async () => {
    const builds = new SiteBuilds(config);
    const setup = 'mkdir -p vendor/.bin && echo "echo tool-from-setup" > vendor/.bin/t && date +%s%N > vendor/stamp';
    const command = 'cat vendor/stamp; sh vendor/.bin/t; if echo x > vendor/stamp; then echo WRITABLE; fi; exit 1';
    const first = await run(builds, setup, command);
    expect(first.report.setup).toBe('ran');
    const out1 = [...first.problems, ...first.preExisting][0].message;
    expect(out1).toContain('tool-from-setup');
    expect(out1).not.toContain('WRITABLE');
    const stamp = /\n(\d{10,})\n/.exec(out1)![1];

    const again = await run(builds, setup, command);
    expect(again.report.setup).toBe('cached');
    expect([...again.problems, ...again.preExisting][0].message).toContain(stamp);

    writeFileSync(path.join(site, 'package.json'), '{"name":"site","version":"1.0.1"}\n');
    const changed = await run(builds, setup, command);
    expect(changed.report.setup).toBe('ran');
    expect([...changed.problems, ...changed.preExisting][0].message).not.toContain(stamp);
    // The worktree itself never sees what the setup made.
    expect(() => readFileSync(path.join(site, 'vendor/stamp'))).toThrow();
  });

  it('a failing setup fails the build with its own problem, and has no network unless the operator allows it', async () => {
    const r = await run(new SiteBuilds(config), 'getent hosts registry.npmjs.org || echo no-network; exit 7', 'true');
    expect(r.report).toMatchObject({ status: 'failed', setup: 'ran' });
    expect([...r.problems, ...r.preExisting][0]).toMatchObject({ check: 'build', target: 'setup', message: expect.stringMatching(/^The build's setup step \(getent .*\) exited with code 7; its output ends with:\nno-network$/) });
  });
});
