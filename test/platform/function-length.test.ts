// Functions fit on a screen: none in src/ runs past MAX_LINES unless a comment just above it says why
// ("long: <reason>"). Measured on the TypeScript syntax tree, so nested functions count for themselves.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

const SRC = path.resolve(import.meta.dirname, '../../src');
const MAX_LINES = 80;

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    return e.isDirectory() ? sources(p) : e.name.endsWith('.ts') ? [p] : [];
  });
}

function nameOf(node: ts.Node): string {
  const named = node as { name?: ts.Node };
  if (named.name) return named.name.getText();
  const parent = node.parent;
  if (parent && ts.isVariableDeclaration(parent)) return parent.name.getText();
  if (parent && ts.isPropertyAssignment(parent)) return parent.name.getText();
  return '(anonymous)';
}

/** The comment lines just above a function, or above the statement that holds it. */
function leadingComments(node: ts.Node, text: string): string {
  let holder: ts.Node = node;
  while (holder.parent && !ts.isSourceFile(holder.parent) && !ts.isBlock(holder.parent) && !ts.isClassDeclaration(holder.parent) && !ts.isObjectLiteralExpression(holder.parent)) {
    holder = holder.parent;
  }
  const ranges = ts.getLeadingCommentRanges(text, holder.getFullStart()) ?? [];
  return ranges.map((r) => text.slice(r.pos, r.end)).join('\n');
}

export function longFunctions(file: string): { name: string; lines: number }[] {
  const text = readFileSync(file, 'utf8');
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: { name: string; lines: number }[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && (node as { body?: ts.Node }).body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart()).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      if (lines > MAX_LINES && !/\blong: /.test(leadingComments(node, text))) found.push({ name: nameOf(node), lines });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('function length', () => {
  it(`no function in src/ is over ${MAX_LINES} lines without a "long:" reason`, () => {
    const offenders = sources(SRC).flatMap((f) => longFunctions(f).map((fn) => `${path.relative(SRC, f)}: ${fn.name} (${fn.lines} lines)`));
    expect(offenders).toEqual([]);
  });
});
