// What the docs-aware checks find and report. Plain data: it goes into job events, the pull request
// description and the dashboard.
import type { JobTrigger } from '../../contracts/jobs.ts';

/** Per project: `strict` fails a job that leaves problems, `warn` lists them in the PR, `off` skips the checks. */
export type ChecksMode = 'strict' | 'warn' | 'off';
export const CHECKS_MODES: readonly ChecksMode[] = ['strict', 'warn', 'off'];

/**
 * The checks: internal links, anchors into pages, images and assets, navigation, redirects (moved
 * pages, redirects to pages, none off the site), llms.txt, and the scope of a suggestion job.
 */
export type CheckName = 'links' | 'anchors' | 'assets' | 'navigation' | 'redirects' | 'llms-txt' | 'scope';

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
}

/** `path:line` of a problem, for people and the model. */
export function problemWhere(p: DocsProblem): string {
  return p.line ? `${p.path}:${p.line}` : p.path;
}
