// What a suggestion job may change, checked on what it did (never asked of the model): a broken-paths
// job only the framework's redirect configuration, a Markdown-for-agents job only llms.txt,
// llms-full.txt and Markdown files the site serves as they are. Configuration files are compared
// structurally where their format allows (JSON and YAML parsed, the redirects taken out, the rest
// must be equal; docusaurus.config.* as a syntax tree with the plugin's redirects taken out); any other file
// the job added, changed or deleted is outside its scope. Every problem here is enforced: it fails the
// job whatever the project's checks mode.
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';
import { isAlias, isMap, isScalar, isSeq, parseDocument } from 'yaml';
import type { DocsFramework } from '../prompts.ts';
import { clientRedirectsRest } from './frameworks/client-redirects.ts';
import { dirOf, joinPath } from './paths.ts';
import type { Site } from './site.ts';
import type { DocsProblem, SuggestionKind } from './types.ts';

/** How a file differs from the base: added, changed or deleted. */
type Change = 'added' | 'changed' | 'deleted';

/**
 * A configuration file's content once what the job may change is taken out (with a note on why a
 * part could not be taken out), or why it cannot be read so.
 */
type Rest = { value: unknown; note?: string } | { unreadable: string };

/** A file a broken-paths job may change, and how to take out what it may change in it. */
interface RedirectFile {
  file: string;
  rest(text: string): Rest;
  /** What the file is compared with when the base has none. */
  emptyText: string;
}

const CLIENT_REDIRECTS = '@docusaurus/plugin-client-redirects';
/** YAML nodes read at most when comparing mkdocs.yml (aliases included: a document of aliases cannot blow up). */
const MAX_YAML_NODES = 200_000;
const LLMS_FILES = new Set(['llms.txt', 'llms-full.txt']);

/** The scope problems of a suggestion job's changes (`changed`: every path it touched, in any turn). */
export async function scopeProblems(kind: SuggestionKind, cur: Site, base: Site, changed: string[]): Promise<DocsProblem[]> {
  const changes = await changesOf(cur, base, changed);
  return kind === 'broken_paths' ? brokenPathsScope(cur, base, changes) : agentMarkdownScope(cur, base, changes);
}

/** The paths that really differ from the base (a file written back as it was is no change). */
async function changesOf(cur: Site, base: Site, changed: string[]): Promise<Map<string, Change>> {
  const paths = [...new Set(changed)].sort();
  const [now, before] = await Promise.all([cur.tree.readMany(paths), base.tree.readMany(paths)]);
  const truncated = cur.tree.truncated || base.tree.truncated;
  const out = new Map<string, Change>();
  for (const p of paths) {
    const isNow = cur.tree.files.has(p);
    const wasBefore = base.tree.files.has(p);
    if (!isNow && !wasBefore) {
      // Listed on neither side: gone again, unless the listing cannot show it (node_modules, a cut listing).
      if (truncated || p.split('/').includes('node_modules')) out.set(p, 'changed');
    } else if (!wasBefore) out.set(p, 'added');
    else if (!isNow) out.set(p, 'deleted');
    else if (now.get(p) === undefined || now.get(p) !== before.get(p)) out.set(p, 'changed');
  }
  return out;
}

function scopeProblem(file: string, target: string | null, message: string): DocsProblem {
  return { check: 'scope', path: file, line: null, target, message, enforced: true };
}

// ---------------------------------------------------------------- broken paths

async function brokenPathsScope(cur: Site, base: Site, changes: Map<string, Change>): Promise<DocsProblem[]> {
  const allowed = new Map(redirectFiles(cur).map((f) => [f.file, f]));
  const what = redirectHome(cur);
  const problems: DocsProblem[] = [];
  const compare: RedirectFile[] = [];
  for (const [file, change] of changes) {
    const rule = allowed.get(file);
    if (rule && change !== 'deleted') compare.push(rule);
    else problems.push(scopeProblem(file, file, `This broken-paths job may change only ${what}, but it ${change} ${file}: undo that change.`));
  }
  const files = compare.map((r) => r.file);
  const [now, before] = await Promise.all([cur.tree.readMany(files), base.tree.readMany(files)]);
  for (const rule of compare) {
    const problem = restProblem(rule, now.get(rule.file), base.tree.files.has(rule.file) ? before.get(rule.file) : rule.emptyText, what);
    if (problem) problems.push(problem);
  }
  return problems;
}

/** Whether the rest of a redirect configuration file (all but what the job may change) is as it was. */
function restProblem(rule: RedirectFile, nowText: string | undefined, beforeText: string | undefined, what: string): DocsProblem | null {
  const { file } = rule;
  if (nowText === undefined || beforeText === undefined) {
    return scopeProblem(file, file, `${file} is too large or not text, so Folio cannot tell that this broken-paths job changed only ${what}: undo the change.`);
  }
  const now = rule.rest(nowText);
  const before = rule.rest(beforeText);
  if ('unreadable' in now) return scopeProblem(file, file, `${file} ${now.unreadable}, so Folio cannot tell that this broken-paths job changed only ${what}: make it valid again.`);
  if ('unreadable' in before) return scopeProblem(file, file, `${file} ${before.unreadable} on the base branch, so Folio cannot tell that this broken-paths job changed only ${what}: undo the change.`);
  if (isDeepStrictEqual(now.value, before.value)) return null;
  const keys = differingKeys(before.value, now.value);
  const detail = keys ? `${keys.map((k) => `"${k}"`).join(', ')} in ${file}` : `more of ${file} than that${now.note ? ` (${now.note})` : ''}`;
  return scopeProblem(file, keys?.[0] ?? file, `This broken-paths job may change only ${what}, but it also changed ${detail}: undo that change.`);
}

/** The top-level keys in which two objects differ (at most five); null when they are not both objects. */
function differingKeys(a: unknown, b: unknown): string[] | null {
  const isObject = (v: unknown): v is Record<string, unknown> => !!v && typeof v === 'object' && !Array.isArray(v) && !('!tag' in v);
  if (!isObject(a) || !isObject(b)) return null;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => !isDeepStrictEqual(a[k], b[k]));
  return keys.length > 0 ? keys.slice(0, 5) : null;
}

/** The site's redirect configuration in words, for the problems. */
function redirectHome(site: Site): string {
  const config = site.configFile ?? 'its configuration';
  const homes: Record<DocsFramework, string> = {
    mintlify: `the "redirects" of ${config}`,
    docusaurus: `the client-redirects plugin's redirects in ${config} (and adding the plugin with its package.json dependency)`,
    mkdocs: `the redirects plugin's redirect_maps in ${config} (and adding the plugin)`,
    markdown: 'no file, as this site has no redirect configuration Folio can check',
  };
  return site.configFile || site.framework === 'markdown' ? homes[site.framework] : homes.markdown;
}

/** The files a broken-paths job may change on this site, each with what it may change in it. */
function redirectFiles(site: Site): RedirectFile[] {
  const config = site.configFile;
  if (!config) return [];
  switch (site.framework) {
    case 'mintlify':
      return [{ file: config, rest: (text) => jsonRest(text, (o) => delete o.redirects), emptyText: '{}' }];
    case 'mkdocs':
      return [{ file: config, rest: mkdocsRest, emptyText: '{}' }];
    case 'docusaurus': {
      const packageJson = joinPath(dirOf(config), 'package.json') ?? 'package.json';
      return [
        { file: config, rest: docusaurusRest, emptyText: '' },
        { file: packageJson, rest: (text) => jsonRest(text, withoutPluginDependency), emptyText: '{}' },
      ];
    }
    default:
      return [];
  }
}

/** A JSON object with `drop` applied; unreadable when the text is not a JSON object. */
function jsonRest(text: string, drop: (o: Record<string, unknown>) => void): Rest {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { unreadable: 'does not parse as JSON' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value)) return { unreadable: 'is not a JSON object' };
  drop(value as Record<string, unknown>);
  return { value };
}

/** package.json without the client-redirects plugin's dependency, when it names a plain version (`3.5.2`, `^3.5.2`). */
function withoutPluginDependency(pkg: Record<string, unknown>): void {
  const deps = pkg.dependencies;
  if (!deps || typeof deps !== 'object' || Array.isArray(deps)) return;
  const version = (deps as Record<string, unknown>)[CLIENT_REDIRECTS];
  if (typeof version === 'string' && /^[~^]?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?$/.test(version)) delete (deps as Record<string, unknown>)[CLIENT_REDIRECTS];
}

function docusaurusRest(text: string): Rest {
  const parsed = clientRedirectsRest(text);
  if (!parsed) return { unreadable: 'does not parse as JavaScript or TypeScript' };
  const { rest, notLiteral } = parsed;
  // Only literal redirects are taken out: a list with code in it stays, and says why when it changed.
  return notLiteral ? { value: rest, note: 'its redirects must be literal { from, to } objects of strings: no code, variables or template strings' } : { value: rest };
}

// ---------------------------------------------------------------- MkDocs

/** mkdocs.yml as data (tags kept: `!!python/…` and `!ENV` are part of what it says) without the redirects plugin. */
function mkdocsRest(text: string): Rest {
  const doc = parseDocument(text, { logLevel: 'silent', uniqueKeys: false });
  if (doc.errors.length > 0) return { unreadable: 'does not parse as YAML' };
  let value: unknown;
  try {
    value = yamlData(doc);
  } catch {
    return { unreadable: 'is too large or deep to compare' };
  }
  if (!value || typeof value !== 'object' || Array.isArray(value) || '!tag' in value) return { unreadable: 'is not a YAML mapping' };
  const config = value as Record<string, unknown>;
  // Without a `plugins` key MkDocs runs `search`: a list that adds only `redirects` must keep it.
  const plugins = config.plugins === undefined || config.plugins === null ? ['search'] : config.plugins;
  if (Array.isArray(plugins)) config.plugins = plugins.filter((p) => !isRedirectsPlugin(p));
  else if (plugins && typeof plugins === 'object' && !('!tag' in plugins) && plainRedirectOptions((plugins as Record<string, unknown>).redirects)) {
    const { redirects: _, ...others } = plugins as Record<string, unknown>;
    config.plugins = others;
  }
  return { value: config };
}

/** `redirects`, or `{redirects: {redirect_maps: {…}}}` with plain string paths. */
function isRedirectsPlugin(entry: unknown): boolean {
  if (entry === 'redirects') return true;
  if (!entry || typeof entry !== 'object' || Array.isArray(entry) || '!tag' in entry) return false;
  const keys = Object.keys(entry);
  return keys.length === 1 && keys[0] === 'redirects' && plainRedirectOptions((entry as Record<string, unknown>).redirects);
}

/** The redirects plugin's options: nothing, or only `redirect_maps` of untagged strings. */
function plainRedirectOptions(options: unknown): boolean {
  if (options === null) return true;
  if (!options || typeof options !== 'object' || Array.isArray(options) || '!tag' in options) return false;
  const keys = Object.keys(options);
  if (keys.length === 0) return true;
  const maps = (options as Record<string, unknown>).redirect_maps;
  if (keys.length !== 1 || keys[0] !== 'redirect_maps') return false;
  if (maps === null) return true;
  if (!maps || typeof maps !== 'object' || Array.isArray(maps) || '!tag' in maps) return false;
  return Object.values(maps).every((v) => typeof v === 'string');
}

/**
 * A YAML document as plain data, explicit tags kept as `{'!tag': tag, value}` (two documents that
 * differ only in a tag differ), aliases followed, within MAX_YAML_NODES. Maps are objects without a
 * prototype; a repeated key keeps its last value, as PyYAML does.
 */
function yamlData(doc: ReturnType<typeof parseDocument>): unknown {
  let budget = MAX_YAML_NODES;
  const walk = (node: unknown, depth: number): unknown => {
    if (--budget < 0 || depth > 200) throw new Error('too large');
    if (isAlias(node)) return walk(node.resolve(doc), depth + 1);
    let value: unknown = null;
    if (isScalar(node)) value = node.value;
    else if (isSeq(node)) value = node.items.map((x) => walk(x, depth + 1));
    else if (isMap(node)) {
      const o = Object.create(null) as Record<string, unknown>;
      for (const pair of node.items) {
        const key = walk(pair.key, depth + 1);
        o[typeof key === 'string' ? key : JSON.stringify(key)] = walk(pair.value, depth + 1);
      }
      value = o;
    }
    const tag = (node as { tag?: string } | null)?.tag;
    return tag ? { '!tag': tag, value } : value;
  };
  return walk(doc.contents, 0);
}

// ---------------------------------------------------------------- Markdown for agents

/** llms.txt and llms-full.txt anywhere, and `.md` files the site serves as they are (e.g. Docusaurus's static/). */
function agentMarkdownScope(cur: Site, base: Site, changes: Map<string, Change>): DocsProblem[] {
  const servedAsIs = (file: string, site: Site) => /\.md$/i.test(file) && site.staticDir !== null && file.startsWith(`${site.staticDir}/`) && !site.pages.has(file);
  const allowed = (file: string) => LLMS_FILES.has(path.posix.basename(file)) || (servedAsIs(file, cur) && servedAsIs(file, base));
  const what = cur.staticDir !== null ? `llms.txt, llms-full.txt and Markdown copies of pages (.md) in ${cur.staticDir}/` : 'llms.txt and llms-full.txt';
  const problems: DocsProblem[] = [];
  for (const [file, change] of changes) {
    if (change !== 'deleted' && allowed(file)) continue;
    const page = cur.pages.has(file) || base.pages.has(file) ? ' (a page of the site)' : '';
    problems.push(
      scopeProblem(file, file, `This Markdown-for-agents job may add or change only ${what}, but it ${change} ${file}${page}: ${change === 'deleted' ? 'restore it' : 'undo that change'}.`),
    );
  }
  return problems;
}
