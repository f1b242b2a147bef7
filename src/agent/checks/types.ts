// What the docs-aware checks find and report. Plain data: it goes into job events, the pull request
// description and the dashboard.
import type { JobTrigger } from '../../contracts/jobs.ts';
import type { CheckName } from '../../contracts/common.ts';

/** Per project (contracts/common.ts declares them): `strict` fails a job that leaves problems, `warn` lists them in the PR, `off` skips the checks. */
export type { ChecksMode } from '../../contracts/common.ts';

/** The checks, as the contract declares them (contracts/common.ts, CHECK_NAMES). */
export type { CheckName };

/** The kinds of suggestion a job can be started from (contracts/jobs.ts declares them). */
export type SuggestionKind = Extract<JobTrigger, { kind: 'suggestion' }>['suggestionKind'];

/**
 * What a job may do, from what started it (the stored trigger) and the project's settings, never from
 * the prompt: where redirects may lead, and, for a suggestion job, what it may change.
 */
export interface JobPolicy {
  /** Hosts besides this site a redirect may lead to (the project's `redirectHosts`); suggestion jobs ignore them. */
  redirectHosts: readonly string[];
  /** The kind of suggestion that started the job (null: any other job): it may change only what that kind is for. */
  suggestion: SuggestionKind | null;
}

export interface DocsProblem {
  check: CheckName;
  /** The file the problem is in (a page, or the navigation/configuration file). */
  path: string;
  /** 1-based line in `path`, when known. */
  line: number | null;
  /** The link, image, navigation entry or page concerned. */
  target: string | null;
  /** One sentence saying what is wrong and, where possible, how to fix it. */
  message: string;
  /**
   * Fails the job whatever the project's checks mode (strict, warn or off): what a suggestion job may
   * not do (a change outside its scope, a redirect off the site).
   */
  enforced?: true;
}

export interface ChecksReport {
  framework: string;
  /** The checks that ran (navigation only where the framework has an explicit navigation; redirects where the site declares them; scope in suggestion jobs). */
  ran: CheckName[];
  /** Pages whose links were checked: the pages the job changed and pages linking to pages it removed. */
  pagesChecked: number;
  /** Problems the job introduced (blocking in `strict` mode). */
  problems: DocsProblem[];
  /** Problems already on the base branch in the checked files: reported, never blocking. */
  preExisting: DocsProblem[];
  /** True when a limit cut the checks short (very many pages, links or problems). */
  truncated: boolean;
  /** The site's own build (src/site-build), when the project has one; its problems are among the others, as `build`. */
  build?: BuildReport;
}

/** How the site's own build went: which tool ran what, and why it did not pass or run. */
export interface BuildReport {
  /** mkdocs, mint, docusaurus, or custom (the project's own command). */
  tool: string;
  /** The command line that ran (or would have). */
  command: string;
  status: 'passed' | 'failed' | 'skipped';
  /** Why it was skipped, stopped or failed, in one sentence; null when it passed. */
  reason: string | null;
  /** The setup step: none, ran now, or reused from the cache of the same lockfiles. */
  setup: 'none' | 'ran' | 'cached';
  ms: number;
}

/**
 * Problems found now, sorted into new and pre-existing by the problems found on the base side,
 * matched by check, file and target, counted: a second broken link to the same target is new even
 * when the first one was there before.
 */
export function sortByBase(now: DocsProblem[], before: DocsProblem[]): { fresh: DocsProblem[]; preExisting: DocsProblem[] } {
  const key = (p: DocsProblem) => `${p.check}\0${p.path}\0${p.target ?? ''}`;
  const seen = new Map<string, number>();
  for (const p of before) seen.set(key(p), (seen.get(key(p)) ?? 0) + 1);
  const fresh: DocsProblem[] = [];
  const preExisting: DocsProblem[] = [];
  for (const p of now) {
    const n = seen.get(key(p)) ?? 0;
    if (n > 0) seen.set(key(p), n - 1);
    (n > 0 ? preExisting : fresh).push(p);
  }
  return { fresh, preExisting };
}

/** `path:line` of a problem, for people and the model. */
export function problemWhere(p: DocsProblem): string {
  return p.line ? `${p.path}:${p.line}` : p.path;
}
