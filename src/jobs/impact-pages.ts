// The pages a job touched, with their site paths: its files (added, modified, deleted, renamed) read
// through the framework's site model (agent/checks: buildSite, urlOf) at the commit the branch forked
// from and at its head; and the redirects the head has that the base has not. Files that are no page
// of the site (images, config, snippets) are left out. The worker computes it after it pushes; a job
// that pushed before this existed gets it on its first impact request (jobs/impact.ts).
import type { ImpactChange } from '../contracts/impact.ts';
import type { JobFile } from '../contracts/jobs.ts';
import { detectDocs } from '../agent/prompts.ts';
import { buildSite } from '../agent/checks/frameworks.ts';
import { normalizeSitePath, type Site } from '../agent/checks/site.ts';
import { MAX_PAGE_BYTES, sourceTree } from '../agent/checks/tree.ts';
import type { Repo } from '../git/git.ts';

/** A touched page as stored (job_changes.pages): an ImpactPage without its counts. */
export interface TouchedPage {
  change: ImpactChange;
  path: string;
  previousPath: string | null;
  file: string | null;
  redirectTo: string | null;
}

/** Touched pages kept per job at most (a job that rewrites a whole site still answers quickly). */
export const MAX_TOUCHED_PAGES = 500;
/** The longest address analytics stores (pipeline.ts LIMITS.path): a longer one was never visited. */
const MAX_ADDRESS = 2048;

/** An address traffic can have: a site path within the stored length, without control characters (redirect sources come from the branch's config). */
const countable = (p: string | null) => p === null || (p.startsWith('/') && p.length <= MAX_ADDRESS && !/[\u0000-\u001f\u007f-\u009f]/.test(p));

async function siteAt(repo: Pick<Repo, 'treeSource'>, sha: string): Promise<Site> {
  const source = await repo.treeSource(sha, MAX_PAGE_BYTES);
  return buildSite(await detectDocs(source), sourceTree(source));
}

/** A page's site path at a commit's site, null when the file is no page there. */
const pageUrl = (site: Site, file: string) => (site.pages.has(file) ? site.urlOf(file) : null);

/** A redirect's source as a site path: Mintlify and Docusaurus give site paths, MkDocs files under docs_dir (`old.md`). */
function redirectSource(source: string): string {
  return normalizeSitePath(source.startsWith('/') ? source : source.replace(/\.(md|markdown)$/i, ''));
}

export function pagesBetween(base: Site, head: Site, files: JobFile[]): TouchedPage[] {
  const out: TouchedPage[] = [];
  for (const f of files) {
    const now = f.status === 'deleted' ? null : pageUrl(head, f.path);
    const old = f.status === 'added' ? null : pageUrl(base, f.status === 'renamed' && f.previousPath ? f.previousPath : f.path);
    if (now !== null && old === null) out.push({ change: 'added', path: now, previousPath: null, file: f.path, redirectTo: null });
    else if (now === null && old !== null) out.push({ change: 'removed', path: old, previousPath: null, file: f.previousPath ?? f.path, redirectTo: null });
    else if (now !== null && old !== null && now !== old) out.push({ change: 'moved', path: now, previousPath: old, file: f.path, redirectTo: null });
    else if (now !== null) out.push({ change: 'edited', path: now, previousPath: null, file: f.path, redirectTo: null });
  }
  const before = new Set((base.redirects ?? []).map((r) => `${r.source}\0${r.destination}`));
  for (const r of head.redirects ?? []) {
    if (!before.has(`${r.source}\0${r.destination}`)) out.push({ change: 'redirect', path: redirectSource(r.source), previousPath: null, file: null, redirectTo: r.destination });
  }
  return out.filter((p) => countable(p.path) && countable(p.previousPath)).slice(0, MAX_TOUCHED_PAGES);
}

/** The pages the job's files touched between `baseSha` and `headSha` (both in the repository's mirror). */
export async function touchedPages(repo: Pick<Repo, 'treeSource'>, baseSha: string, headSha: string, files: JobFile[]): Promise<TouchedPage[]> {
  const [base, head] = await Promise.all([siteAt(repo, baseSha), siteAt(repo, headSha)]);
  return pagesBetween(base, head, files);
}

/** The stored JSON read back; null when absent or unreadable (computed again). */
export function storedPages(json: string | null | undefined): TouchedPage[] | null {
  if (!json) return null;
  try {
    const v = JSON.parse(json) as unknown;
    return Array.isArray(v) ? (v as TouchedPage[]) : null;
  } catch {
    return null;
  }
}
