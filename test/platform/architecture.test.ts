// docs/ARCHITECTURE.md stays true: its module table names every file under src/, each in the row of
// the deepest folder that holds it (by its path from that folder), so a new file without a word in
// the table fails here (numbered migrations are named by their folder); and every import between
// areas of src/ follows its "Import direction" lines.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = path.resolve(import.meta.dirname, '../..');

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? files(p) : /\.(ts|json)$/.test(e.name) ? [path.relative(ROOT, p)] : [];
  });
}

/** The module table: the path of each row (a file or a folder ending in /) and its text. */
function tableRows(): { path: string; text: string }[] {
  const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  return [...doc.matchAll(/^\| `([^`]+)` \| (.+) \|$/gm)].map((m) => ({ path: m[1], text: m[2] }));
}

describe('docs/ARCHITECTURE.md', () => {
  it('names every file under src/ in its folder’s row of the module table', () => {
    const rows = tableRows();
    const missing = files(path.join(ROOT, 'src')).filter((file) => {
      if (rows.some((r) => r.path === file)) return false;
      const row = rows.filter((r) => r.path.endsWith('/') && file.startsWith(r.path)).sort((a, b) => b.path.length - a.path.length)[0];
      if (!row) return true;
      const inRow = file.slice(row.path.length);
      const named = row.text.includes(`\`${inRow}\``);
      const migration = /\/migrations\/\d{3}_/.test(file) && row.text.includes('`migrations/`');
      return !named && !migration;
    });
    expect(missing).toEqual([]);
  });
});

/** The areas of src/ (a folder, or a file at its top) and the areas each may import, from the "Import direction" section. */
function importRules(): { leaves: Set<string>; allowed: Map<string, { only: boolean; areas: Set<string> }> } {
  const doc = readFileSync(path.join(ROOT, 'docs/ARCHITECTURE.md'), 'utf8');
  const section = doc.slice(doc.indexOf('## Import direction'), doc.indexOf('\n## ', doc.indexOf('## Import direction') + 1));
  const names = (text: string) => [...text.matchAll(/`([\w-]+)`/g)].map((m) => m[1]);
  const leaves = new Set(names(/\*\*leaves\*\* —([^—]+)—/.exec(section)?.[1] ?? ''));
  const allowed = new Map<string, { only: boolean; areas: Set<string> }>();
  for (const m of section.matchAll(/^- `([\w-]+)` → (only )?([^(\n]*)/gm)) allowed.set(m[1], { only: m[2] !== undefined, areas: new Set(names(m[3])) });
  return { leaves, allowed };
}

/** Each import of a file of src/ that reaches another area: static, type-only, re-exports and dynamic `import('…')`. */
function crossImports(): { file: string; from: string; to: string }[] {
  const src = path.join(ROOT, 'src');
  const areaOf = (rel: string) => (rel.includes('/') ? rel.split('/')[0] : rel.replace(/\.ts$/, ''));
  return files(src)
    .filter((f) => f.endsWith('.ts'))
    .flatMap((file) => {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      const specifiers = [...text.matchAll(/(?:\bfrom\s+|\bimport\s*\(\s*)'(\.[^']+)'/g)].map((m) => m[1]);
      const from = areaOf(path.relative(src, path.join(ROOT, file)));
      return specifiers.map((s) => ({ file, from, to: areaOf(path.relative(src, path.resolve(path.dirname(path.join(ROOT, file)), s))) }));
    })
    .filter((i) => i.from !== i.to);
}

describe('docs/ARCHITECTURE.md import direction', () => {
  it('names every area of src/ and allows only what it draws', () => {
    const { leaves, allowed } = importRules();
    expect([...leaves].sort()).toEqual(['child-env', 'config', 'contracts', 'errors', 'net', 'util', 'version']);
    const imports = crossImports();
    const areas = new Set(imports.flatMap((i) => [i.from, i.to]));
    // Every area that imports another has a line, or is a leaf.
    expect([...areas].filter((a) => !leaves.has(a) && !allowed.has(a))).toEqual([]);
    const wrong = imports.filter(({ from, to }) => {
      const rule = allowed.get(from);
      if (rule?.areas.has(to)) return false;
      return rule?.only || !leaves.has(to);
    });
    expect(wrong.map((i) => `${i.file} imports ${i.to}`)).toEqual([]);
  });

  it('catches an import the lines do not draw', () => {
    const { leaves, allowed } = importRules();
    // The agent imports only util and contracts; the store never codehost; nothing but the CLI imports http.
    expect(allowed.get('agent')).toEqual({ only: true, areas: new Set(['util', 'contracts']) });
    expect(allowed.get('store')?.areas.has('codehost')).toBe(false);
    expect([...allowed].filter(([, r]) => r.areas.has('http')).map(([a]) => a)).toEqual(['cli']);
    expect(leaves.has('http')).toBe(false);
  });
});
