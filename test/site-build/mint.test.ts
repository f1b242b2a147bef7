// `mint broken-links` (the npm `mint` CLI from the tool cache, run with no network in its sandbox)
// on a two-page Mintlify site: each broken link a problem with its file and line, a link the job
// added blamed on the job and one already on the base branch not. Needs bubblewrap and the tool
// cache where the server looks by default, /opt/folio/build-tools, or FOLIO_BUILD_TOOLS_DIR
// (`.ci/run` runs scripts/install-build-tools.sh); skips by name without them.
import { spawnSync } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { detectDocs } from '../../src/agent/prompts.ts';
import { openWorkspace } from '../../src/agent/workspace.ts';
import { SiteBuilds } from '../../src/site-build/index.ts';
import { tempDir } from '../helpers/server.ts';

const TOOLS = process.env.FOLIO_BUILD_TOOLS_DIR ?? '/opt/folio/build-tools';
const HAS_BWRAP = spawnSync('bwrap', ['--version']).status === 0;
const HAS_MINT = existsSync(path.join(TOOLS, 'mint/node_modules/.bin/mint'));

const DOCS_JSON = JSON.stringify({
  $schema: 'https://mintlify.com/docs.json',
  theme: 'mint',
  name: 'Acme',
  colors: { primary: '#0D9373' },
  navigation: { groups: [{ group: 'Start', pages: ['index', 'guide'] }] },
});
const BASE: Record<string, string> = {
  'docs.json': DOCS_JSON,
  'index.mdx': '---\ntitle: Home\n---\n\nSee [the guide](/guide) and [the old page](/old-page).\n',
  'guide.mdx': '---\ntitle: Guide\n---\n\nBack [home](/).\n',
};

let dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(!HAS_BWRAP || !HAS_MINT)('mint broken-links on a Mintlify site (needs bubblewrap and the mint tool cache)', () => {
  let builds: SiteBuilds;
  let site: string;
  beforeAll(() => {
    const [dataDir, buildDir] = [tempDir('folio-mint-data-'), tempDir('folio-mint-build-')];
    site = tempDir('folio-mint-site-');
    dirs = [dataDir, buildDir, site];
    for (const [f, text] of Object.entries(BASE)) writeFileSync(path.join(site, f), text);
    builds = new SiteBuilds(loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'x'.repeat(32), FOLIO_BUILD_DIR: buildDir, FOLIO_BUILD_TOOLS_DIR: TOOLS }).build);
  });

  it('reports the link the job broke with its file and line, and not the one already on the base branch', { timeout: 240_000 }, async () => {
    // The job adds a broken link to guide.mdx.
    writeFileSync(path.join(site, 'guide.mdx'), '---\ntitle: Guide\n---\n\nBack [home](/).\n\nBroken [link](/nope/deeper#x).\n');
    const ws = await openWorkspace(site);
    ws.touched.add('guide.mdx');
    const turn = builds.forTurn({
      profile: await detectDocs(ws),
      settings: { enabled: true, setup: null, command: null, timeoutSeconds: 180 },
      base: async () => ({ files: Object.keys(BASE), readMany: async (paths) => new Map(paths.filter((p) => p in BASE).map((p) => [p, BASE[p]])) }),
      priorChanges: async () => [],
      signal: new AbortController().signal,
    })!;
    const r = (await turn.run(ws))!;
    expect(r.report).toMatchObject({ tool: 'mint', command: 'mint broken-links', status: 'failed', setup: 'none' });
    expect(r.problems).toEqual([{ check: 'build', path: 'guide.mdx', line: 7, target: '/nope/deeper#x', message: 'mint broken-links: "/nope/deeper#x" is a broken link.' }]);
    expect(r.preExisting).toEqual([{ check: 'build', path: 'index.mdx', line: 5, target: '/old-page', message: 'mint broken-links: "/old-page" is a broken link.' }]);
  });
});
