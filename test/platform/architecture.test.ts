// docs/ARCHITECTURE.md stays true: its module table names every file under src/, each in the row of
// the deepest folder that holds it (by its path from that folder), so a new file without a word in
// the table fails here. Numbered migrations are named by their folder.
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
