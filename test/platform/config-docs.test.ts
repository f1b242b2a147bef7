// docs/configuration.md's tables are the configuration schema's (src/config.ts, ENV_SCHEMA), as
// `npm run docs:config` writes them: a variable added, changed or removed without running it fails here.
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { CONFIG_DOC, withConfigTables } from '../../scripts/config-docs.ts';
import { ENV_SCHEMA } from '../../src/config.ts';

describe('docs/configuration.md', () => {
  const doc = readFileSync(CONFIG_DOC, 'utf8');

  it('has the tables the schema gives (run npm run docs:config when this fails)', () => {
    expect(doc).toBe(withConfigTables(doc));
  });

  it('has a row for every variable of the schema, and no other', () => {
    const rows = [...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]);
    expect(rows.sort()).toEqual(Object.keys(ENV_SCHEMA.properties).sort());
  });

  it('a stale table is rewritten, and a section without a table is an error', () => {
    expect(withConfigTables(doc.replace('| `PORT` | `8080` |', '| `PORT` | `80` |'))).toBe(doc);
    expect(() => withConfigTables(doc.replace('<!-- config: Models -->', '<!-- nothing -->'))).toThrow(/no table for Models/);
  });
});
