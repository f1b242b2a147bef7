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
