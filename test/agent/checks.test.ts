// The docs-aware checks on real folders, one fixture per framework: links, anchors (each framework's
// slug rules), assets, navigation, redirects of moved pages, blame against the base, hostile input.
import http from 'node:http';
import { describe, expect, it } from 'vitest';
import type { ChecksReport } from '../../src/agent/checks/index.ts';
import { sidebarScript } from '../../src/agent/checks/frameworks.ts';
import { explicitHeadingId, parsePage } from '../../src/agent/checks/markdown.ts';
import { redirectMatcher } from '../../src/agent/checks/site.ts';
import { anchorsFor, hasAnchor, pythonMarkdownSlug } from '../../src/agent/checks/slugs.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS } from '../fixtures/docs-sites.ts';
import { checkEdit } from '../helpers/checks.ts';

const summary = (r: ChecksReport) => r.problems.map((p) => `${p.check} ${p.path} ${p.target}`).sort();

describe('Mintlify', () => {
  it('nothing changed: nothing checked, nothing blamed', async () => {
    const { report } = await checkEdit(MINTLIFY.files, async () => {});
    expect(report).toMatchObject({ framework: 'mintlify', pagesChecked: 0, problems: [], preExisting: [] });
    expect(report.ran).toEqual(['links', 'anchors', 'assets', 'navigation', 'redirects']);
  });

  it('a pre-existing broken link in an edited page is reported apart and never blamed', async () => {
    const { report } = await checkEdit(MINTLIFY.files, async (ws) => {
      await ws.writeText('quickstart.mdx', MINTLIFY.files['quickstart.mdx'].replace('Run `acme init`.', 'Run `acme init --yes`.'));
    });
    expect(report.problems).toEqual([]);
    expect(report.preExisting).toEqual([expect.objectContaining({ check: 'links', path: 'quickstart.mdx', target: MINTLIFY.brokenOnBase.href, line: 7 })]);
    // The same broken target added a second time is the job's.
    const twice = await checkEdit(MINTLIFY.files, async (ws) => {
      await ws.writeText('quickstart.mdx', MINTLIFY.files['quickstart.mdx'] + '\nAgain: [setup](/setup/legacy).\n');
    });
    expect(summary(twice.report)).toEqual(['links quickstart.mdx /setup/legacy']);
    expect(twice.report.preExisting).toHaveLength(1);
  });

  it('a new page: navigation, links without extension, anchors (Mintlify slugs), images', async () => {
    const page = [
      '---',
      'title: Rate limits',
      '---',
      '',
      '## Limits per key',
      '',
      'Fine: [quickstart](/quickstart), [what next](/quickstart#whats-next), [curly](/quickstart#what’s-next), [tokens](guides/auth#api-tokens), [self](#limits-per-key), [old](/old-start).',
      'Broken: [missing](/guides/missing), [bad anchor](/guides/auth#no-such-heading), [self](#nope).',
      '',
      '![Diagram](/images/diagram.png)',
      '<Card title="x" href="/guides/nowhere" />',
    ].join('\n');
    const { report, ws, again } = await checkEdit(MINTLIFY.files, async (w) => {
      await w.writeText('rate-limits.mdx', page);
    });
    expect(summary(report)).toEqual([
      'anchors rate-limits.mdx #nope',
      'anchors rate-limits.mdx /guides/auth#no-such-heading',
      'assets rate-limits.mdx /images/diagram.png',
      'links rate-limits.mdx /guides/missing',
      'links rate-limits.mdx /guides/nowhere',
      'navigation docs.json rate-limits.mdx',
    ]);
    const nav = report.problems.find((p) => p.check === 'navigation')!;
    expect(nav.message).toContain('add "rate-limits" to docs.json "navigation"');
    expect(report.problems.find((p) => p.target === '/guides/missing')!.line).toBe(8);

    // Fixed: listed in the navigation, links repaired, image added.
    const config = JSON.parse(MINTLIFY.files['docs.json']);
    config.navigation.tabs[0].groups[0].pages.push('rate-limits');
    await ws.writeText('docs.json', JSON.stringify(config));
    await ws.writeText('rate-limits.mdx', page.replace('/guides/missing', '/guides/webhooks').replace('#no-such-heading', '#api-tokens').replace('#nope', '#limits-per-key').replace('/guides/nowhere', '/guides/auth'));
    await ws.writeText('images/diagram.png', 'png');
    const fixed = await again();
    expect(fixed.problems).toEqual([]);
    expect(fixed.pagesChecked).toBe(1);
  });

  it('a moved page needs a redirect, a navigation entry, and links to its new address', async () => {
    const { report, ws, again } = await checkEdit(MINTLIFY.files, async (w) => {
      await w.move('guides/webhooks.mdx', 'guides/events/webhooks.mdx');
    });
    expect(summary(report)).toEqual([
      'links guides/auth.mdx webhooks',
      'links guides/events/webhooks.mdx ./auth#api-tokens',
      'navigation docs.json guides/events/webhooks.mdx',
      'navigation docs.json guides/webhooks',
      'redirects docs.json /guides/webhooks',
    ]);
    expect(report.problems.find((p) => p.check === 'redirects')!.message).toContain('{"source": "/guides/webhooks", "destination": "/guides/events/webhooks"}');
    expect(report.problems.find((p) => p.target === 'guides/webhooks')!.message).toContain('moved guides/webhooks.mdx to guides/events/webhooks.mdx');

    const config = JSON.parse(MINTLIFY.files['docs.json']);
    config.navigation.tabs[0].groups[1].pages[1].pages = ['guides/events/webhooks'];
    config.redirects.push({ source: '/guides/webhooks', destination: '/guides/events/webhooks' });
    await ws.writeText('docs.json', JSON.stringify(config));
    // With the redirect, the old address still works; the moved page's own relative link does not.
    expect(summary(await again())).toEqual(['links guides/events/webhooks.mdx ./auth#api-tokens']);
    await ws.writeText('guides/events/webhooks.mdx', '---\ntitle: Webhooks\n---\n\n## Signing\n\nBack to [auth](../auth#api-tokens).\n');
    expect(summary(await again())).toEqual([]);
  });

  it('a moved page found by its content across turns (delete and write)', async () => {
    const { report } = await checkEdit(MINTLIFY.files, async (w) => {
      await w.remove('guides/webhooks.mdx');
      await w.writeText('webhooks.mdx', MINTLIFY.files['guides/webhooks.mdx'].replace('./auth#api-tokens', '/guides/auth#api-tokens'));
      const config = JSON.parse(MINTLIFY.files['docs.json']);
      config.navigation.tabs[0].groups[1].pages[1].pages = ['webhooks'];
      await w.writeText('docs.json', JSON.stringify(config));
    });
    // Not identical content, but the only page with that name gone and one new: a move.
    expect(summary(report)).toEqual(['links guides/auth.mdx webhooks', 'redirects docs.json /guides/webhooks']);
  });

  it('a redirect to a page that does not exist is the job\'s problem', async () => {
    const { report } = await checkEdit(MINTLIFY.files, async (w) => {
      const config = JSON.parse(MINTLIFY.files['docs.json']);
      config.redirects.push({ source: '/a', destination: '/nowhere' }, { source: '/b/:slug*', destination: '/guides/:slug*' });
      await w.writeText('docs.json', JSON.stringify(config));
    });
    expect(summary(report)).toEqual(['redirects docs.json /nowhere']);
  });
});

describe('Docusaurus', () => {
  it('doc ids, slugs, number prefixes and sidebars', async () => {
    const page = '---\ntitle: Limits\n---\n\n## Per key\n\n[intro](/docs), [auth](./auth.md#api-tokens), [hooks](/docs/guides/webhooks#signing), [custom](./auth.md#custom-id), [gone](./missing.md), [url gone](/docs/guides/nope), [bad anchor](./auth.md#nope).\n\n![Logo](/img/logo.png) ![Lost](../img/lost.png)\n';
    const { report, ws, again } = await checkEdit(DOCUSAURUS.files, async (w) => {
      await w.writeText('docs/guides/limits.md', page);
    });
    expect(report.framework).toBe('docusaurus');
    expect(summary(report)).toEqual([
      'anchors docs/guides/limits.md ./auth.md#nope',
      'assets docs/guides/limits.md ../img/lost.png',
      'links docs/guides/limits.md ./missing.md',
      'links docs/guides/limits.md /docs/guides/nope',
      'navigation sidebars.js docs/guides/limits.md',
    ]);
    expect(report.problems.find((p) => p.check === 'navigation')!.message).toContain('add "guides/limits" to sidebars.js');
    await ws.writeText('sidebars.js', DOCUSAURUS.files['sidebars.js'].replace("'guides/auth',", "'guides/auth', 'guides/limits',"));
    await ws.writeText('docs/guides/limits.md', '---\ntitle: Limits\n---\n\n## Per key\n\n[auth](./auth.md#api-tokens)\n');
    expect((await again()).problems).toEqual([]);
  });

  it('a deleted doc: sidebar entry and inbound links; the pre-existing broken link is not blamed', async () => {
    const { report } = await checkEdit(DOCUSAURUS.files, async (w) => {
      await w.remove('docs/guides/02-webhooks.md');
      await w.writeText('docs/guides/auth.md', DOCUSAURUS.files['docs/guides/auth.md'] + '\nSee [hooks](/docs/guides/webhooks).\n');
    });
    expect(summary(report)).toEqual(['links docs/guides/auth.md /docs/guides/webhooks', 'navigation sidebars.js guides/webhooks']);
    expect(report.preExisting.map((p) => p.target)).toEqual([DOCUSAURUS.brokenOnBase.href]);
  });

  it('autogenerated sidebars need no entry', async () => {
    const files = { ...DOCUSAURUS.files, 'sidebars.js': "module.exports = { docs: [{ type: 'autogenerated', dirName: '.' }] };\n" };
    const { report } = await checkEdit(files, async (w) => {
      await w.writeText('docs/new.md', '# New\n');
    });
    expect(report.problems).toEqual([]);
    expect(report.ran).not.toContain('navigation');
  });

  it('reads sidebars.js without running it', () => {
    const src = `
      // 'commented' out
      /* ['also', 'not'] */
      const x = require('child_process'); // never run
      module.exports = {
        main: ['a', "b/c", { type: 'doc', id: 'd', label: 'Not an id' }, { type: 'link', href: 'https://x', label: 'x' }],
        'Category label': ['e'],
        gen: [{ type: 'category', label: 'G', items: [{ type: 'autogenerated', dirName: 'api' }] }, { dirName: 'ref', type: 'autogenerated' }],
        tpl: [\`f\`, \`\${'g'}\`],
      };`;
    expect(sidebarScript(src)).toEqual({ ids: ['child_process', 'a', 'b/c', 'd', 'e', 'f'].filter((x) => x !== 'child_process'), autogenerated: ['api', 'ref'] });
  });

  it('reads a TypeScript sidebars.ts (types, satisfies), and a file that does not parse as all generated', () => {
    const src = `import type {SidebarsConfig} from '@docusaurus/plugin-content-docs';
      const sidebars: SidebarsConfig = {
        main: ['intro', {type: 'category', label: 'Guides', items: ['guides/auth' as const]}, {type: 'autogenerated', dirName: 'api'}],
      } satisfies SidebarsConfig;
      export default sidebars;`;
    expect(sidebarScript(src)).toEqual({ ids: ['intro', 'guides/auth'], autogenerated: ['api'] });
    expect(sidebarScript("module.exports = { docs: ['a', ")).toEqual({ ids: [], autogenerated: ['.'] });
  });
});

describe('MkDocs', () => {
  it('relative .md links, Python-Markdown anchors, explicit nav', async () => {
    const { report, ws, again } = await checkEdit(MKDOCS.files, async (w) => {
      await w.writeText(
        'docs/guides/limits.md',
        '# Limits\n\n[auth](auth.md#api-tokens), [accented](auth.md#cafe-uber), [github style](auth.md#café-über), [home](../index.md), [dir url](../guides/auth/), [gone](../missing.md).\n\n## Per key { #per-key-custom }\n\n[self](#per-key-custom) ![img](../img/logo.png)\n',
      );
    });
    expect(report.framework).toBe('mkdocs');
    expect(summary(report)).toEqual([
      'anchors docs/guides/limits.md auth.md#café-über',
      'links docs/guides/limits.md ../missing.md',
      'navigation mkdocs.yml docs/guides/limits.md',
    ]);
    expect(report.problems.find((p) => p.check === 'navigation')!.message).toContain('add "guides/limits.md" to mkdocs.yml nav');
    await ws.writeText('mkdocs.yml', MKDOCS.files['mkdocs.yml'] + '      - guides/limits.md\n');
    await ws.writeText('docs/guides/limits.md', '# Limits\n\n[auth](auth.md#api-tokens)\n');
    expect((await again()).problems).toEqual([]);
  });

  it('a deleted page leaves the nav, and the pre-existing broken link stays pre-existing', async () => {
    const { report } = await checkEdit(MKDOCS.files, async (w) => {
      await w.remove('docs/guides/webhooks.md');
      await w.writeText('docs/guides/auth.md', MKDOCS.files['docs/guides/auth.md'] + '\nMore.\n');
    });
    expect(summary(report)).toEqual(['navigation mkdocs.yml guides/webhooks.md']);
    expect(report.preExisting.map((p) => `${p.path} ${p.target}`)).toEqual([`${MKDOCS.brokenOnBase.page} ${MKDOCS.brokenOnBase.href}`]);
  });
});

describe('plain Markdown and earlier turns', () => {
  it('checks relative links of pages changed by earlier turns too', async () => {
    const files = { 'README.md': '# Repo\n\n[Guide](docs/guide.md)\n', 'docs/guide.md': '# Guide\n\n## Setup\n' };
    const changed = { ...files, 'docs/guide.md': '# Guide\n\n[back](../README.md#repo) [nope](../README.md#nope) [gone](other.md)\n' };
    const { report } = await checkEdit(changed, async () => {}, ['docs/guide.md']);
    // `changed` is both base and workspace here, so these problems are pre-existing: nothing new.
    expect(report.problems).toEqual([]);
    expect(report.preExisting.map((p) => p.target).sort()).toEqual(['../README.md#nope', 'other.md']);
    const { report: r2 } = await checkEdit(files, async (w) => {
      await w.writeText('docs/guide.md', changed['docs/guide.md']);
    });
    expect(summary(r2)).toEqual(['anchors docs/guide.md ../README.md#nope', 'links docs/guide.md other.md']);
    expect(r2.ran).toEqual(['links', 'anchors', 'assets']);
  });
});

describe('hostile input from the model', () => {
  it('paths out of the repository and URLs to internal hosts are never followed', async () => {
    let hits = 0;
    const server = http.createServer((_req, res) => {
      hits++;
      res.end('secret');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const port = (server.address() as { port: number }).port;
    try {
      const { report } = await checkEdit(MINTLIFY.files, async (w) => {
        await w.writeText(
          'evil.mdx',
          [
            '# Evil',
            `[a](../../../../etc/passwd) [b](/../../etc/shadow) ![c](../../../../../proc/self/environ)`,
            `[d](http://127.0.0.1:${port}/admin) [e](http://169.254.169.254/latest/meta-data/) <img src="http://localhost:${port}/x.png" /> [f](file:///etc/passwd) [g](//127.0.0.1:${port}/y)`,
            `[h](%2e%2e/%2e%2e/%2e%2e/etc/hosts) [i](<../x y>)`,
          ].join('\n'),
        );
      });
      const mine = report.problems.filter((p) => p.path === 'evil.mdx' && p.check !== 'navigation');
      expect(mine.map((p) => p.target)).toEqual(['../../../../etc/passwd', '/../../etc/shadow', '../../../../../proc/self/environ', '%2e%2e/%2e%2e/%2e%2e/etc/hosts', '../x y']);
      expect(mine.every((p) => /outside the repository/.test(p.message))).toBe(true);
      expect(hits).toBe(0);
    } finally {
      await new Promise<void>((r) => server.close(() => r()));
    }
  });

  it('huge pages and pathological lines are bounded', async () => {
    const many = Array.from({ length: 2500 }, (_, i) => `[l${i}](/missing-${i})`).join(' ');
    const longHeading = `# ${' '.repeat(200_000)}x {${'#'.repeat(100)}`;
    const { report } = await checkEdit(MINTLIFY.files, async (w) => {
      await w.writeText('many.mdx', `# Many\n\n${many}\n`);
      await w.writeText('long.md', `${longHeading}\n\n[x](/nowhere)\n`);
    });
    expect(report.truncated).toBe(true);
    expect(report.problems.filter((p) => p.path === 'many.mdx').length).toBeLessThanOrEqual(2000);
    expect(report.problems.some((p) => p.path === 'long.md' && p.target === '/nowhere')).toBe(true);
  });
});

describe('redirect sources', () => {
  it('match by segment: params, rest params, wildcards', () => {
    const match = redirectMatcher([
      { source: '/old/:slug*', destination: '/new/:slug*' },
      { source: '/a/:id/b', destination: '/c' },
      { source: '/exact/', destination: '/x' },
      { source: '/docs/*', destination: '/y' },
    ]);
    expect(match('/old')?.destination).toBe('/new/:slug*');
    expect(match('/old/x/y/z')?.destination).toBe('/new/:slug*');
    expect(match('/a/42/b')?.destination).toBe('/c');
    expect(match('/a/42/43/b')).toBeNull();
    expect(match('/exact')?.destination).toBe('/x');
    expect(match('/docs/any/thing')?.destination).toBe('/y');
    expect(match('/elsewhere')).toBeNull();
  });

  it('stay linear on hostile patterns and inputs', async () => {
    const stars = '/' + Array.from({ length: 60 }, () => '*').join('/') + '/never';
    const config = JSON.parse(MINTLIFY.files['docs.json']);
    config.redirects = Array.from({ length: 200 }, (_, i) => ({ source: `${stars}${i}`, destination: '/quickstart' }));
    const deep = '/' + Array.from({ length: 400 }, (_, i) => `s${i}`).join('/');
    const { report } = await checkEdit(MINTLIFY.files, async (w) => {
      await w.writeText('docs.json', JSON.stringify(config));
      await w.writeText('deep.mdx', `# Deep\n\n[x](${deep}) ${'<a href="'.repeat(20_000)}\n\n<div>${'<a '.repeat(30_000)}</div>\n`);
    });
    expect(report.problems.some((p) => p.path === 'deep.mdx' && p.target === deep)).toBe(true);
  });
});

describe('slugs and parsing', () => {
  it('each framework\'s heading anchors', () => {
    const headings = [{ text: 'Hello, World!', explicitId: null }, { text: 'Hello, World!', explicitId: null }, { text: 'Café Über', explicitId: null }, { text: 'Custom', explicitId: 'mine' }];
    const gh = anchorsFor('github', headings, ['html-id']);
    expect([...gh.exact].sort()).toEqual(['café-über', 'hello-world', 'hello-world-1', 'html-id', 'mine']);
    const py = anchorsFor('python-markdown', headings, []);
    expect([...py.exact].sort()).toEqual(['cafe-uber', 'hello-world', 'hello-world_1', 'mine']);
    expect(pythonMarkdownSlug('  A -- b__c  ')).toBe('a-b__c');
    const mint = anchorsFor('mintlify', [{ text: "What's next?", explicitId: null }], []);
    expect(hasAnchor(mint, 'whats-next')).toBe(true);
    expect(hasAnchor(mint, 'what’s-next')).toBe(true);
    expect(hasAnchor(mint, 'what-is-next')).toBe(false);
  });

  it('reads links from Markdown, JSX, HTML and reference definitions, not from code', () => {
    const page = parsePage('---\ntitle: T\n---\n\n# T {#t-id}\n\n[a](/a) ![b](b.png) <Card href="/c" /> <img src="d.png" />\n\n[ref]: ./e\n\n```\n[no](/no)\n```\n\n<a href="f">f</a>', 'mdx');
    expect(page.links.map((l) => `${l.kind}:${l.href}`)).toEqual(['link:/a', 'image:b.png', 'link:/c', 'image:d.png', 'link:./e', 'link:f']);
    expect(page.headings).toEqual([{ text: 'T', explicitId: 't-id' }]);
    expect(page.frontMatter).toEqual({ title: 'T' });
    const md = parsePage('# H\n\n<a href="x.md">x</a> <img src="i.png"> <a name="here"></a>', 'md');
    expect(md.links.map((l) => `${l.kind}:${l.href}`)).toEqual(['link:x.md', 'image:i.png']);
    expect(md.ids).toEqual(['here']);
    expect(explicitHeadingId('## Title {: #my-id .wide }')).toEqual({ heading: '## Title', id: 'my-id' });
    expect(explicitHeadingId('## Use {props}')).toBeNull();
  });
});
