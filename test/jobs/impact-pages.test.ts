// The pages a job touched (jobs/impact-pages.ts), read with real git from a mirror holding a base and
// a head commit, through each framework's site model: MkDocs (a renamed page, a removed one, an
// added one, an edited home page, a redirect_maps entry given as files) and Docusaurus (a moved doc
// and a client redirect). Files that are no page (config, images) are left out.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { Repo, mirrorPath } from '../../src/git/git.ts';
import { WorktreePool } from '../../src/git/worktree-pool.ts';
import { touchedPages } from '../../src/jobs/impact-pages.ts';
import { DOCUSAURUS, MKDOCS } from '../fixtures/docs-sites.ts';
import { gitSync } from '../fixtures/git-server.ts';

const dirs: string[] = [];
afterAll(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** A Repo whose mirror holds `base` and then `change(base)` as two commits; their shas. */
function mirrorWith(base: Record<string, string>, head: Record<string, string | null>) {
  const work = mkdtempSync(path.join(os.tmpdir(), 'folio-pages-'));
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'folio-pages-data-'));
  dirs.push(work, dataDir);
  const put = (files: Record<string, string | null>) => {
    for (const [file, text] of Object.entries(files)) {
      const full = path.join(work, file);
      if (text === null) rmSync(full);
      else {
        mkdirSync(path.dirname(full), { recursive: true });
        writeFileSync(full, text);
      }
    }
    gitSync(['add', '--all'], work);
    gitSync(['commit', '--quiet', '-m', 'x'], work);
    return gitSync(['rev-parse', 'HEAD'], work).trim();
  };
  gitSync(['init', '--quiet', '-b', 'main'], work);
  const baseSha = put(base);
  const headSha = put(head);
  const config = loadConfig({ FOLIO_DATA_DIR: dataDir });
  const repositoryUrl = 'https://github.com/acme/pages.git';
  gitSync(['clone', '--bare', '--quiet', work, mirrorPath(dataDir, repositoryUrl)], os.tmpdir());
  const repo = new Repo({
    dataDir,
    repositoryUrl,
    policy: config.repositories,
    outbound: config.outbound,
    credentials: null,
    author: { name: 'Folio', email: 'folio@example.com' },
    pool: new WorktreePool({ dataDir, size: 0 }),
  });
  return { repo, baseSha, headSha };
}

describe('the pages a job touched', () => {
  it('MkDocs: moved, removed, added, edited, and a redirect given as files', async () => {
    const base = { ...MKDOCS.files, 'docs/old.md': '# Old\n' };
    const { repo, baseSha, headSha } = mirrorWith(base, {
      'docs/guides/webhooks.md': null,
      'docs/guides/hooks.md': MKDOCS.files['docs/guides/webhooks.md'],
      'docs/old.md': null,
      'docs/new.md': '# New\n',
      'docs/index.md': '# Acme\n\nChanged.\n',
      'docs/img/other.png': 'png',
      'mkdocs.yml': `${MKDOCS.files['mkdocs.yml']}plugins:\n  - redirects:\n      redirect_maps:\n        'guides/webhooks.md': 'guides/hooks.md'\n`,
    });
    const files = await repo.diffFiles(baseSha, headSha);
    expect(files.find((f) => f.path === 'docs/guides/hooks.md')).toMatchObject({ status: 'renamed', previousPath: 'docs/guides/webhooks.md' });
    const pages = await touchedPages(repo, baseSha, headSha, files);
    expect(pages.map((p) => [p.change, p.path, p.previousPath, p.file, p.redirectTo])).toEqual(
      expect.arrayContaining([
        ['moved', '/guides/hooks', '/guides/webhooks', 'docs/guides/hooks.md', null],
        ['removed', '/old', null, 'docs/old.md', null],
        ['added', '/new', null, 'docs/new.md', null],
        ['edited', '/', null, 'docs/index.md', null],
        ['redirect', '/guides/webhooks', null, null, 'guides/hooks.md'],
      ]),
    );
    // mkdocs.yml and the image are no pages.
    expect(pages).toHaveLength(5);
  });

  it('Docusaurus: a moved doc and its client redirect', async () => {
    const config = DOCUSAURUS.files['docusaurus.config.js'].replace(
      '};\n',
      "  plugins: [['@docusaurus/plugin-client-redirects', { redirects: [{ from: '/docs/guides/auth', to: '/docs/guides/authentication' }] }]],\n};\n",
    );
    const { repo, baseSha, headSha } = mirrorWith(DOCUSAURUS.files, {
      'docs/guides/auth.md': null,
      'docs/guides/authentication.md': DOCUSAURUS.files['docs/guides/auth.md'],
      'docusaurus.config.js': config,
    });
    const pages = await touchedPages(repo, baseSha, headSha, await repo.diffFiles(baseSha, headSha));
    expect(pages.map((p) => [p.change, p.path, p.previousPath, p.redirectTo])).toEqual([
      ['moved', '/docs/guides/authentication', '/docs/guides/auth', null],
      ['redirect', '/docs/guides/auth', null, '/docs/guides/authentication'],
    ]);
  });
});
