// What the docs site is now, read from the base branch of the project's repository: its pages with
// their site paths, titles and sections, its redirects and whether it keeps an llms.txt. The
// suggestions compare not-found paths against it. The repository is read the way a job reads it
// (jobs/repository.ts: the same token policy, URL policy and mirror), at most once a minute per
// project; a read that fails leaves the suggestions without candidate pages and says why. A list
// waits for a read at most WAIT_MS: a first fetch of a big repository goes on in the background and
// a later list gets its pages.
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import { detectDocs, type DocsFramework } from '../agent/prompts.ts';
import { buildSite } from '../agent/checks/frameworks.ts';
import { redirectMatcher, type Redirect } from '../agent/checks/site.ts';
import { parsePageOffLoop } from '../agent/parsing.ts';
import { MAX_PAGE_BYTES, sourceTree } from '../agent/checks/tree.ts';
import type { TreeSource } from '../git/git.ts';
import type { WorktreePool } from '../git/worktree-pool.ts';
import { CodedError } from '../errors.ts';
import { accessFor, openRepository, type RepositoryProject } from '../jobs/repository.ts';

/** Pages whose titles are read, at most (the rest are matched by their paths only). */
const MAX_TITLED_PAGES = 3000;
/** Page text read at a time for titles, at most (one git process per chunk). */
const TITLE_CHUNK_BYTES = 32 * 1024 * 1024;
/** Skipped files named in the site's note, at most. */
const NAMED_SKIPPED = 10;
const FRESH_MS = 60_000;
const WAIT_MS = 20_000;

export interface IndexedPage {
  /** The file in the repository, e.g. docs/guides/auth.mdx. */
  file: string;
  /** Its site path, e.g. /guides/auth. */
  url: string;
  title: string;
}

export interface SiteIndex {
  framework: DocsFramework;
  /** The base branch commit read. */
  commit: string;
  pages: IndexedPage[];
  redirects: Redirect[];
  /** The redirect an address already has in the repository (the fix may not be deployed yet). */
  redirectFor(sitePath: string): Redirect | null;
  /** Whether the repository keeps an llms.txt (at its root or the docs root). */
  hasLlmsTxt: boolean;
  /** What the read left out, in sentences for people: files over the size limit, named with their sizes. */
  notes: string[];
}

export type SiteIndexProject = RepositoryProject & { id: string; baseBranch: string };

/** The read, or a coded error when it takes longer than WAIT_MS (it goes on for the next list). */
function withinWait(index: Promise<SiteIndex>): Promise<SiteIndex> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new CodedError('site_still_reading', `The docs repository is still being read (over ${WAIT_MS / 1000} s, usually a first fetch); likely pages appear on a later list.`)), WAIT_MS);
    timer.unref();
  });
  return Promise.race([index, late]).finally(() => clearTimeout(timer));
}

/** A title from the page's front matter, else its first heading, else its file name. */
function titleOf(file: string, frontMatter: Record<string, unknown> | undefined, firstHeading: string | undefined): string {
  const fm = frontMatter?.title ?? frontMatter?.sidebar_label;
  if (typeof fm === 'string' && fm.trim()) return fm.trim().slice(0, 200);
  if (firstHeading?.trim()) return firstHeading.trim().slice(0, 200);
  const base = file.split('/').pop()!.replace(/\.(mdx?|markdown)$/i, '');
  return base.replace(/[-_]+/g, ' ');
}

/**
 * The titles of `files`, read a chunk of at most TITLE_CHUNK_BYTES at a time straight from git (not
 * through the checks' tree, which keeps every text it read), so the texts held at once stay bounded.
 */
async function readTitles(source: TreeSource, files: string[], format: (file: string) => 'mdx' | 'md'): Promise<Map<string, string>> {
  const sizes = await source.sizes(files);
  const titles = new Map<string, string>();
  let chunk: string[] = [];
  let bytes = 0;
  const flush = async () => {
    const texts = await source.readMany(chunk);
    for (const [file, text] of texts) {
      if (text.includes('\0')) continue;
      const parsed = await parsePageOffLoop(text, format(file));
      titles.set(file, titleOf(file, parsed.frontMatter, parsed.headings[0]?.text));
    }
    chunk = [];
    bytes = 0;
  };
  for (const file of files) {
    const size = sizes.get(file);
    if (size === undefined) continue;
    // A file over the limit is not read (readMany notes it), so it takes no room in the chunk.
    const read = size > MAX_PAGE_BYTES ? 0 : size;
    if (bytes + read > TITLE_CHUNK_BYTES && chunk.length > 0) await flush();
    chunk.push(file);
    bytes += read;
  }
  if (chunk.length > 0) await flush();
  return titles;
}

const megabytes = (bytes: number) => `${(bytes / (1024 * 1024)).toFixed(1)} MB`;

/** The note on files left unread for their size: how many, and the first few by name with their sizes. */
function skippedNote(skipped: ReadonlyMap<string, number>): string[] {
  if (skipped.size === 0) return [];
  const named = [...skipped].slice(0, NAMED_SKIPPED).map(([file, bytes]) => `${file.slice(0, 200)} (${megabytes(bytes)})`);
  const more = skipped.size > NAMED_SKIPPED ? ` and ${skipped.size - NAMED_SKIPPED} more` : '';
  const files = skipped.size === 1 ? 'file is' : 'files are';
  return [`${skipped.size} ${files} over the ${megabytes(MAX_PAGE_BYTES)} read limit and ${skipped.size === 1 ? 'was' : 'were'} not read (titles come from file names): ${named.join(', ')}${more}.`];
}

export class SiteIndexReader {
  readonly #config: Config;
  readonly #pool: WorktreePool;
  /** Reads by project, and when each settled (null: still reading): a minute's worth of lists share one fetch. */
  readonly #recent = new LRUCache<string, { settledAt: number | null; repositoryUrl: string; index: Promise<SiteIndex> }>({ max: 1000 });

  constructor(config: Config, pool: WorktreePool) {
    this.#config = config;
    this.#pool = pool;
  }

  read(project: SiteIndexProject, now = Date.now()): Promise<SiteIndex> {
    let entry = this.#recent.get(project.id);
    const fresh = entry && entry.repositoryUrl === project.repositoryUrl && (entry.settledAt === null || now - entry.settledAt < FRESH_MS);
    if (!entry || !fresh) {
      const started = { settledAt: null as number | null, repositoryUrl: project.repositoryUrl, index: this.#readNow(project) };
      // A failure is remembered as long as a success: a broken repository is not fetched on every list.
      started.index.then(
        () => void (started.settledAt = Date.now()),
        () => void (started.settledAt = Date.now()),
      );
      this.#recent.set(project.id, started);
      entry = started;
    }
    return withinWait(entry.index);
  }

  async #readNow(project: SiteIndexProject): Promise<SiteIndex> {
    const { repo } = openRepository(this.#config, accessFor(this.#config, project), project.repositoryUrl, this.#pool);
    await repo.fetch();
    const commit = await repo.revParse(`refs/remotes/origin/${project.baseBranch}`);
    if (!commit) throw new Error(`The repository has no branch "${project.baseBranch}".`);
    const source = await repo.treeSource(commit, MAX_PAGE_BYTES);
    const profile = await detectDocs(source);
    const site = await buildSite(profile, sourceTree(source));
    const files = [...site.pages].filter((p) => site.urlOf(p) !== null).sort();
    const titles = await readTitles(source, files.slice(0, MAX_TITLED_PAGES), (file) => site.format(file));
    const pages = files.map((file) => ({ file, url: site.urlOf(file)!, title: titles.get(file) ?? titleOf(file, undefined, undefined) }));
    const redirects = site.redirects ?? [];
    const root = profile.docsRoot ? `${profile.docsRoot}/` : '';
    return {
      framework: profile.framework,
      commit,
      pages,
      redirects,
      redirectFor: redirectMatcher(redirects),
      hasLlmsTxt: source.files.includes('llms.txt') || source.files.includes(`${root}llms.txt`),
      notes: skippedNote(source.skipped),
    };
  }
}
