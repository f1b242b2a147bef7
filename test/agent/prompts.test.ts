import { mkdtempSync, mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { conversation, detectDocs, systemPrompt } from '../../src/agent/prompts.ts';
import { checkJson, checkMdx, checkYaml, validateChanged } from '../../src/agent/validate.ts';
import { openWorkspace } from '../../src/agent/workspace.ts';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

async function repo(files: Record<string, string>) {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-docs-'));
  dirs.push(dir);
  for (const [rel, content] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
    writeFileSync(path.join(dir, rel), content);
  }
  return openWorkspace(dir);
}

describe('docs framework detection', () => {
  it('docs.json / mint.json sites', async () => {
    const ws = await repo({ 'docs.json': '{"navigation": []}', 'index.mdx': '---\ntitle: A\ndescription: B\n---\n# A\n', 'guide.mdx': '---\ntitle: G\n---\n' });
    const p = await detectDocs(ws);
    expect(p).toMatchObject({ framework: 'mintlify', configFile: 'docs.json', mdFormat: 'mdx', headingIds: false });
    const s = systemPrompt(p, { maxSteps: 50 });
    expect(s).toContain('docs.json');
    expect(s).toContain('navigation');
    expect(s).toMatch(/common keys: title/);
    expect(s).toContain('.mdx');
    const legacy = await detectDocs(await repo({ 'docs/mint.json': '{}', 'docs/a.mdx': '# a' }));
    expect(legacy).toMatchObject({ framework: 'mintlify', configFile: 'docs/mint.json', docsRoot: 'docs' });
  });
  it('Docusaurus', async () => {
    const p = await detectDocs(await repo({ 'website/docusaurus.config.js': 'module.exports = {}', 'website/sidebars.js': 'module.exports = {}', 'website/docs/intro.md': '---\nsidebar_position: 1\n---\n# Intro\n' }));
    expect(p).toMatchObject({ framework: 'docusaurus', docsRoot: 'website/docs', mdFormat: 'mdx', headingIds: true });
    expect(systemPrompt(p, { maxSteps: 5 })).toContain('website/sidebars.js');
  });
  it('MkDocs', async () => {
    const p = await detectDocs(await repo({ 'mkdocs.yml': 'site_name: X\ndocs_dir: content\ntheme:\n  name: material\nnav:\n  - index.md\n', 'content/index.md': '# X\n' }));
    expect(p).toMatchObject({ framework: 'mkdocs', docsRoot: 'content', mdFormat: 'md' });
    const s = systemPrompt(p, { maxSteps: 5 });
    expect(s).toContain('nav:');
    expect(s).toContain('Material');
    expect(s).toContain('no front matter');
  });
  it('reads a workspace through its checks: a file over the read limit or a link out of the workspace is not read', async () => {
    const outside = mkdtempSync(path.join(os.tmpdir(), 'folio-outside-'));
    dirs.push(outside);
    writeFileSync(path.join(outside, 'secret.yml'), 'site_name: X\ndocs_dir: leaked\nnav:\n  - a.md\n');
    const ws = await repo({ 'docs/a.md': '---\ntitle: A\n---\n# A\n', 'docs/huge.md': `---\ntitle: H\n---\n${'x'.repeat(2 * 1024 * 1024)}` });
    symlinkSync(path.join(outside, 'secret.yml'), path.join(ws.root, 'mkdocs.yml'));
    const p = await detectDocs(ws);
    // mkdocs.yml is found by name, but its target outside the workspace is never read.
    expect(p).toMatchObject({ framework: 'mkdocs', docsRoot: 'docs' });
    expect(systemPrompt(p, { maxSteps: 5 })).not.toContain('leaked');
    expect(systemPrompt(p, { maxSteps: 5 })).not.toContain('has an explicit `nav:`');
  });
  it('plain Markdown', async () => {
    const p = await detectDocs(await repo({ 'README.md': '# R\n', 'docs/a.md': '# A\n' }));
    expect(p).toMatchObject({ framework: 'markdown', docsRoot: 'docs', configFile: null });
    expect(systemPrompt(p, { maxSteps: 5 })).toContain('plain Markdown');
  });
});

describe('conversation across follow-ups', () => {
  it('replays earlier prompts with the agent summaries', () => {
    const m = conversation([{ prompt: 'one', title: 'T1', summary: 'S1' }, { prompt: 'two', title: null, summary: null }], 'three');
    expect(m.map((x) => x.role)).toEqual(['user', 'assistant', 'user', 'assistant', 'user']);
    expect(m[1].content).toContain('S1');
    expect(m[4].content).toContain('three');
  });
});

describe('validation of changed files', () => {
  it('MDX, front matter, JSON and YAML', async () => {
    expect(await checkMdx('---\ntitle: Ok\n---\n\n# Hi <Note>x</Note>\n')).toEqual([]);
    expect((await checkMdx('# Hi\n\n<Note>\n'))[0]).toMatch(/closing tag.*(line 3|3:1)/);
    expect((await checkMdx('---\ntitle: [bad\n---\n\n# Hi\n'))[0]).toMatch(/^front matter:/);
    expect((await checkMdx('Use {curly braces', 'mdx')).length).toBeGreaterThan(0);
    expect(await checkMdx('Use {curly} braces <3', 'md')).toEqual([]);
    // Docusaurus's explicit heading ids are not MDX expressions there; elsewhere they are, and fail.
    const headingId = '# Auth\n\n## Details {#custom-id}\n\nText.\n';
    expect(await checkMdx(headingId, 'mdx', { headingIds: true })).toEqual([]);
    expect((await checkMdx(headingId, 'mdx'))[0]).toMatch(/line 3/);
    expect((await checkMdx('## Details {#custom-id}\n\nUse {broken\n', 'mdx', { headingIds: true }))[0]).toMatch(/line 3/);
    expect(checkJson('{"a":1}')).toEqual([]);
    expect(checkJson('{"a":')).toHaveLength(1);
    expect(checkYaml('a: 1\nb: [1, 2]\n')).toEqual([]);
    expect(checkYaml('a: [1, 2\n').length).toBeGreaterThan(0);
  });
  it('checks only changed files that still exist, with the framework md format', async () => {
    const ws = await repo({ 'a.md': 'x {y\n', 'b.json': '{', 'c.txt': '{', 'ok.yaml': 'a: 1\n' });
    expect((await validateChanged(ws, ['a.md', 'b.json', 'c.txt', 'gone.md', 'ok.yaml'], { mdFormat: 'md' })).map((i) => i.path)).toEqual(['b.json']);
    expect((await validateChanged(ws, ['a.md'], { mdFormat: 'mdx' })).map((i) => i.path)).toEqual(['a.md']);
  });
});
