// A build's output as problems like the other checks': MkDocs's WARNING and ERROR lines and
// `mint broken-links`'s list, each with its file and, where the link can be found in it, its line.
// A failed build whose output says nothing we read becomes one problem with its last lines.
import path from 'node:path';
import type { DocsProblem } from '../agent/checks/types.ts';

/** A page's text, to find the line a link is on (null when the file is not there). */
export type ReadFile = (path: string) => Promise<string | null>;

export interface BuildOutput {
  tool: string;
  /** The build's own folder in the repository ('' for the root). */
  cwd: string;
  /** Where MkDocs pages live (docs_dir), relative to the repository. */
  docsRoot: string;
  /** The configuration file problems without a page are put on. */
  configFile: string;
  /** The output, ANSI colours already removed; the working folder as the build saw it replaced by nothing. */
  text: string;
  passed: boolean;
  read: ReadFile;
}

const MAX_BUILD_PROBLEMS = 100;
const MAX_MESSAGE = 500;

/** Colours and cursor movements, which some tools print even when told not to. */
// eslint-disable-next-line no-control-regex
const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

export function cleanOutput(text: string, workdir: string): string {
  return text.replace(ANSI, '').split(`${workdir}/`).join('').split(workdir).join('.');
}

const join = (dir: string, file: string) => (dir ? `${dir}/${file}` : file).replace(/^\.\//, '');

export async function buildProblems(out: BuildOutput): Promise<DocsProblem[]> {
  const found = out.tool === 'mkdocs' ? await mkdocsProblems(out) : out.tool === 'mint' ? await mintProblems(out) : out.tool === 'docusaurus' ? docusaurusProblems(out) : [];
  if (found.length === 0 && !out.passed) found.push(unreadFailure(out));
  return found.slice(0, MAX_BUILD_PROBLEMS);
}

/** `WARNING  -  Documentation file 'a.md' contains a link to 'b.md' which is not found …` and ERROR lines. */
async function mkdocsProblems(out: BuildOutput): Promise<DocsProblem[]> {
  const problems: DocsProblem[] = [];
  for (const raw of out.text.split('\n')) {
    const m = /^\s*(WARNING|ERROR)\s+-\s+(.*)$/.exec(raw);
    if (!m) continue;
    const message = m[2].trim().slice(0, MAX_MESSAGE);
    const page = /\b(?:Documentation|Doc) file '([^']+)'/.exec(message)?.[1];
    const link = /\blink (?:to )?'([^']+)'/.exec(message)?.[1] ?? null;
    const file = page ? join(out.docsRoot, page) : out.configFile;
    // MkDocs names the link's target from docs_dir; the page has it relative to its own folder.
    const asWritten = page && link ? [link, path.posix.relative(path.posix.dirname(page), link)] : [];
    problems.push({ check: 'build', path: file, line: page ? await lineOf(out.read, file, asWritten) : null, target: link ?? message, message: `mkdocs: ${message}` });
  }
  return problems;
}

/**
 * `mint broken-links` prints each file, then its broken links on lines starting with ⎿:
 * `found 2 broken links in 2 files` / `guide.mdx` / ` ⎿  /nope#x`.
 */
async function mintProblems(out: BuildOutput): Promise<DocsProblem[]> {
  const problems: DocsProblem[] = [];
  let file: string | null = null;
  for (const raw of out.text.split('\n')) {
    const line = raw.trimEnd();
    const link = /^\s*⎿\s+(.+)$/.exec(line)?.[1]?.trim();
    if (link && file) {
      const at = join(out.cwd, file);
      problems.push({ check: 'build', path: at, line: await lineOf(out.read, at, [link]), target: link, message: `mint broken-links: "${link.slice(0, 200)}" is a broken link.` });
    } else if (/^\S.*\.(mdx?|json)$/.test(line) && !/^found \d+/.test(line)) {
      file = line;
    }
  }
  return problems;
}

/**
 * Docusaurus's broken-links report names pages by URL, not file: `- Broken link on source page path
 * = /docs/guide:` then ` -> linking to /docs/nowhere` lines. Each link is a problem on the config
 * file (where `onBrokenLinks` is), naming the page.
 */
function docusaurusProblems(out: BuildOutput): DocsProblem[] {
  const problems: DocsProblem[] = [];
  let page: string | null = null;
  for (const raw of out.text.split('\n')) {
    const on = /Broken link on source page path = (.+?):\s*$/.exec(raw);
    if (on) page = on[1];
    const to = /^\s*-> linking to (\S+)/.exec(raw)?.[1];
    if (to && page) {
      problems.push({ check: 'build', path: out.configFile, line: null, target: `${page} -> ${to}`, message: `docusaurus build: the page ${page.slice(0, 200)} links to ${to.slice(0, 200)}, which is not a page.` });
    }
  }
  return problems;
}

/** The last lines of a failed build's output, when nothing in it could be read as a problem. */
function unreadFailure(out: BuildOutput): DocsProblem {
  const tail = out.text.trim().split('\n').slice(-8).join('\n').slice(-MAX_MESSAGE);
  return {
    check: 'build',
    path: out.configFile,
    line: null,
    target: null,
    message: `The site build (${out.tool}) failed${tail ? `; its output ends with:\n${tail}` : ' and printed nothing.'}`,
  };
}

/** The first line of `file` that holds one of the link's spellings (each without its anchor as a fallback). */
async function lineOf(read: ReadFile, file: string, spellings: string[]): Promise<number | null> {
  if (spellings.length === 0) return null;
  const text = await read(file);
  if (text === null) return null;
  const lines = text.split('\n');
  for (const needle of [...spellings, ...spellings.map((l) => l.split('#')[0])]) {
    if (!needle) continue;
    const i = lines.findIndex((l) => l.includes(needle));
    if (i !== -1) return i + 1;
  }
  return null;
}
