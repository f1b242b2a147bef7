// Checks the files the agent changed before they are committed: Markdown/MDX must parse as MDX (with
// its front matter as YAML), JSON and YAML files must parse. Problems go back to the model to fix.
import { promises as fs } from 'node:fs';
import path from 'node:path';
import { compile } from '@mdx-js/mdx';
import { parseAllDocuments } from 'yaml';
import { explicitHeadingId } from './checks/markdown.ts';
import type { Workspace } from './workspace.ts';
import { checkMdxOffLoop } from './parsing.ts';

export interface ValidationIssue {
  path: string;
  message: string;
}

const FRONT_MATTER = /^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/;

/**
 * MDX parse problems of one Markdown/MDX document (front matter checked as YAML); [] when it parses.
 * `headingIds`: the framework reads `## Title {#id}` as the heading's id, not as an MDX expression.
 */
export async function checkMdx(text: string, format: 'mdx' | 'md' = 'mdx', opts: { headingIds?: boolean } = {}): Promise<string[]> {
  const problems: string[] = [];
  let body = text;
  let offsetLines = 0;
  const fm = FRONT_MATTER.exec(text);
  if (fm) {
    problems.push(...checkYaml(fm[1]).map((m) => `front matter: ${m}`));
    // Keep line numbers of the body right by blanking the front matter instead of cutting it.
    offsetLines = fm[0].split('\n').length - 1;
    body = '\n'.repeat(offsetLines) + text.slice(fm[0].length);
  }
  // Cut from their heading lines the way the framework does before MDX sees them (line numbers stay).
  if (opts.headingIds) body = body.split('\n').map((line) => explicitHeadingId(line)?.heading ?? line).join('\n');
  try {
    await compile(body, { format });
  } catch (err) {
    const e = err as { reason?: string; message?: string; line?: number; column?: number; place?: unknown };
    const where = e.line ? ` (line ${e.line}${e.column ? `, column ${e.column}` : ''})` : '';
    problems.push(`${e.reason ?? e.message ?? String(err)}${where}`);
  }
  return problems;
}

export function checkYaml(text: string): string[] {
  const out: string[] = [];
  for (const doc of parseAllDocuments(text)) {
    for (const e of doc.errors) out.push(e.message.split('\n')[0]);
  }
  return out;
}

export function checkJson(text: string): string[] {
  try {
    JSON.parse(text);
    return [];
  } catch (err) {
    return [(err as Error).message];
  }
}

/**
 * Validates the changed files that still exist. `mdFormat` is how the docs framework reads `.md` files;
 * `headingIds` whether it reads `## Title {#id}` as a heading id.
 */
export async function validateChanged(
  ws: Workspace,
  changed: Iterable<string>,
  opts: { mdFormat?: 'mdx' | 'md'; headingIds?: boolean } = {},
): Promise<ValidationIssue[]> {
  const issues: ValidationIssue[] = [];
  for (const rel of [...new Set(changed)].sort()) {
    const ext = path.extname(rel).toLowerCase();
    if (!['.md', '.mdx', '.json', '.yml', '.yaml'].includes(ext)) continue;
    let text: string;
    try {
      text = await fs.readFile(path.join(ws.root, rel), 'utf8');
    } catch {
      continue; // deleted or moved away
    }
    let problems: string[];
    if (ext === '.mdx') problems = await checkMdxOffLoop(text, 'mdx', opts);
    else if (ext === '.md') problems = await checkMdxOffLoop(text, opts.mdFormat ?? 'mdx', opts);
    else if (ext === '.json') problems = checkJson(text);
    else problems = checkYaml(text);
    for (const message of problems) issues.push({ path: rel, message });
  }
  return issues;
}
