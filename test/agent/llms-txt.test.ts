// llms.txt follows the job's pages: where a repository keeps one, a page the job adds must be listed
// and a page it removes must no longer be linked, on every framework's addresses.
import { describe, expect, it } from 'vitest';
import type { ChecksReport } from '../../src/agent/checks/index.ts';
import { addressKey, llmsTxtFile } from '../../src/agent/checks/llms-txt.ts';
import { DOCUSAURUS, MINTLIFY, MKDOCS } from '../fixtures/docs-sites.ts';
import { checkEdit } from '../helpers/checks.ts';

const llmsProblems = (r: ChecksReport) => r.problems.filter((p) => p.check === 'llms-txt').map((p) => `${p.path} ${p.target}`);

const MINTLIFY_LLMS = `# Acme

> Acme's API and CLI.

## Docs

- [Home](https://docs.acme.dev/index.md)
- [Quickstart](https://docs.acme.dev/quickstart.md): install and first call
- [Authentication](https://docs.acme.dev/guides/auth.md)
- [Webhooks](https://docs.acme.dev/guides/webhooks.md)
`;
const mintlify = { ...MINTLIFY.files, 'llms.txt': MINTLIFY_LLMS };
const withNavEntry = (page: string) => {
  const config = JSON.parse(MINTLIFY.files['docs.json']);
  config.navigation.tabs[0].groups[1].pages.push(page);
  return JSON.stringify(config);
};

describe('llms.txt', () => {
  it('reads addresses the way sites serve them', () => {
    expect(addressKey('https://docs.acme.dev/guides/auth.md')).toBe('guides/auth');
    expect(addressKey('/guides/auth/')).toBe('guides/auth');
    expect(addressKey('guides/auth.html#tokens')).toBe('guides/auth');
    expect(addressKey('https://docs.acme.dev/index.md')).toBe('');
    expect(addressKey('/docs/guides/caf%C3%A9?x=1')).toBe('docs/guides/café');
    expect(llmsTxtFile(new Set(['docs/llms.txt', 'llms.txt', 'static/llms.txt']))).toBe('llms.txt');
    expect(llmsTxtFile(new Set(['a.md']))).toBeNull();
  });

  it('Mintlify: a new page must be listed; listing it (any address form) passes', async () => {
    const page = '---\ntitle: Tokens\n---\n\n# Tokens\n';
    const { report } = await checkEdit(mintlify, async (w) => {
      await w.writeText('guides/tokens.mdx', page);
      await w.writeText('docs.json', withNavEntry('guides/tokens'));
    });
    expect(report.ran).toContain('llms-txt');
    expect(llmsProblems(report)).toEqual(['llms.txt guides/tokens.mdx']);
    expect(report.problems.find((p) => p.check === 'llms-txt')!.message).toContain('add a line such as "- [Title](/guides/tokens.md)');
    const listed = await checkEdit(mintlify, async (w) => {
      await w.writeText('guides/tokens.mdx', page);
      await w.writeText('docs.json', withNavEntry('guides/tokens'));
      await w.writeText('llms.txt', `${MINTLIFY_LLMS}- [Tokens](/guides/tokens): create and rotate\n`);
    });
    expect(llmsProblems(listed.report)).toEqual([]);
  });

  it('Mintlify: a removed page must not stay linked', async () => {
    const { report } = await checkEdit(mintlify, (w) => w.remove('guides/webhooks.mdx'));
    expect(llmsProblems(report)).toEqual(['llms.txt guides/webhooks.mdx']);
    const cleaned = await checkEdit(mintlify, async (w) => {
      await w.remove('guides/webhooks.mdx');
      await w.writeText('llms.txt', MINTLIFY_LLMS.replace('- [Webhooks](https://docs.acme.dev/guides/webhooks.md)\n', ''));
    });
    expect(llmsProblems(cleaned.report)).toEqual([]);
  });

  it('Docusaurus: static/llms.txt and doc URLs under /docs', async () => {
    const files = { ...DOCUSAURUS.files, 'static/llms.txt': '# Acme\n\n- [Auth](https://acme.dev/docs/guides/auth.md)\n- [Webhooks](https://acme.dev/docs/guides/webhooks.md)\n' };
    const added = await checkEdit(files, (w) => w.writeText('docs/guides/tokens.md', '---\ntitle: Tokens\n---\n\n# Tokens\n'));
    expect(llmsProblems(added.report)).toEqual(['static/llms.txt docs/guides/tokens.md']);
    const listed = await checkEdit(files, async (w) => {
      await w.writeText('docs/guides/tokens.md', '---\ntitle: Tokens\n---\n\n# Tokens\n');
      await w.writeText('static/llms.txt', `${files['static/llms.txt']}- [Tokens](https://acme.dev/docs/guides/tokens.md)\n`);
    });
    expect(llmsProblems(listed.report)).toEqual([]);
  });

  it('MkDocs: docs/llms.txt with directory URLs', async () => {
    const files = { ...MKDOCS.files, 'docs/llms.txt': '# Acme\n\n- [Auth](guides/auth/)\n- [Webhooks](https://acme.dev/guides/webhooks/)\n' };
    const removed = await checkEdit(files, (w) => w.remove('docs/guides/webhooks.md'));
    expect(llmsProblems(removed.report)).toEqual(['docs/llms.txt docs/guides/webhooks.md']);
    const added = await checkEdit(files, async (w) => {
      await w.writeText('docs/guides/new.md', '# New\n');
      await w.writeText('docs/llms.txt', `${files['docs/llms.txt']}- [New](guides/new.md)\n`);
    });
    expect(llmsProblems(added.report)).toEqual([]);
  });

  it('a repository without llms.txt runs no such check', async () => {
    const { report } = await checkEdit(MINTLIFY.files, (w) => w.writeText('guides/tokens.mdx', '# Tokens\n'));
    expect(report.ran).not.toContain('llms-txt');
  });
});
