// Docusaurus's client-redirects plugin, read from docusaurus.config.* parsed by acorn (the file is
// never run): `plugins: [['@docusaurus/plugin-client-redirects', { redirects: [{ from: '/old', to:
// '/new' }] }]]`, `from` a string or a list of them. Only literal strings are read; computed entries
// (`createRedirects`, spreads, variables) are not this check's to judge and are left out.
import type { Redirect } from '../site.ts';
import { keyOf, layoutFree, parseSource, stringOf, walk, type AnyNode } from './js-source.ts';

const PLUGIN_NAME = '@docusaurus/plugin-client-redirects';
const MAX_REDIRECTS = 10_000;

/** `'@docusaurus/plugin-client-redirects'` or `require.resolve('@docusaurus/plugin-client-redirects')`. */
function namesPlugin(node: AnyNode | null): boolean {
  if (!node) return false;
  if (stringOf(node) === PLUGIN_NAME) return true;
  const callee = node.type === 'CallExpression' ? (node.callee as AnyNode) : null;
  const isResolve = callee?.type === 'MemberExpression' && (callee.object as AnyNode).type === 'Identifier' && (callee.object as AnyNode).name === 'require' && (callee.property as AnyNode).name === 'resolve';
  return isResolve && (node.arguments as AnyNode[]).length === 1 && stringOf((node.arguments as AnyNode[])[0]) === PLUGIN_NAME;
}

/** A use of the plugin as an item of a list: bare (no options), or `[name, { …options }]`. */
interface PluginEntry {
  item: AnyNode;
  options: AnyNode | null;
}

function pluginEntries(ast: AnyNode): PluginEntry[] {
  const out: PluginEntry[] = [];
  walk(ast, (node) => {
    // A `[name, { …options }]` pair is an entry, not a list of plugins.
    if (node.type !== 'ArrayExpression' || isPair(node)) return;
    for (const item of node.elements as (AnyNode | null)[]) {
      if (!item) continue;
      if (namesPlugin(item)) out.push({ item, options: null });
      if (isPair(item)) out.push({ item, options: (item.elements as AnyNode[])[1] });
    }
  });
  return out;
}

function isPair(node: AnyNode): boolean {
  const pair = node.type === 'ArrayExpression' ? (node.elements as (AnyNode | null)[]) : [];
  return pair.length === 2 && namesPlugin(pair[0]) && pair[1]?.type === 'ObjectExpression';
}

/** The options' `redirects` property. */
function redirectsProperty(options: AnyNode): AnyNode | null {
  return (options.properties as AnyNode[]).find((p) => keyOf(p) === 'redirects') ?? null;
}

/** `from`'s strings: one, or a list of them (other items left out). */
function fromStrings(value: AnyNode): string[] {
  if (value.type !== 'ArrayExpression') return [stringOf(value)].filter((s): s is string => s !== null);
  return (value.elements as AnyNode[]).map(stringOf).filter((s): s is string => s !== null);
}

/** The plugin's redirects; null when the site does not use the plugin (or its configuration does not parse). */
export function clientRedirectsOf(configText: string): Redirect[] | null {
  const ast = parseSource(configText);
  const entries = ast ? pluginEntries(ast) : [];
  if (entries.length === 0) return null;
  const out: Redirect[] = [];
  for (const { options } of entries) {
    const list = options && (redirectsProperty(options)?.value as AnyNode | undefined);
    if (list?.type !== 'ArrayExpression') continue;
    for (const entry of list.elements as (AnyNode | null)[]) {
      if (entry?.type !== 'ObjectExpression' || out.length >= MAX_REDIRECTS) continue;
      const props = entry.properties as AnyNode[];
      const to = stringOf(props.find((p) => keyOf(p) === 'to')?.value);
      const from = props.find((p) => keyOf(p) === 'from')?.value as AnyNode | undefined;
      if (to !== null && from) for (const source of fromStrings(from)) out.push({ source, destination: to });
    }
  }
  return out;
}

/** What is left of docusaurus.config.* once the plugin's redirects are taken out, to compare with the base. */
export interface ConfigRest {
  /** The syntax tree without the plugin's redirects (and without the plugin, where it has no other option), as text without layout or comments. */
  rest: string;
  /** True when a redirects list holds more than literal `{from, to}` objects (code, variables, template strings): it is kept in `rest`. */
  notLiteral: boolean;
}

/**
 * docusaurus.config.* as a broken-paths job may change it: the client-redirects plugin's `redirects`
 * lists emptied, each plugin entry that then holds nothing else removed (adding the plugin is
 * allowed), an emptied `plugins: []` removed, and the layout (white space, commas, quotes, comments)
 * ignored. Only entries written out plainly (`['@docusaurus/plugin-client-redirects', { redirects:
 * [...] }]`) are recognised; anything else stays, so a change to it shows. Null when the file does not
 * parse.
 */
export function clientRedirectsRest(text: string): ConfigRest | null {
  const ast = parseSource(text);
  if (!ast) return null;
  let notLiteral = false;
  const removed = new Set<AnyNode>();
  for (const { item, options } of pluginEntries(ast)) {
    const property = options && redirectsProperty(options);
    if (property && !literalRedirectList(property.value as AnyNode)) {
      notLiteral = true;
      continue;
    }
    if (property) property.value = { ...(property.value as AnyNode), elements: [] };
    if (!options || (property && (options.properties as AnyNode[]).length === 1)) removed.add(item);
  }
  walk(ast, (node) => {
    if (node.type === 'ArrayExpression') node.elements = (node.elements as AnyNode[]).filter((e) => !removed.has(e));
  });
  walk(ast, (node) => {
    if (node.type === 'ObjectExpression') {
      node.properties = (node.properties as AnyNode[]).filter((p) => !(keyOf(p) === 'plugins' && (p.value as AnyNode).type === 'ArrayExpression' && ((p.value as AnyNode).elements as unknown[]).length === 0));
    }
  });
  return { rest: layoutFree(ast), notLiteral };
}

/**
 * Whether a redirects list holds only `{ from: '…' | ['…', …], to: '…' }` objects of plain string
 * literals: no template strings, variables, calls or spreads, which would run as code when the site builds.
 */
function literalRedirectList(list: AnyNode): boolean {
  const literal = (v: AnyNode) => v.type === 'Literal' && typeof v.value === 'string';
  const fromOrTo = (p: AnyNode) => {
    const key = keyOf(p);
    const value = p.value as AnyNode;
    if (key === 'to' || (key === 'from' && value.type !== 'ArrayExpression')) return literal(value);
    return key === 'from' && (value.elements as (AnyNode | null)[]).length > 0 && (value.elements as (AnyNode | null)[]).every((e) => e !== null && literal(e));
  };
  return list.type === 'ArrayExpression' && (list.elements as (AnyNode | null)[]).every((e) => e?.type === 'ObjectExpression' && (e.properties as AnyNode[]).every(fromOrTo));
}
