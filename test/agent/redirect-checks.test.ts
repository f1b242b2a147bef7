// The docs checks prove a redirect fix on each framework that declares redirects: Mintlify's
// `redirects`, Docusaurus's client-redirects plugin, MkDocs's redirects plugin. A redirect the job
// adds must lead to a page and not in a circle; one that was already broken is not the job's.
import { describe, expect, it } from 'vitest';
import { redirectLoops, type ChecksReport } from '../../src/agent/checks/index.ts';
import { clientRedirectsOf } from '../../src/agent/checks/frameworks/client-redirects.ts';
import type { Workspace } from '../../src/agent/workspace.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS } from '../fixtures/docs-sites.ts';
import { checkEdit as editAndCheck } from '../helpers/checks.ts';

const checkEdit = async (files: Record<string, string>, edit: (ws: Workspace) => Promise<unknown>): Promise<ChecksReport> => (await editAndCheck(files, edit)).report;

const redirectProblems = (r: ChecksReport) => r.problems.filter((p) => p.check === 'redirects').map((p) => `${p.path} ${p.target}`);

// ---------------------------------------------------------------------------- Docusaurus

const docusaurusConfig = (redirects: string) =>
  `module.exports = {
  title: 'Acme',
  presets: [['classic', { docs: { sidebarPath: './sidebars.js' } }]],
  plugins: [
    [
      '@docusaurus/plugin-client-redirects',
      {
        // Old addresses of moved docs.
        redirects: [${redirects}],
      },
    ],
  ],
};
`;
const withClientRedirects = { ...DOCUSAURUS.files, 'docusaurus.config.js': docusaurusConfig(`{ from: '/docs/old-intro', to: '/' }`) };

describe('Docusaurus client-redirects', () => {
  it('reads from (a string or a list) and to, skipping comments and computed entries', () => {
    const text = docusaurusConfig(`
      { from: '/docs/a', to: '/docs/guides/auth' }, // one
      { from: ["/docs/b", '/docs/c'], to: "/docs/guides/webhooks#signing" },
      /* { from: '/commented', to: '/out' }, */
      { from: someVariable, to: '/docs/x' },
      { to: '/docs/guides/auth', from: '/docs/d' },`);
    expect(clientRedirectsOf(text)).toEqual([
      { source: '/docs/a', destination: '/docs/guides/auth' },
      { source: '/docs/b', destination: '/docs/guides/webhooks#signing' },
      { source: '/docs/c', destination: '/docs/guides/webhooks#signing' },
      { source: '/docs/d', destination: '/docs/guides/auth' },
    ]);
    expect(clientRedirectsOf(DOCUSAURUS.files['docusaurus.config.js'])).toBeNull();
  });

  it('reads a TypeScript docusaurus.config.ts and the require.resolve form', () => {
    const ts = `import type {Config} from '@docusaurus/types';
      const config: Config = {
        title: 'Acme',
        plugins: [[require.resolve('@docusaurus/plugin-client-redirects'), { redirects: [{ from: '/docs/a' as string, to: '/docs/b' }] }]],
      } satisfies Config;
      export default config;`;
    expect(clientRedirectsOf(ts)).toEqual([{ source: '/docs/a', destination: '/docs/b' }]);
  });

  it('a redirect the job adds must lead to a doc; one to an existing doc passes', async () => {
    const ok = await checkEdit(withClientRedirects, (w) =>
      w.writeText('docusaurus.config.js', docusaurusConfig(`{ from: '/docs/old-intro', to: '/' }, { from: '/docs/hooks', to: '/docs/guides/webhooks' }`)),
    );
    expect(ok.ran).toContain('redirects');
    expect(redirectProblems(ok)).toEqual([]);
    const bad = await checkEdit(withClientRedirects, (w) =>
      w.writeText('docusaurus.config.js', docusaurusConfig(`{ from: '/docs/old-intro', to: '/' }, { from: '/docs/hooks', to: '/docs/guides/missing' }`)),
    );
    expect(redirectProblems(bad)).toEqual(['docusaurus.config.js /docs/guides/missing']);
    expect(bad.problems.find((p) => p.check === 'redirects')!.message).toBe('The redirect from "/docs/hooks" leads to "/docs/guides/missing", which is not a page.');
  });

  it('a moved doc needs its old address in the plugin', async () => {
    const report = await checkEdit(withClientRedirects, async (w) => {
      await w.writeText('docs/guides/authentication.md', DOCUSAURUS.files['docs/guides/auth.md']);
      await w.remove('docs/guides/auth.md');
    });
    const moved = report.problems.find((p) => p.check === 'redirects');
    expect(moved?.message).toContain("add { from: '/docs/guides/auth', to: '/docs/guides/authentication' } to the client-redirects plugin's \"redirects\" in docusaurus.config.js");
  });

  it('redirects in a circle are a problem', async () => {
    const report = await checkEdit(withClientRedirects, (w) =>
      w.writeText('docusaurus.config.js', docusaurusConfig(`{ from: '/docs/old-intro', to: '/' }, { from: '/docs/x', to: '/docs/y' }, { from: '/docs/y/', to: '/docs/x' }`)),
    );
    expect(redirectProblems(report)).toContain('docusaurus.config.js /docs/x');
    expect(report.problems.find((p) => p.message.includes('circle'))!.message).toBe(
      'The redirects "/docs/x" → "/docs/y" → "/docs/x" lead in a circle and never reach a page: point one of them at a page.',
    );
  });
});

// ---------------------------------------------------------------------------- MkDocs

const mkdocsWith = (maps: Record<string, string>) =>
  `${MKDOCS.files['mkdocs.yml']}plugins:\n  - search\n  - redirects:\n      redirect_maps:\n${Object.entries(maps)
    .map(([from, to]) => `        '${from}': '${to}'\n`)
    .join('')}`;

describe('MkDocs redirects plugin', () => {
  const base = { ...MKDOCS.files, 'mkdocs.yml': mkdocsWith({ 'old.md': 'index.md' }) };

  it('a redirect_maps entry must lead to a page under docs_dir (another site only when the project lists its host)', async () => {
    const ok = await checkEdit(base, (w) => w.writeText('mkdocs.yml', mkdocsWith({ 'old.md': 'index.md', 'hooks.md': 'guides/webhooks.md' })));
    expect(ok.ran).toContain('redirects');
    expect(redirectProblems(ok)).toEqual([]);
    const external = mkdocsWith({ 'old.md': 'index.md', 'ext.md': 'https://example.org/x' });
    expect(redirectProblems(await checkEdit(base, (w) => w.writeText('mkdocs.yml', external)))).toEqual(['mkdocs.yml https://example.org/x']);
    const listed = await editAndCheck(base, (w) => w.writeText('mkdocs.yml', external), [], { policy: { redirectHosts: ['example.org'], suggestion: null } });
    expect(redirectProblems(listed.report)).toEqual([]);
    const bad = await checkEdit(base, (w) => w.writeText('mkdocs.yml', mkdocsWith({ 'old.md': 'index.md', 'hooks.md': 'guides/hooks.md' })));
    expect(redirectProblems(bad)).toEqual(['mkdocs.yml guides/hooks.md']);
  });

  it('a circle of redirect_maps entries is a problem; one already there on the base is not the job\'s', async () => {
    const loop = { 'old.md': 'index.md', 'a.md': 'b.md', 'b.md': 'a.md' };
    const report = await checkEdit(base, (w) => w.writeText('mkdocs.yml', mkdocsWith(loop)));
    expect(redirectProblems(report).some((p) => p.startsWith('mkdocs.yml /a'))).toBe(true);
    const untouched = await checkEdit({ ...MKDOCS.files, 'mkdocs.yml': mkdocsWith(loop) }, async (w) => {
      await w.writeText('docs/guides/new.md', '# New\n');
    });
    expect(redirectProblems(untouched)).toEqual([]);
  });

  it('a site without the plugin runs no redirect check', async () => {
    const report = await checkEdit(MKDOCS.files, (w) => w.writeText('docs/guides/new.md', '# New\n'));
    expect(report.ran).not.toContain('redirects');
  });
});

// ---------------------------------------------------------------------------- Mintlify

describe('Mintlify redirects', () => {
  it('redirects in a circle are a problem (a self-redirect too)', async () => {
    const report = await checkEdit(MINTLIFY.files, async (w) => {
      const config = JSON.parse(MINTLIFY.files['docs.json']);
      config.redirects.push({ source: '/p', destination: '/q' }, { source: '/q', destination: '/p' }, { source: '/self', destination: '/self' });
      await w.writeText('docs.json', JSON.stringify(config));
    });
    expect(redirectProblems(report).filter((p) => !p.endsWith('/p') && !p.endsWith('/q') && !p.endsWith('/self'))).toEqual([]);
    const circles = report.problems.filter((p) => p.message.includes('circle')).map((p) => p.target);
    expect(circles.sort()).toEqual(['/p', '/self']);
  });

  it('finds each circle once, whichever address it is entered from', () => {
    expect(redirectLoops([
      { source: '/c', destination: '/a' },
      { source: '/a', destination: '/b' },
      { source: '/b', destination: '/c' },
      { source: '/d', destination: '/a' },
      { source: '/e', destination: '/guides/:slug*' },
      { source: '/f/:slug*', destination: '/f/:slug*' },
    ])).toEqual([['/a', '/b', '/c']]);
  });
});
