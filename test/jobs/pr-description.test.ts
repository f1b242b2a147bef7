// The pull request description Folio writes: every part present, hostile text escaped, size bounded.
import { describe, expect, it } from 'vitest';
import type { CheckName } from '../../src/contracts/common.ts';
import { MAX_BODY_CHARS, pullRequestBody, type DescriptionInput } from '../../src/jobs/pr-description.ts';

const base: DescriptionInput = {
  jobId: 'job_1',
  jobUrl: 'https://folio.example.com/projects/prj_1/jobs/job_1',
  turns: [
    { prompt: 'Document rate limits', title: 'Rate limits', summary: 'Added a page.' },
    { prompt: 'Also bursts', title: 'Bursts', summary: 'Mentioned bursts.' },
  ],
  files: [
    { path: 'guides/limits.mdx', status: 'added', additions: 12, deletions: 0 },
    { path: 'guides/new.mdx', status: 'renamed', previousPath: 'old.mdx', additions: 1, deletions: 1 },
    { path: 'img/a.png', status: 'added', additions: 0, deletions: 0, binary: true },
  ],
  checks: {
    mode: 'warn',
    framework: 'mintlify',
    ran: ['links', 'anchors', 'assets', 'navigation', 'redirects'],
    pagesChecked: 2,
    problems: [{ check: 'links', path: 'guides/limits.mdx', line: 7, target: '/x', message: 'Link "/x" does not lead to a page.' }],
    preExisting: [{ check: 'links', path: 'quickstart.mdx', line: 3, target: '/y', message: 'Link "/y" does not lead to a page.' }],
    truncated: false,
  },
  checksMode: 'warn',
  baseBranch: 'main',
};

describe('pull request description', () => {
  it('has the summary, each instruction, files, checks and the job link', () => {
    const body = pullRequestBody(base);
    expect(body).toContain('## Summary\n\nMentioned bursts.');
    expect(body).toContain('**Prompt**\n\n> Document rate limits\n\n**Agent:** **Rate limits** — Added a page.');
    expect(body).toContain('**Follow-up 1**\n\n> Also bursts');
    expect(body).toContain('## Files changed (3, +13 −1)');
    expect(body).toContain('| `guides/new.mdx` | renamed from `old.mdx` | +1 | −1 |');
    expect(body).toContain('| `img/a.png` | added | binary |  |');
    expect(body).toContain('⚠️ 1 problem introduced by this job is left for review:');
    expect(body).toContain('- `guides/limits.mdx:7` (links): Link "/x" does not lead to a page.');
    expect(body).toContain('<details><summary>1 problem already on main (not caused by this job)</summary>');
    expect(body).toContain('[Open job `job_1` in Folio](https://folio.example.com/projects/prj_1/jobs/job_1)');
    expect(pullRequestBody({ ...base, jobUrl: null })).toContain('Folio job `job_1`');
    expect(pullRequestBody({ ...base, checksMode: 'off', checks: null })).toContain('## Docs checks\n\nOff for this project.');
    // With the checks off, a suggestion job still runs what it must pass, and says so.
    const scoped = { ...base.checks!, mode: 'off' as const, ran: ['redirects', 'scope'] as CheckName[], problems: [], preExisting: [] };
    const off = pullRequestBody({ ...base, checksMode: 'off', checks: scoped });
    expect(off).toContain('Mode **off** (only what a suggestion job must pass) · mintlify · ran: redirects, scope');
    expect(off).toContain('✅ No problems introduced by this job.');
  });

  it('says how the site build went: passed, failed with its reason, or why it did not run', () => {
    const build = { tool: 'mkdocs', command: "mkdocs build --strict --config-file 'mkdocs.yml'", status: 'passed' as const, reason: null, setup: 'none' as const, ms: 1234 };
    const withBuild = (b: typeof build | Record<string, unknown>) => pullRequestBody({ ...base, checks: { ...base.checks!, build: { ...build, ...b } } });
    expect(withBuild({})).toContain("✅ Site build (mkdocs): `mkdocs build --strict --config-file 'mkdocs.yml'` passed in 1.2 s.");
    expect(withBuild({ status: 'failed', reason: 'The site build (mkdocs) exited with code 1 and reported <2> problems.' })).toContain(
      "❌ Site build (mkdocs): `mkdocs build --strict --config-file 'mkdocs.yml'` failed: The site build (mkdocs) exited with code 1 and reported &lt;2&gt; problems.",
    );
    expect(withBuild({ tool: 'mint', command: 'mint broken-links', status: 'skipped', reason: 'The Mintlify CLI is not in the build tool cache.' })).toContain(
      '⏭️ Site build (mint): `mint broken-links` did not run: The Mintlify CLI is not in the build tool cache.',
    );
    expect(pullRequestBody(base)).not.toContain('Site build');
  });

  it('escapes what prompts, the model and file names could use to hide or break content', () => {
    const body = pullRequestBody({
      ...base,
      turns: [{ prompt: 'Hi <!-- hide\nthe rest', title: '<img src=x onerror=alert(1)>', summary: '</details><script>x</script>' }],
      files: [{ path: 'a|b`c\n.md', status: 'added', additions: 1, deletions: 0 }],
    });
    expect(body).not.toContain('<!--');
    expect(body).not.toContain('<script>');
    expect(body).not.toContain('<img');
    expect(body).toContain('> Hi &lt;!-- hide\n> the rest');
    expect(body).toContain('| `` a\\|b`c .md `` | added |');
  });

  it('stays under the size the code hosts accept', () => {
    const turns = Array.from({ length: 200 }, (_, i) => ({ prompt: `p${i} ${'x'.repeat(5000)}`, title: `t${i}`, summary: 's'.repeat(5000) }));
    const files = Array.from({ length: 5000 }, (_, i) => ({ path: `f${i}.md`, status: 'added' as const, additions: 1, deletions: 0 }));
    const body = pullRequestBody({ ...base, turns, files });
    expect(body.length).toBeLessThanOrEqual(MAX_BODY_CHARS);
    expect(body).toContain('earlier instruction(s) left out');
    expect(body).toContain('**Follow-up 199**');
    expect(body).toContain('… and 4800 more files');
  });
});
