// Docusaurus's client-redirects plugin, read from docusaurus.config.* as text (the file is never run):
// `plugins: [['@docusaurus/plugin-client-redirects', { redirects: [{ from: '/old', to: '/new' }] }]]`,
// `from` a string or a list of them. Only literal strings are read; computed entries
// (`createRedirects`, spreads, variables) are not this check's to judge and are left out.
import type { Redirect } from '../site.ts';

const PLUGIN = 'plugin-client-redirects';
const MAX_REDIRECTS = 10_000;
const STRING = /(['"`])((?:\\.|(?!\1)[^\\\n])*)\1/g;

/** The index after a string or comment that starts at `i`; `i` itself when none does. */
function skipNonCode(text: string, i: number): number {
  const c = text[i];
  if (c === '"' || c === "'" || c === '`') {
    let j = i + 1;
    for (; j < text.length && text[j] !== c; j++) if (text[j] === '\\') j++;
    return j + 1;
  }
  if (c === '/' && text[i + 1] === '/') return text.indexOf('\n', i) === -1 ? text.length : text.indexOf('\n', i);
  if (c === '/' && text[i + 1] === '*') return text.indexOf('*/', i + 2) === -1 ? text.length : text.indexOf('*/', i + 2) + 2;
  return i;
}

const CLOSE: Record<string, string> = { '[': ']', '{': '}', '(': ')' };

/** The text from `open` (an index of `[`, `{` or `(`) to its matching bracket, skipping strings and comments; null when unbalanced. */
export function balanced(text: string, open: number): string | null {
  const stack: string[] = [];
  for (let i = open; i < text.length; i++) {
    const after = skipNonCode(text, i);
    if (after !== i) {
      i = after - 1;
      continue;
    }
    const c = text[i];
    if (CLOSE[c]) stack.push(CLOSE[c]);
    else if (c === ']' || c === '}' || c === ')') {
      if (stack.pop() !== c) return null;
      if (stack.length === 0) return text.slice(open, i + 1);
    }
  }
  return null;
}

/** The objects written directly in a list's text (`[{…}, {…}]`), comments and strings skipped. */
function objectsIn(list: string): string[] {
  const out: string[] = [];
  for (let i = 1; i < list.length - 1 && out.length < MAX_REDIRECTS; i++) {
    const after = skipNonCode(list, i);
    if (after !== i) {
      i = after - 1;
      continue;
    }
    if (list[i] !== '{' && list[i] !== '[' && list[i] !== '(') continue;
    const inner = balanced(list, i);
    if (!inner) break;
    if (list[i] === '{') out.push(inner);
    i += inner.length - 1;
  }
  return out;
}

/** The string literals of `key: '…'` or `key: ['…', …]` in an object's text (the first level only). */
function stringsOf(objectText: string, key: string): string[] {
  const m = new RegExp(`\\b${key}\\s*:\\s*`).exec(objectText);
  if (!m) return [];
  const at = m.index + m[0].length;
  if (objectText[at] === '[') return [...(balanced(objectText, at) ?? '').matchAll(STRING)].map((s) => s[2]);
  const one = new RegExp(STRING.source, 'y');
  one.lastIndex = at;
  const s = one.exec(objectText);
  return s ? [s[2]] : [];
}

/** The plugin's redirects; null when the site does not use the plugin. */
export function clientRedirectsOf(configText: string): Redirect[] | null {
  const plugin = configText.indexOf(PLUGIN);
  if (plugin === -1) return null;
  const key = /\bredirects\s*:\s*\[/g;
  key.lastIndex = plugin;
  const m = key.exec(configText);
  const list = m ? balanced(configText, m.index + m[0].length - 1) : null;
  if (!list) return [];
  const out: Redirect[] = [];
  for (const entry of objectsIn(list)) {
    const [to] = stringsOf(entry, 'to');
    if (to !== undefined) for (const from of stringsOf(entry, 'from')) out.push({ source: from, destination: to });
  }
  return out;
}

const PLUGIN_NAME = '@docusaurus/plugin-client-redirects';

/** What is left of docusaurus.config.* once the plugin's redirects are taken out, to compare with the base. */
export interface ConfigRest {
  /** The text without the plugin's redirects (and without the plugin, where it has no other option), white space and trailing commas dropped outside strings and comments. */
  rest: string;
  /** True when a redirects list holds more than literal `{from, to}` objects (code, variables, template strings): it is kept in `rest`. */
  notLiteral: boolean;
}

/**
 * docusaurus.config.* as a broken-paths job may change it: the client-redirects plugin's `redirects`
 * lists emptied, each plugin entry that then holds nothing else removed (adding the plugin is
 * allowed), an emptied `plugins: []` removed, and the layout (white space, trailing commas) ignored.
 * Only entries written out plainly (`['@docusaurus/plugin-client-redirects', { redirects: [...] }]`)
 * are recognised; anything else stays in the text, so a change to it shows.
 */
export function clientRedirectsRest(text: string): ConfigRest {
  let out = '';
  let at = 0;
  let notLiteral = false;
  for (const literal of pluginLiterals(text)) {
    if (literal[0] < at) continue;
    const entry = pluginEntry(text, literal);
    if (!entry) continue;
    const list = entry.list ? text.slice(entry.list[0], entry.list[1]) : null;
    if (list !== null && !literalRedirectList(list)) {
      notLiteral = true;
      continue;
    }
    if (entry.onlyRedirects) {
      const [from, to] = withOneComma(text, entry.start, entry.end);
      out += text.slice(at, from);
      at = to;
    } else if (entry.list) {
      out += `${text.slice(at, entry.list[0])}[]`;
      at = entry.list[1];
    }
  }
  out += text.slice(at);
  return { rest: layoutFree(out.replace(/\bplugins\s*:\s*\[\s*\]\s*,?/g, '')), notLiteral };
}

/**
 * The text without its layout: white space outside strings and comments dropped (a line comment
 * keeps the line break that ends it, so no code can move into or out of one), and a trailing comma
 * before `]` or `}` dropped. Only layout goes: every token of code stays, in order.
 */
function layoutFree(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const after = skipNonCode(text, i);
    if (after !== i) {
      out += text.slice(i, after);
      if (text[i] === '/' && text[i + 1] === '/') out += '\n';
      i = after - 1;
    } else if (!SPACE.test(text[i])) {
      if ((text[i] === ']' || text[i] === '}') && out.endsWith(',') && !/[[{,]$/.test(out.slice(0, -1))) out = out.slice(0, -1);
      out += text[i];
    }
  }
  return out;
}

/** Where each string literal naming the plugin is, in code (comments skipped), as [start, end). */
function pluginLiterals(text: string): [number, number][] {
  const out: [number, number][] = [];
  for (let i = 0; i < text.length; i++) {
    const after = skipNonCode(text, i);
    if (after === i) continue;
    if (text[i] !== '/' && text.slice(i + 1, after - 1) === PLUGIN_NAME) out.push([i, after]);
    i = after - 1;
  }
  return out;
}

interface PluginEntry {
  start: number;
  end: number;
  /** The options' `redirects` list, [start, end) including its brackets. */
  list: [number, number] | null;
  /** The entry holds nothing but the plugin's name and its redirects: removing it is adding the plugin. */
  onlyRedirects: boolean;
}

const SPACE = /\s/;
const skipSpace = (text: string, i: number) => {
  while (i < text.length && SPACE.test(text[i])) i++;
  return i;
};
const skipSpaceBack = (text: string, i: number) => {
  while (i > 0 && SPACE.test(text[i - 1])) i--;
  return i;
};

/**
 * The plugin entry a literal names: `['…', { … }]` (or `[require.resolve('…'), { … }]`), or the bare
 * literal as an item of a list. Null when the literal is used any other way.
 */
function pluginEntry(text: string, [start, end]: [number, number]): PluginEntry | null {
  const head = /\[\s*(?:require\.resolve\(\s*)?$/.exec(text.slice(Math.max(0, start - 100), start));
  if (!head) {
    // A bare item of a list: no options, nothing but the plugin.
    const before = text[skipSpaceBack(text, start) - 1];
    const after = text[skipSpace(text, end)];
    return (before === '[' || before === ',') && (after === ',' || after === ']') ? { start, end, list: null, onlyRedirects: true } : null;
  }
  const entryStart = start - head[0].length;
  let i = end;
  if (head[0].includes('require')) {
    i = skipSpace(text, i);
    if (text[i] !== ')') return null;
    i++;
  }
  i = skipSpace(text, i);
  if (text[i] !== ',') return null;
  i = skipSpace(text, i + 1);
  const options = text[i] === '{' ? balanced(text, i) : null;
  if (!options) return null;
  const optionsEnd = i + options.length;
  let close = skipSpace(text, optionsEnd);
  if (text[close] === ',') close = skipSpace(text, close + 1);
  if (text[close] !== ']') return null;
  const list = redirectsList(options);
  const shifted: [number, number] | null = list ? [i + list[0], i + list[1]] : null;
  const optionsRest = list ? options.slice(0, list[0]) + '[]' + options.slice(list[1]) : options;
  const onlyRedirects = /^\{\s*(?:redirects|'redirects'|"redirects")\s*:\s*\[\]\s*,?\s*\}$/.test(withoutComments(optionsRest));
  return { start: entryStart, end: close + 1, list: shifted, onlyRedirects };
}

/** The text without its comments (strings kept as they are). */
function withoutComments(text: string): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const after = skipNonCode(text, i);
    if (after === i) out += text[i];
    else {
      if (text[i] !== '/') out += text.slice(i, after);
      i = after - 1;
    }
  }
  return out;
}

/** The [start, end) of the `redirects: [...]` list at the first level of an options object's text. */
function redirectsList(options: string): [number, number] | null {
  let depth = 0;
  for (let i = 0; i < options.length; i++) {
    const after = skipNonCode(options, i);
    if (after !== i) {
      if (depth === 1 && /^\s*:\s*\[/.test(options.slice(after, after + 50)) && /^.(redirects).$/.test(options.slice(i, after))) return listAfter(options, after);
      i = after - 1;
      continue;
    }
    const c = options[i];
    if (c === '{' || c === '[' || c === '(') depth++;
    else if (c === '}' || c === ']' || c === ')') depth--;
    else if (depth === 1 && /^redirects\s*:\s*\[/.test(options.slice(i, i + 60)) && !/[\w$]/.test(options[i - 1] ?? '')) return listAfter(options, i + 'redirects'.length);
  }
  return null;
}

function listAfter(text: string, from: number): [number, number] | null {
  const open = text.indexOf('[', from);
  const list = balanced(text, open);
  return list ? [open, open + list.length] : null;
}

/** The span of an entry with the comma that separated it from its neighbour (the one after it, else the one before). */
function withOneComma(text: string, start: number, end: number): [number, number] {
  const after = skipSpace(text, end);
  if (text[after] === ',') return [start, after + 1];
  const before = skipSpaceBack(text, start);
  return text[before - 1] === ',' ? [before - 1, end] : [start, end];
}

/**
 * Whether a redirects list holds only `{ from: '…' | ['…', …], to: '…' }` objects written as plain
 * string literals (comments allowed): no template strings, variables, calls or spreads, which
 * would run as code when the site builds.
 */
function literalRedirectList(list: string): boolean {
  let shape = '';
  for (let i = 0; i < list.length; ) {
    const c = list[i];
    const after = skipNonCode(list, i);
    if (SPACE.test(c)) i++;
    else if (c === '`') return false;
    else if (after !== i) {
      if (after > list.length) return false;
      if (c !== '/') shape += 'S';
      i = after;
    } else if (/^(?:from|to)\b/.test(list.slice(i, i + 5))) {
      shape += list[i] === 'f' ? 'F' : 'T';
      i += list[i] === 'f' ? 4 : 2;
    } else if ('[]{}:,'.includes(c)) {
      shape += c;
      i++;
    } else return false;
  }
  return /^\[(?:\{(?:[FT]:(?:S|\[S(?:,S)*,?\]),?)*\},?)*\]$/.test(shape);
}
