// Docs-aware checks before every push: internal links and anchors resolve, images and assets exist,
// new pages are in the navigation (where the framework has an explicit one), removed pages are out of
// it and nothing links to them, redirects lead to pages of this site (and moved pages keep one),
// llms.txt follows the pages added and removed, and a suggestion job changed only what it is for
// (scope.ts). Only what the job did is blamed: each checked file is checked again as it is on the
// base commit, and problems found there too are reported as pre-existing, never blocking.
import type { DocsProfile, DocsSource } from '../prompts.ts';
import type { Workspace } from '../workspace.ts';
import { buildSite } from './frameworks.ts';
import { isAssetPath, offSiteTarget, type OffSite } from './paths.ts';
import { PageCache, type ParseMemo, type Redirect, type Site } from './site.ts';
import { hasAnchor } from './slugs.ts';
import { llmsTxtFile, llmsTxtProblems } from './llms-txt.ts';
import { scopeProblems } from './scope.ts';
import { sourceTree, workspaceTree, type DocsTree } from './tree.ts';
import { problemWhere, sortByBase, type CheckName, type ChecksReport, type DocsProblem, type JobPolicy } from './types.ts';

export * from './types.ts';

/** Unchanged pages read to find links to removed pages, at most. */
const MAX_INBOUND_PAGES = 5000;
/** Problems reported at most (new and pre-existing each). */
const MAX_PROBLEMS = 500;

export interface ChecksInput {
  /** Paths the job changed relative to the base: earlier turns and this one (added, modified, deleted). */
  changed: Iterable<string>;
  /** Files the agent moved in this turn, [from, to] in order. */
  moves?: Iterable<[string, string]>;
}

/** What one run of the checks covers: the job's policy, and whether only the enforced checks run. */
interface Coverage {
  policy: JobPolicy;
  /** The project turned its checks off: only what a suggestion job must pass runs (scope, redirects off the site). */
  enforcedOnly: boolean;
}

interface Side {
  site: Site;
  pages: PageCache;
}

async function side(profile: DocsProfile, tree: DocsTree, memo: ParseMemo | null = null): Promise<Side> {
  const site = await buildSite(profile, tree);
  return { site, pages: new PageCache(site, memo) };
}

/** What the job changed between the two sides: pages added and removed, and pages moved (new path → old path). */
interface PageChanges {
  changed: string[];
  addedPages: string[];
  removedPages: string[];
  moves: Map<string, string>;
}

async function checkSides(input: ChecksInput, cur: Side, base: Side, coverage: Coverage): Promise<ChecksReport> {
  const { policy, enforcedOnly } = coverage;
  const findings = new Findings(cur, base, coverage);
  const changed = [...new Set(input.changed)].sort();
  if (cur.site.redirects) checkOffSiteRedirects(findings, cur, base, policy);
  if (policy.suggestion) for (const p of await scopeProblems(policy.suggestion, cur.site, base.site, changed)) findings.add(p);
  if (enforcedOnly) return findings.report;

  const curFiles = cur.site.tree.files;
  const baseFiles = base.site.tree.files;
  const addedPages = changed.filter((p) => cur.site.pages.has(p) && !baseFiles.has(p));
  const removedPages = changed.filter((p) => base.site.pages.has(p) && !curFiles.has(p));
  const moves = await detectMoves(input.moves ?? [], addedPages, removedPages, cur, base);
  const changes: PageChanges = { changed, addedPages, removedPages, moves };

  await checkLinks(findings, cur, base, changes);
  if (cur.site.nav) checkNavigation(findings, cur.site.nav, cur, base, changes);
  if (cur.site.redirects) checkRedirects(findings, cur, base, moves);
  await checkLlmsTxt(findings, cur, base, changes);
  return findings.report;
}

/** The report being filled: new problems apart from those the base side has too, both lists capped. */
class Findings {
  readonly report: ChecksReport;

  constructor(cur: Side, base: Side, { policy, enforcedOnly }: Coverage) {
    this.report = {
      framework: cur.site.framework,
      ran: enforcedOnly ? [] : ['links', 'anchors', 'assets'],
      pagesChecked: 0,
      problems: [],
      preExisting: [],
      truncated: cur.site.tree.truncated || base.site.tree.truncated,
    };
    if (!enforcedOnly && (cur.site.nav || base.site.nav)) this.report.ran.push('navigation');
    if (cur.site.redirects) this.report.ran.push('redirects');
    if (policy.suggestion) this.report.ran.push('scope');
  }

  /** A problem the job introduced. */
  add(p: DocsProblem): void {
    this.push(this.report.problems, p);
  }

  /** Problems found now, sorted into new and pre-existing by the problems found on the base side (sortByBase). */
  blame(now: DocsProblem[], before: DocsProblem[]): void {
    const { fresh, preExisting } = sortByBase(now, before);
    for (const p of preExisting) this.push(this.report.preExisting, p);
    for (const p of fresh) this.push(this.report.problems, p);
  }

  private push(list: DocsProblem[], p: DocsProblem): void {
    if (list.length < MAX_PROBLEMS) list.push(p);
    else this.report.truncated = true;
  }
}

/** Links from changed pages, and from unchanged pages that may link to a removed page. */
async function checkLinks(findings: Findings, cur: Side, base: Side, { changed, removedPages, moves }: PageChanges): Promise<void> {
  const toCheck = changed.filter((p) => cur.site.pages.has(p));
  if (removedPages.length > 0) toCheck.push(...(await pagesMentioningRemoved(findings, cur, base, changed, removedPages)));
  for (const page of toCheck) {
    const now = await linkProblems(cur, page);
    if (now.truncated) findings.report.truncated = true;
    const was = moves.get(page) ?? page;
    const before = base.site.pages.has(was) ? (await linkProblems(base, was)).problems.map((p) => ({ ...p, path: page })) : [];
    findings.blame(now.problems, before);
  }
  findings.report.pagesChecked = toCheck.length;
}

/** Unchanged pages whose text names a removed page (read at most MAX_INBOUND_PAGES of them). */
async function pagesMentioningRemoved(findings: Findings, cur: Side, base: Side, changed: string[], removedPages: string[]): Promise<string[]> {
  const changedSet = new Set(changed);
  const keys = [...new Set(removedPages.flatMap((p) => base.site.linkKeys(p)))];
  let candidates = [...cur.site.pages].filter((p) => !changedSet.has(p)).sort();
  if (candidates.length > MAX_INBOUND_PAGES) {
    candidates = candidates.slice(0, MAX_INBOUND_PAGES);
    findings.report.truncated = true;
  }
  const texts = await cur.site.tree.readMany(candidates);
  return candidates.filter((p) => {
    const t = texts.get(p);
    return t ? keys.some((k) => mentions(t, k)) : false;
  });
}

/** Navigation: new pages listed, no entry naming a page that is gone. */
function checkNavigation(findings: Findings, nav: NonNullable<Site['nav']>, cur: Side, base: Side, { addedPages, removedPages, moves }: PageChanges): void {
  for (const page of addedPages) {
    if (!cur.site.needsNav(page) || nav.includes(page)) continue;
    const from = moves.get(page);
    findings.add({
      check: 'navigation',
      path: nav.file,
      line: null,
      target: page,
      message: `${from ? `Page ${from} was moved to ${page}, which` : `New page ${page}`} is not in the navigation: add "${nav.entryFor(page)}" to ${nav.label}.`,
    });
  }
  // Entries of the base navigation that named a page this job removed, and where moved pages went.
  const removedSet = new Set(removedPages);
  const removedBy = new Map<string, string>();
  for (const e of base.site.nav?.entries ?? []) if (e.page && removedSet.has(e.page)) removedBy.set(e.value, e.page);
  const movedTo = new Map([...moves].map(([to, from]) => [from, to]));
  const dangling = (s: Side): DocsProblem[] =>
    (s.site.nav?.entries ?? [])
      .filter((e) => e.page === null)
      .map((e) => {
        const gone = removedBy.get(e.value);
        const to = gone ? movedTo.get(gone) : undefined;
        return {
          check: 'navigation' as CheckName,
          path: nav.file,
          line: null,
          target: e.value,
          message: gone
            ? `${nav.label} still lists "${e.value}", but this job ${to ? `moved ${gone} to ${to}: list "${nav.entryFor(to)}" instead` : `deleted ${gone}: remove the entry`}.`
            : `${nav.label} lists "${e.value}", which is not a page: fix or remove the entry.`,
        };
      });
  findings.blame(dangling(cur), dangling(base));
}

/**
 * Where the site declares redirects (Mintlify, Docusaurus's client-redirects plugin, MkDocs's
 * redirects plugin): a moved page keeps its old address through one (where the framework needs it),
 * every redirect leads to a page, and none leads in a circle.
 */
function checkRedirects(findings: Findings, cur: Side, base: Side, moves: Map<string, string>): void {
  const config = cur.site.configFile ?? 'docs.json';
  for (const [to, from] of moves) {
    const oldUrl = base.site.urlOf(from);
    const newUrl = cur.site.urlOf(to);
    const entry = oldUrl && newUrl ? cur.site.redirectEntry(oldUrl, newUrl) : null;
    if (!entry || cur.site.redirectFor(oldUrl!)) continue;
    findings.add({ check: 'redirects', path: config, line: null, target: oldUrl, message: `Page ${from} was moved to ${to}: add ${entry} so links to the old address keep working.` });
  }
  const broken = (s: Side): DocsProblem[] =>
    (s.site.redirects ?? [])
      // Patterns (:slug, *) and other sites (checkOffSiteRedirects) are not one page to look for.
      .filter((r) => !/[:*]/.test(r.destination) && offSiteTarget(r.destination) === null)
      .flatMap((r) => {
        const t = s.site.resolveRedirect(r.destination);
        if (t.kind !== 'missing' && t.kind !== 'outside') return [];
        return [{ check: 'redirects' as CheckName, path: config, line: null, target: r.destination, message: `The redirect from "${r.source}" leads to "${r.destination}", which is not a page.` }];
      });
  findings.blame(broken(cur), broken(base));
  const loops = (s: Side): DocsProblem[] =>
    redirectLoops(s.site.redirects ?? []).map((cycle) => ({
      check: 'redirects' as CheckName,
      path: config,
      line: null,
      target: cycle[0],
      message: `The redirects ${cycle.map((c) => `"${c}"`).join(' → ')} → "${cycle[0]}" lead in a circle and never reach a page: point one of them at a page.`,
    }));
  findings.blame(loops(cur), loops(base));
}

/**
 * Redirects that leave the site, on every framework: to another host (absolute, `//host`, `/\host`),
 * unless the project lists that host in its redirect hosts, or to another scheme (`javascript:`…).
 * In a suggestion job the allow-list does not apply and the problem is enforced.
 */
function checkOffSiteRedirects(findings: Findings, cur: Side, base: Side, policy: JobPolicy): void {
  const config = cur.site.configFile ?? 'docs.json';
  const allowed = new Set(policy.suggestion ? [] : policy.redirectHosts);
  const offSite = (s: Side): DocsProblem[] =>
    (s.site.redirects ?? []).flatMap((r) => {
      const off = offSiteTarget(r.destination);
      if (!off || (off.kind === 'host' && off.host !== null && allowed.has(off.host))) return [];
      const problem: DocsProblem = { check: 'redirects', path: config, line: null, target: r.destination, message: offSiteMessage(r, off, policy) };
      return [policy.suggestion ? { ...problem, enforced: true as const } : problem];
    });
  findings.blame(offSite(cur), offSite(base));
}

function offSiteMessage(r: Redirect, off: OffSite, policy: JobPolicy): string {
  const clipped = (t: string) => (t.length > 200 ? `${t.slice(0, 200)}…` : t);
  const from = `The redirect from "${clipped(r.source)}" leads to "${clipped(r.destination)}"`;
  if (off.kind === 'scheme') return `${from}, which is not a web address: a redirect must lead to a page of this site.`;
  const where = off.host ? `another site (${off.host})` : 'another site';
  if (policy.suggestion) return `${from}, on ${where}: a suggestion job may redirect only to pages of this site.`;
  return `${from}, on ${where}: redirect to a page of this site${off.host ? `, or list ${off.host} in the project's redirect hosts if the redirect is meant` : ''}.`;
}

/** A redirect's address as one key: no leading or trailing slash, anchor, `.md`/`.mdx` or `/index`. */
const redirectKey = (p: string) => p.split('#')[0].replace(/^\/+|\/+$/g, '').replace(/\.mdx?$/i, '').replace(/(^|\/)index$/i, '');

/** Each circle of exact redirects once, as the addresses in it (starting from its smallest). */
export function redirectLoops(redirects: { source: string; destination: string }[]): string[][] {
  const next = new Map<string, string>();
  for (const r of redirects) if (!/[:*]/.test(r.source) && !next.has(redirectKey(r.source))) next.set(redirectKey(r.source), redirectKey(r.destination));
  const cycles = new Map<string, string[]>();
  const done = new Set<string>();
  for (const start of next.keys()) {
    const seen = new Map<string, number>();
    const path: string[] = [];
    for (let at: string | undefined = start; at !== undefined && !done.has(at); at = next.get(at)) {
      if (seen.has(at)) {
        const cycle = path.slice(seen.get(at));
        const first = cycle.indexOf([...cycle].sort()[0]);
        const ordered = [...cycle.slice(first), ...cycle.slice(0, first)];
        cycles.set(ordered.join('\n'), ordered.map((k) => `/${k}`));
        break;
      }
      seen.set(at, path.length);
      path.push(at);
    }
    for (const p of path) done.add(p);
  }
  return [...cycles.values()];
}

/** Where the repository keeps an llms.txt: the job's new pages are listed in it, its removed pages no longer are. */
async function checkLlmsTxt(findings: Findings, cur: Side, base: Side, { addedPages, removedPages }: PageChanges): Promise<void> {
  const file = llmsTxtFile(cur.site.tree.files);
  if (!file) return;
  findings.report.ran.push('llms-txt');
  if (addedPages.length === 0 && removedPages.length === 0) return;
  const text = (await cur.site.tree.readMany([file])).get(file);
  if (text === undefined) return;
  for (const p of llmsTxtProblems(file, text, { added: addedPages, removed: removedPages }, cur.site, base.site, (page) => cur.site.needsNav(page))) findings.add(p);
}

const WORD = /[\p{L}\p{N}_-]/u;

/** `text` names `key` as a whole path segment or file name (`page-3` in `/a/page-3#x`, not in `page-30`). */
export function mentions(text: string, key: string): boolean {
  for (let i = text.indexOf(key); i !== -1; i = text.indexOf(key, i + 1)) {
    const before = i === 0 ? '' : text[i - 1];
    const after = text[i + key.length] ?? '';
    if (!WORD.test(before) && !WORD.test(after)) return true;
  }
  return false;
}

/** Moved pages as new path → old path: moves the agent made, then identical content, then a unique file name. */
async function detectMoves(explicit: Iterable<[string, string]>, added: string[], removed: string[], cur: Side, base: Side): Promise<Map<string, string>> {
  const origin = new Map<string, string>();
  for (const [a, b] of explicit) {
    const first = origin.get(a) ?? a;
    origin.delete(a);
    origin.set(b, first);
  }
  const moves = new Map<string, string>();
  const addedSet = new Set(added);
  const removedSet = new Set(removed);
  for (const [to, from] of origin) {
    if (addedSet.has(to) && removedSet.has(from)) {
      moves.set(to, from);
      addedSet.delete(to);
      removedSet.delete(from);
    }
  }
  if (addedSet.size > 0 && removedSet.size > 0 && addedSet.size * removedSet.size <= 250_000) {
    const [now, before] = await Promise.all([cur.site.tree.readMany([...addedSet]), base.site.tree.readMany([...removedSet])]);
    for (const from of [...removedSet]) {
      const text = before.get(from)?.trim();
      const to = [...addedSet].find((a) => text !== undefined && now.get(a)?.trim() === text);
      if (to) {
        moves.set(to, from);
        addedSet.delete(to);
        removedSet.delete(from);
      }
    }
    const name = (p: string) => p.slice(p.lastIndexOf('/') + 1).replace(/\.(mdx|md)$/i, '');
    for (const from of [...removedSet]) {
      const same = [...addedSet].filter((a) => name(a) === name(from));
      const rivals = [...removedSet].filter((r) => name(r) === name(from));
      if (same.length === 1 && rivals.length === 1) {
        moves.set(same[0], from);
        addedSet.delete(same[0]);
        removedSet.delete(from);
      }
    }
  }
  return moves;
}

/** The link, anchor and asset problems of one page. */
async function linkProblems(s: Side, page: string): Promise<{ problems: DocsProblem[]; truncated: boolean }> {
  const parsed = await s.pages.parsed(page);
  if (!parsed) return { problems: [], truncated: false };
  const problems: DocsProblem[] = [];
  const problem = (check: CheckName, line: number | null, target: string, message: string) =>
    problems.push({ check, path: page, line, target, message });
  for (const link of parsed.links) {
    const t = s.site.resolve(page, link);
    const href = link.href.length > 200 ? `${link.href.slice(0, 200)}…` : link.href;
    switch (t.kind) {
      case 'outside':
        problem(link.kind === 'image' ? 'assets' : 'links', link.line, link.href, `Link "${href}" leads outside the repository.`);
        break;
      case 'missing': {
        const looked = t.tried.slice(0, 3).join(', ');
        if (link.kind === 'image') problem('assets', link.line, link.href, `Image "${href}" does not exist (looked for ${looked}).`);
        else if (isAssetPath(t.tried[0] ?? '')) problem('assets', link.line, link.href, `File "${href}" does not exist (looked for ${looked}).`);
        else problem('links', link.line, link.href, `Link "${href}" does not lead to a page (looked for ${looked}${hint(s.site)}).`);
        break;
      }
      case 'self':
      case 'page': {
        const target = t.kind === 'self' ? page : t.page;
        const anchor = t.anchor;
        if (!anchor) break;
        const anchors = await s.pages.anchors(target);
        if (anchors && !hasAnchor(anchors, anchor)) {
          problem(
            'anchors',
            link.line,
            link.href,
            t.kind === 'self'
              ? `Link "${href}" points to no heading on this page: no anchor "${anchor}".`
              : `Link "${href}": ${target} has no heading with the anchor "${anchor}".`,
          );
        }
        break;
      }
    }
  }
  return { problems, truncated: parsed.truncated };
}

function hint(site: Site): string {
  switch (site.framework) {
    case 'mintlify':
      return '; Mintlify links pages by path without extension, e.g. /guides/auth';
    case 'docusaurus':
      return '; link a doc by its file (./auth.md) or its URL';
    case 'mkdocs':
      return '; MkDocs links pages by relative path to the .md file';
    default:
      return '';
  }
}

/** The problems as lines for the model (new ones only), with a note on pre-existing ones. */
export function describeForModel(report: ChecksReport, max = 50): string {
  const lines = report.problems.slice(0, max).map((p) => `- ${problemWhere(p)} (${p.check}): ${p.message}`);
  if (report.problems.length > max) lines.push(`- … and ${report.problems.length - max} more.`);
  if (report.preExisting.length > 0) {
    lines.push(
      `(${report.preExisting.length} problem${report.preExisting.length === 1 ? ' was' : 's were'} already on the base branch; they are not yours to fix unless the instruction asks.)`,
    );
  }
  return lines.join('\n');
}

export interface DocsChecksOptions {
  profile: DocsProfile;
  /** What the job may do (from its stored trigger and the project); an ordinary job with no redirect hosts when absent. */
  policy?: JobPolicy;
  /** Run only the checks a suggestion job must pass (the project's checks are off). */
  enforcedOnly?: boolean;
  /** The job's base commit (where its branch forked from the base branch). */
  base: () => Promise<DocsSource>;
  /** Paths changed by the job's earlier turns, relative to the base. */
  priorChanges: () => Promise<string[]>;
}

/** Checks for the agent loop: the base side is built once per turn, the workspace side every round. */
export function createDocsChecks(opts: DocsChecksOptions): { run(ws: Workspace): Promise<ChecksReport> } {
  let base: Promise<Side> | undefined;
  let prior: Promise<string[]> | undefined;
  const memo: ParseMemo = new Map();
  const coverage: Coverage = { policy: opts.policy ?? { redirectHosts: [], suggestion: null }, enforcedOnly: opts.enforcedOnly ?? false };
  return {
    async run(ws) {
      base ??= opts.base().then((src) => side(opts.profile, sourceTree(src)));
      prior ??= opts.priorChanges();
      const [b, p] = await Promise.all([base, prior]);
      const cur = await side(opts.profile, await workspaceTree(ws), memo);
      return checkSides({ changed: [...p, ...ws.touched], moves: ws.moves }, cur, b, coverage);
    },
  };
}
