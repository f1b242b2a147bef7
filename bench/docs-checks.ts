// What the docs checks add to a turn's finish on a large docs site: a Mintlify repository with N pages
// (each linking to 5 others with anchors, all in the navigation), checked after (a) one page edited and
// (b) one page deleted (every page that may link to it is read and parsed). The baseline, measured in
// the same run, is what each finish already paid before the checks: the parse validation of the
// changed files, plus listing the workspace.
//   node_modules/.bin/node bench/docs-checks.ts [pages=5000] [rounds=5]
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createDocsChecks } from '../src/agent/checks/index.ts';
import { detectDocs, type DocsSource } from '../src/agent/prompts.ts';
import { validateChanged } from '../src/agent/validate.ts';
import { openWorkspace, type Workspace } from '../src/agent/workspace.ts';

const pages = Number(process.argv[2] ?? 5000);
const rounds = Number(process.argv[3] ?? 5);

function site(n: number): Record<string, string> {
  const files: Record<string, string> = {};
  const names = Array.from({ length: n }, (_, i) => `guides/g${Math.floor(i / 100)}/page-${i}`);
  files['docs.json'] = JSON.stringify({ name: 'Bench', navigation: { groups: [{ group: 'All', pages: names }] } });
  names.forEach((name, i) => {
    const links = [1, 7, 31, 101, 499].map((d) => `[p${(i + d) % n}](/${names[(i + d) % n]}#section-two)`).join(', ');
    files[`${name}.mdx`] = `---\ntitle: Page ${i}\n---\n\n## Section one\n\nSee ${links}.\n\n## Section two\n\nText ${'lorem ipsum '.repeat(40)}\n`;
  });
  return files;
}

function source(files: Record<string, string>): DocsSource {
  return { files: Object.keys(files).sort(), readMany: async (ps) => new Map(ps.filter((p) => p in files).map((p) => [p, files[p]])) };
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)];
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

async function main() {
  const files = site(pages);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-checks-'));
  try {
    for (const [rel, text] of Object.entries(files)) {
      mkdirSync(path.dirname(path.join(dir, rel)), { recursive: true });
      writeFileSync(path.join(dir, rel), text);
    }
    const profile = await detectDocs(await openWorkspace(dir));
    const scenario = async (name: string, edit: (ws: Workspace) => Promise<void>) => {
      const base: number[] = [];
      const checks: number[] = [];
      let problems = 0;
      let checked = 0;
      for (let r = 0; r < rounds; r++) {
        // A fresh workspace each round: the first finish of a turn (no parses to reuse).
        const ws = await openWorkspace(dir);
        await edit(ws);
        base.push(await time(async () => {
          await ws.listFiles('.', { limit: 100_000 });
          await validateChanged(ws, ws.touched, { mdFormat: 'mdx' });
        }));
        const c = createDocsChecks({ profile, base: async () => source(files), priorChanges: async () => [] });
        checks.push(await time(async () => {
          const report = await c.run(ws);
          problems = report.problems.length;
          checked = report.pagesChecked;
        }));
        // Undo the edit for the next round.
        for (const p of ws.touched) {
          mkdirSync(path.dirname(path.join(dir, p)), { recursive: true });
          writeFileSync(path.join(dir, p), files[p]);
        }
      }
      const b = median(base);
      const c = median(checks);
      console.log(
        `${name}: baseline (list + parse validation) p50 ${b.toFixed(0)} ms, docs checks p50 ${c.toFixed(0)} ms (${(c / b).toFixed(1)}x); ${checked} page(s) checked, ${problems} problem(s)`,
      );
    };
    console.log(`${pages} pages, ${rounds} rounds each`);
    await scenario('one page edited', (ws) => ws.writeText('guides/g0/page-3.mdx', files['guides/g0/page-3.mdx'].replace('Text', 'More text, [a link](/guides/g0/page-4#section-one)')).then(() => undefined));
    await scenario('one page deleted', (ws) => ws.remove('guides/g0/page-3.mdx'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await main();
