// Writes the tables of docs/configuration.md from the configuration schema (src/config.ts,
// ENV_SCHEMA): `npm run docs:config`. Each table sits between `<!-- config: <section> -->` and
// `<!-- /config -->`; the prose around them is the doc's own. test/platform/config-docs.test.ts
// fails when the file is not what this writes.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { ENV_SCHEMA } from '../src/config.ts';

export const CONFIG_DOC = path.resolve(import.meta.dirname, '../docs/configuration.md');

interface Variable {
  default?: unknown;
  section: string;
  description: string;
  shown?: string;
}

/** One section's table: a row per variable, in the schema's order. */
function table(section: string): string {
  const rows = Object.entries(ENV_SCHEMA.properties as unknown as Record<string, Variable>)
    .filter(([, v]) => v.section === section)
    .map(([name, v]) => `| \`${name}\` | ${v.shown ?? (v.default === undefined ? '—' : `\`${v.default}\``)} | ${v.description} |`);
  if (rows.length === 0) throw new Error(`The schema has no variable in the section "${section}".`);
  return ['| Variable | Default | Meaning |', '|---|---|---|', ...rows].join('\n');
}

/** The doc with every marked table written anew; throws when a variable's section has no table. */
export function withConfigTables(doc: string): string {
  const sections = new Set<string>();
  const out = doc.replace(/<!-- config: (.+?) -->\n(?:(?!<!-- )[^\n]*\n)*<!-- \/config -->/g, (_m, section: string) => {
    sections.add(section);
    return `<!-- config: ${section} -->\n${table(section)}\n<!-- /config -->`;
  });
  const missing = [...new Set(Object.values(ENV_SCHEMA.properties as unknown as Record<string, Variable>).map((v) => v.section))].filter((s) => !sections.has(s));
  if (missing.length > 0) throw new Error(`docs/configuration.md has no table for ${missing.join(', ')}.`);
  return out;
}

if (import.meta.main) writeFileSync(CONFIG_DOC, withConfigTables(readFileSync(CONFIG_DOC, 'utf8')));
