// Prompts: what the model is told about its job, the repository's docs framework and conventions,
// and the conversation so far.
import path from 'node:path';
import type { ModelMessage } from 'ai';
import type { Workspace } from './workspace.ts';

export type DocsFramework = 'mintlify' | 'docusaurus' | 'mkdocs' | 'markdown';

export interface DocsProfile {
  framework: DocsFramework;
  /** Folder holding the docs, relative to the root ('' for the root). */
  docsRoot: string;
  /** The site configuration file, if any. */
  configFile: string | null;
  /** How the framework reads `.md` files. */
  mdFormat: 'mdx' | 'md';
  /**
   * Whether `## Title {#id}` gives a heading its id in MDX pages, where `{#id}` would otherwise be an
   * invalid expression: Docusaurus (markdown.mdx1Compat.headingIds, on by default).
   */
  headingIds: boolean;
  /** Human-readable notes on conventions: front matter keys, navigation, file extensions. */
  conventions: string[];
  markdownFiles: number;
}

/** Where docs detection reads the repository from: a worktree, or a git tree before checkout. */
export interface DocsSource {
  /** Every file path (relative, POSIX). */
  files: string[];
  /** Contents of the given files that exist. */
  readMany(paths: string[]): Promise<Map<string, string>>;
}

/**
 * A DocsSource over a workspace folder. Files are read through the workspace: its size limit is
 * checked before a file is read, and a path never leads out of the folder (symbolic links included).
 */
export async function workspaceSource(ws: Workspace): Promise<DocsSource> {
  const { files } = await ws.listFiles('.', { limit: 20_000 });
  return {
    files,
    async readMany(paths) {
      const out = new Map<string, string>();
      for (const p of paths) {
        try {
          out.set(p, await ws.readText(p));
        } catch {
          // missing, binary, over the read limit or a link out of the workspace: not read
        }
      }
      return out;
    },
  };
}

/** Which framework a repository uses, where its configuration and docs are, and what that implies. */
type FrameworkLayout = Pick<DocsProfile, 'framework' | 'configFile' | 'docsRoot' | 'conventions'>;

/** Looks at the repository and works out its docs framework and conventions. */
export async function detectDocs(input: Workspace | DocsSource): Promise<DocsProfile> {
  const src = 'readMany' in input ? input : await workspaceSource(input);
  const md = src.files.filter((f) => /\.mdx?$/i.test(f));
  const { framework, configFile, docsRoot, conventions } = await detectFramework(src);
  conventions.push(...(await pageConventions(src, md, docsRoot)));
  return {
    framework,
    docsRoot,
    configFile,
    mdFormat: framework === 'mintlify' || framework === 'docusaurus' ? 'mdx' : 'md',
    headingIds: framework === 'docusaurus',
    conventions,
    markdownFiles: md.length,
  };
}

/** The framework by its configuration file: Mintlify first, then Docusaurus, then MkDocs, else plain Markdown. */
async function detectFramework(src: DocsSource): Promise<FrameworkLayout> {
  const files = src.files;
  const fileSet = new Set(files);
  const mint = ['docs.json', 'mint.json', 'docs/docs.json', 'docs/mint.json'].find((f) => fileSet.has(f)) ?? null;
  const docusaurus = files.find((f) => /(^|\/)docusaurus\.config\.(js|mjs|cjs|ts)$/.test(f) && f.split('/').length <= 2);
  const mkdocs = files.find((f) => /(^|\/)mkdocs\.ya?ml$/.test(f) && f.split('/').length <= 2);
  const configs = await src.readMany([mint, mkdocs].filter((x): x is string => !!x));
  if (mint) return mintlifyLayout(mint, configs.get(mint));
  if (docusaurus) return docusaurusLayout(docusaurus, files);
  if (mkdocs) return mkdocsLayout(mkdocs, configs.get(mkdocs) ?? '');
  return plainLayout(files);
}

/** The folder a configuration file is in, '' for the root. */
function folderOf(file: string): string {
  return path.posix.dirname(file) === '.' ? '' : path.posix.dirname(file);
}

function mintlifyLayout(mint: string, text: string | undefined): FrameworkLayout {
  const conventions = [
    `Site configuration is ${mint}. Pages are .mdx (or .md) files referenced from its "navigation" by path without extension; add every new page to the navigation and remove deleted pages from it.`,
    'Pages start with YAML front matter holding at least `title` (and usually `description`).',
    'Mintlify components (<Note>, <Warning>, <Tip>, <CodeGroup>, <Card>, <Steps>…) are available in MDX without imports.',
  ];
  if (text && /"navigation"\s*:/.test(text)) conventions.push(`${mint} has a "navigation" section.`);
  return { framework: 'mintlify', configFile: mint, docsRoot: folderOf(mint), conventions };
}

function docusaurusLayout(docusaurus: string, files: string[]): FrameworkLayout {
  const base = folderOf(docusaurus);
  const docsRoot = base ? `${base}/docs` : 'docs';
  const sidebars = files.find((f) => /(^|\/)sidebars\.(js|ts|mjs|cjs|json)$/.test(f));
  const conventions = [
    `Docusaurus site configured in ${docusaurus}; docs live under ${docsRoot}/ and are MDX (.md files are parsed as MDX too, so escape { } and < in prose).`,
    sidebars
      ? `Navigation is in ${sidebars}: add new pages there unless it uses autogenerated sidebars (then use _category_.json / sidebar_position front matter).`
      : 'Sidebars are autogenerated from folders: order pages with `sidebar_position` front matter and _category_.json files.',
    'Front matter keys used by Docusaurus: id, title, sidebar_label, sidebar_position, description, slug.',
  ];
  return { framework: 'docusaurus', configFile: docusaurus, docsRoot, conventions };
}

function mkdocsLayout(mkdocs: string, text: string): FrameworkLayout {
  const dir = /^docs_dir:\s*["']?([^"'\n]+)["']?/m.exec(text)?.[1]?.trim() ?? 'docs';
  const base = folderOf(mkdocs);
  const docsRoot = base ? `${base}/${dir}` : dir;
  const conventions = [
    `MkDocs site configured in ${mkdocs}; pages are Markdown (.md) files under ${docsRoot}/.`,
    /^nav:/m.test(text)
      ? `${mkdocs} has an explicit \`nav:\` list: add new pages to it (paths relative to ${docsRoot}/).`
      : 'No explicit nav: MkDocs builds navigation from the folder structure.',
  ];
  if (/material/.test(text)) conventions.push('Theme is Material for MkDocs: admonitions use `!!! note` syntax.');
  return { framework: 'mkdocs', configFile: mkdocs, docsRoot, conventions };
}

function plainLayout(files: string[]): FrameworkLayout {
  const docsDir = files.some((f) => f.startsWith('docs/')) ? 'docs' : '';
  const conventions = [
    `Plain Markdown repository${docsDir ? ` with docs under ${docsDir}/` : ''}: keep links relative and update any index or README that lists pages.`,
  ];
  return { framework: 'markdown', configFile: null, docsRoot: docsDir, conventions };
}

/** Front matter and extension conventions from a sample of pages. */
async function pageConventions(src: DocsSource, md: string[], docsRoot: string): Promise<string[]> {
  const sample = md.filter((f) => !docsRoot || f.startsWith(docsRoot + '/')).slice(0, 20);
  if (sample.length === 0) return [];
  const texts = await src.readMany(sample);
  let withFm = 0;
  const keys = new Map<string, number>();
  for (const f of sample) {
    const text = texts.get(f);
    const fm = text ? /^---\r?\n([\s\S]*?)\r?\n---/.exec(text) : null;
    if (!fm) continue;
    withFm++;
    for (const m of fm[1].matchAll(/^([A-Za-z_][\w-]*):/gm)) keys.set(m[1], (keys.get(m[1]) ?? 0) + 1);
  }
  const conventions: string[] = [];
  if (withFm > sample.length / 2) {
    const common = [...keys.entries()].sort((a, b) => b[1] - a[1]).slice(0, 6).map(([k]) => k);
    conventions.push(`Most pages start with front matter; common keys: ${common.join(', ')}. Follow the same pattern.`);
  } else if (withFm === 0) {
    conventions.push('Pages have no front matter; do not add it.');
  }
  const mdx = sample.filter((f) => f.endsWith('.mdx')).length;
  conventions.push(`Page extension in use: ${mdx > sample.length / 2 ? '.mdx' : '.md'}.`);
  return conventions;
}

const FRAMEWORK_NAMES: Record<DocsFramework, string> = {
  mintlify: 'a docs.json / mint.json (Mintlify-style) site',
  docusaurus: 'Docusaurus',
  mkdocs: 'MkDocs',
  markdown: 'plain Markdown',
};

/** `instructions`: the team's conventions (instructions.ts), last and below everything else. */
export function systemPrompt(profile: DocsProfile, opts: { maxSteps: number; instructions?: string }): string {
  return [
    'You are Folio, an agent that edits a documentation repository on behalf of a documentation team.',
    'You work inside a checkout of the repository using tools. Your edits are committed and proposed as a pull request when you finish.',
    '',
    '## How to work',
    '- Explore first: list_files and search to find the relevant pages, read_file before editing a file.',
    '- Make focused, minimal edits that do what was asked; keep the existing style, tone and structure.',
    '- Prefer edit_file (exact string replacement) for changes to existing files; write_file for new files or full rewrites.',
    '- Paths are relative to the repository root. You cannot touch .git or anything outside the repository.',
    '- Tool errors are returned to you as text starting with "Error:"; read them and correct your call rather than repeating it.',
    `- You have at most ${opts.maxSteps} steps. When done, call finish with a short pull-request title and a summary of what you changed. If nothing needs to change, call finish and explain why.`,
    '- Changed Markdown/MDX, JSON and YAML files are checked before committing; if errors are reported, fix them and call finish again.',
    '',
    '## This repository',
    `Docs framework: ${FRAMEWORK_NAMES[profile.framework]}.${profile.configFile ? ` Configuration: ${profile.configFile}.` : ''}${profile.docsRoot ? ` Docs folder: ${profile.docsRoot}/.` : ''}`,
    ...profile.conventions.map((c) => `- ${c}`),
    ...(opts.instructions ? ['', opts.instructions] : []),
  ].join('\n');
}

export interface PriorTurn {
  prompt: string;
  title: string | null;
  summary: string | null;
}

/** Earlier turns as a conversation, then the current instruction. */
export function conversation(prior: PriorTurn[], prompt: string): ModelMessage[] {
  const messages: ModelMessage[] = [];
  for (const t of prior) {
    messages.push({ role: 'user', content: t.prompt });
    const reply =
      t.title || t.summary
        ? `I finished that request.\nTitle: ${t.title ?? ''}\nSummary: ${t.summary ?? ''}`
        : 'That request ended without a summary.';
    messages.push({ role: 'assistant', content: reply });
  }
  messages.push({
    role: 'user',
    content:
      prior.length > 0
        ? `Follow-up instruction (the repository already contains your earlier changes on this branch):\n\n${prompt}`
        : prompt,
  });
  return messages;
}
