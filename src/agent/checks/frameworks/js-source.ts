// Docusaurus's JavaScript and TypeScript configuration files (docusaurus.config.*, sidebars.*) as
// syntax trees, parsed by acorn (with @sveltejs/acorn-typescript for TypeScript) and never run:
// the readers of client-redirects.ts and sidebars.ts look at literals in them.
import { Parser, type Node } from 'acorn';
import { tsPlugin } from '@sveltejs/acorn-typescript';

export type { Node };
/** A node's fields, as the readers look at them. */
export type AnyNode = Node & Record<string, unknown>;

const TypeScriptParser = Parser.extend(tsPlugin());

/** The most of a file parsed; larger configuration is not read. */
const MAX_SOURCE = 2_000_000;

/** The file's syntax tree (as an ES module, else as a script); null when it does not parse or is too large. */
export function parseSource(text: string): AnyNode | null {
  if (text.length > MAX_SOURCE) return null;
  for (const sourceType of ['module', 'script'] as const) {
    try {
      return TypeScriptParser.parse(text, { ecmaVersion: 'latest', sourceType, locations: true, allowHashBang: true }) as unknown as AnyNode;
    } catch {
      // try the other kind of source
    }
  }
  return null;
}

const isNode = (v: unknown): v is AnyNode => !!v && typeof v === 'object' && typeof (v as { type?: unknown }).type === 'string';

/** A node's child nodes, in source order. */
export function childrenOf(node: AnyNode): AnyNode[] {
  const out: AnyNode[] = [];
  for (const [key, value] of Object.entries(node)) {
    if (key === 'loc') continue;
    if (Array.isArray(value)) for (const v of value) if (isNode(v)) out.push(v);
    if (isNode(value)) out.push(value);
  }
  return out.sort((a, b) => a.start - b.start);
}

/** Calls `visit` on every node, parents before children, in source order. */
export function walk(node: AnyNode, visit: (node: AnyNode) => void): void {
  const stack = [node];
  while (stack.length > 0) {
    const n = stack.pop()!;
    visit(n);
    const children = childrenOf(n);
    for (let i = children.length - 1; i >= 0; i--) stack.push(children[i]);
  }
}

/** TypeScript's wrappers of an expression (`x as T`, `x satisfies T`, `x!`, `<T>x`) that change nothing it holds. */
const TYPE_WRAPPERS = new Set(['TSAsExpression', 'TSSatisfiesExpression', 'TSNonNullExpression', 'TSTypeAssertion']);

/** The string a node is written as: a string literal, or a template without `${…}` (TypeScript's `as const` and the like seen through); null otherwise. */
export function stringOf(node: unknown): string | null {
  while (isNode(node) && TYPE_WRAPPERS.has(node.type)) node = node.expression;
  if (!isNode(node)) return null;
  if (node.type === 'Literal' && typeof node.value === 'string') return node.value;
  if (node.type === 'TemplateLiteral' && (node.expressions as unknown[]).length === 0) {
    return ((node.quasis as { value: { cooked: string | null } }[])[0]?.value.cooked ?? null);
  }
  return null;
}

/** The name of an object property's key (`key:` or `'key':`); null for a computed key, a spread or a method. */
export function keyOf(property: AnyNode): string | null {
  if (property.type !== 'Property' || property.computed || property.method || property.kind !== 'init') return null;
  const key = property.key as AnyNode;
  return key.type === 'Identifier' ? (key.name as string) : stringOf(key);
}

/**
 * The tree as text without its layout: positions, quoting and comments left out, so two files that
 * differ only in white space, commas, quotes or comments give the same text.
 */
export function layoutFree(node: AnyNode): string {
  return JSON.stringify(node, (key, value) => {
    if (key === 'start' || key === 'end' || key === 'loc' || key === 'range' || key === 'raw') return undefined;
    if (typeof value === 'bigint') return `${value}n`;
    if (value instanceof RegExp) return undefined;
    return value;
  });
}
