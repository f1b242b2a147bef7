// `docusaurus build` as the site build: the setup step (`npm install` of the site's pinned packages,
// with the registries reachable because the operator allowed it) runs once, the build itself runs
// with no network, and a broken link the job added fails it. Slow (a few hundred MB from npm), so it
// runs only in the scale leg (FOLIO_TEST_BACKEND=scale) and skips by name without bubblewrap.
import { spawnSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { detectDocs } from '../../src/agent/prompts.ts';
import { openWorkspace } from '../../src/agent/workspace.ts';
import { SiteBuilds } from '../../src/site-build/index.ts';
import { tempDir } from '../helpers/server.ts';

const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;
const SCALE = process.env.FOLIO_TEST_BACKEND === 'scale';

const SITE: Record<string, string> = {
  'package.json': JSON.stringify({
    name: 'acme-docs',
    private: true,
    dependencies: { '@docusaurus/core': '3.9.2', '@docusaurus/preset-classic': '3.9.2', react: '19.2.0', 'react-dom': '19.2.0' },
    // Without a lockfile npm takes the newest webpack, whose ProgressPlugin options this Docusaurus refuses.
    overrides: { webpack: '5.99.9' },
  }),
  'docusaurus.config.js': `module.exports = {
  title: 'Acme', url: 'https://docs.acme.dev', baseUrl: '/', onBrokenLinks: 'throw',
  presets: [['classic', { docs: { routeBasePath: '/', sidebarPath: require.resolve('./sidebars.js') }, blog: false, theme: {} }]],
};
`,
  'sidebars.js': "module.exports = { docs: ['intro', 'guide'] };\n",
  'docs/intro.md': '---\nslug: /\n---\n\n# Intro\n\nSee [the guide](guide.md).\n',
  'docs/guide.md': '# Guide\n\nBack to [the intro](intro.md).\n',
};

let dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!HAS_BWRAP || !SCALE)('docusaurus build (scale leg only; needs bubblewrap and the npm registry)', () => {
  let builds: SiteBuilds;
  let site: string;
  beforeAll(() => {
    const [dataDir, buildDir] = [tempDir('folio-docu-data-'), tempDir('folio-docu-build-')];
    site = tempDir('folio-docu-site-');
    dirs = [dataDir, buildDir, site];
    for (const [f, text] of Object.entries(SITE)) {
      mkdirSync(path.dirname(path.join(site, f)), { recursive: true });
      writeFileSync(path.join(site, f), text);
    }
    builds = new SiteBuilds(loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'x'.repeat(32), FOLIO_BUILD_DIR: buildDir, FOLIO_BUILD_SETUP_NETWORK: 'true' }).build);
  });

  async function build(touched: string[]) {
    const ws = await openWorkspace(site);
    for (const t of touched) ws.touched.add(t);
    const turn = builds.forTurn({
      profile: await detectDocs(ws),
      settings: { enabled: true, setup: null, command: null, timeoutSeconds: 600 },
      base: async () => ({ files: Object.keys(SITE), readMany: async (paths) => new Map(paths.filter((p) => p in SITE).map((p) => [p, SITE[p]])) }),
      priorChanges: async () => [],
      signal: new AbortController().signal,
    })!;
    return (await turn.run(ws))!;
  }

  it('installs once, builds, and fails on a broken link the job added', { timeout: 900_000 }, async () => {
    const ok = await build([]);
    expect({ ...ok.report, problems: [...ok.problems, ...ok.preExisting].map((p) => p.message) }).toMatchObject({ tool: 'docusaurus', status: 'passed', setup: 'ran', problems: [] });
    writeFileSync(path.join(site, 'docs/guide.md'), '# Guide\n\nBack to [the intro](intro.md) and [nowhere](/nowhere).\n');
    const broken = await build(['docs/guide.md']);
    expect(broken.report).toMatchObject({ status: 'failed', setup: 'cached' });
    expect(broken.problems).toEqual([
      { check: 'build', path: 'docusaurus.config.js', line: null, target: '/guide -> /nowhere', message: 'docusaurus build: the page /guide links to /nowhere, which is not a page.' },
    ]);
  });
});
