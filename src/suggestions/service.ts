// Suggestions drawn from traffic, and jobs started from them. A list reads the range's not-found
// paths (analytics), the site as the base branch has it (site-index.ts) and the jobs already started
// from suggestions (store), and proposes what is left. Starting one creates an ordinary agent job in
// the same transaction that records which paths it covers, so two starts cannot cover a path twice.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { CodedError } from '../errors.ts';
import type { Analytics, Range } from '../analytics/index.ts';
import { DAY_MS, parseRange } from '../analytics/index.ts';
import { notFound, type NotFoundRow } from '../analytics/reports/not-found.ts';
import type { Job } from '../contracts/jobs.ts';
import type { JobsService } from '../jobs/service.ts';
import type { Database } from '../store/schema.ts';
import { suggestionJobRecords, suggestionJobs, type SuggestionJobRow } from '../store/suggestions.ts';
import { stateName } from '../store/job-pull-requests.ts';
import { proposals, type Counting, type NotProposedPath, type Proposal, type ProposalInput, type Proposals, type SuggestedPath } from './proposals.ts';
import { scoreCandidates } from './candidate-scoring.ts';
import type { SiteIndex, SiteIndexProject, SiteIndexReader } from './site-index.ts';
import type { PullRequestStates } from '../jobs/pull-request-states.ts';
import { startedView, type StartedSuggestion } from './outcomes.ts';

/** Not-found paths read per list, busiest first: far more than a suggestion covers. */
const NOT_FOUND_ROWS = 1000;

export interface SuggestionsQuery {
  dateFrom?: string;
  dateTo?: string;
  minVisitors?: number;
}

export interface SiteStatus {
  read: boolean;
  framework: string | null;
  commit: string | null;
  pages: number;
  /** Why the repository could not be read (the suggestions then offer no candidate pages). */
  error: string | null;
  /** What the read or the scoring left out, in sentences for people (files over the size limit, paths not compared). */
  notes: string[];
}

export interface SuggestionList {
  range: { from: number; to: number };
  minVisitors: number;
  site: SiteStatus;
  suggestions: Proposal[];
  /** Paths that reached the threshold but are not shaped like the site's: for people, never for the agent. */
  notProposed: NotProposedPath[];
  started: StartedSuggestion[];
}

export interface SuggestionsDeps {
  db: Kysely<Database>;
  config: Config;
  analytics: Pick<Analytics, 'run'>;
  jobs: JobsService;
  siteIndex: SiteIndexReader;
  /** The project's repository, its token opened (the one place suggestions read a project's secret). */
  repositoryOf: (projectId: string) => Promise<SiteIndexProject>;
  log: Logger;
}

/** Paths of started suggestions whose job is still working or whose pull request is not yet merged or closed. */
export function pathsInProgress(rows: SuggestionJobRow[]): Set<string> {
  const out = new Set<string>();
  for (const r of rows) {
    if (r.status === 'failed' || r.status === 'archived' || r.pr_state === 'merged' || r.pr_state === 'closed') continue;
    // Completed without a pull request (nothing to change, or a push-only host): nothing is pending.
    if (r.status === 'completed' && r.pr_link === null) continue;
    for (const p of JSON.parse(r.paths) as SuggestedPath[]) out.add(p.path);
  }
  return out;
}

/**
 * Paths not to propose: those still being fixed, and those a merged fix covers that nobody has
 * missed since the merge (their older not-found traffic is what the fix was for). A merged path that
 * still answers "not found" afterwards is proposed again.
 */
function settledPaths(rows: SuggestionJobRow[], views: StartedSuggestion[]): Set<string> {
  const out = pathsInProgress(rows);
  for (const v of views) {
    if (v.pullRequest?.state !== 'merged') continue;
    for (const p of v.paths) if (p.after?.total === 0) out.add(p.path);
  }
  return out;
}

export class SuggestionsService {
  readonly #deps: SuggestionsDeps;
  readonly #prStates: PullRequestStates;

  constructor(deps: SuggestionsDeps, prStates: PullRequestStates) {
    this.#deps = deps;
    this.#prStates = prStates;
  }

  /** The rows with their pull requests' states, those due asked anew (the one refresher of every job's). */
  async #refreshed(rows: SuggestionJobRow[], now: number): Promise<SuggestionJobRow[]> {
    const jobs = rows.map((r) => ({ id: r.job_id, projectId: r.project_id, status: r.status, prLink: r.pr_link, ref: r.ref, baseRef: r.base_ref }));
    const stored = new Map(rows.filter((r) => r.pr_checked_at !== null).map((r) => [r.job_id, { prState: stateName(r.pr_state), mergedAt: r.merged_at === null ? null : Number(r.merged_at), checkedAt: Number(r.pr_checked_at) }]));
    const states = await this.#prStates.refreshed(jobs, now, stored);
    return rows.map((r) => {
      const pr = states.get(r.job_id);
      return pr ? { ...r, pr_state: pr.prState, merged_at: pr.mergedAt, pr_checked_at: pr.checkedAt } : r;
    });
  }

  /** The range asked for, or the last `config.suggestions.days` whole UTC days up to the end of today. */
  rangeOf(q: SuggestionsQuery, now = Date.now()): { from: number; to: number } {
    const r: Range = parseRange(q);
    const endOfToday = Math.floor(now / DAY_MS) * DAY_MS + DAY_MS;
    const to = r.to ?? endOfToday;
    const from = r.from ?? to - this.#deps.config.suggestions.days * DAY_MS;
    return { from, to };
  }

  async #site(projectId: string): Promise<{ index: SiteIndex | null; status: SiteStatus }> {
    try {
      const index = await this.#deps.siteIndex.read(await this.#deps.repositoryOf(projectId));
      return { index, status: { read: true, framework: index.framework, commit: index.commit, pages: index.pages.length, error: null, notes: [...index.notes] } };
    } catch (err) {
      if (err instanceof CodedError && err.code === 'project_not_found') throw err;
      // Folio's own errors say what went wrong (their messages are written for users); anything else stays in the log.
      const coded = err instanceof CodedError;
      this.#deps.log.warn({ projectId, ...(coded ? { code: err.code } : { err }) }, 'suggestions: the repository could not be read');
      const message = coded ? err.message : 'The docs repository could not be read; the server log says why.';
      return { index: null, status: { read: false, framework: null, commit: null, pages: 0, error: message.slice(0, 500), notes: [] } };
    }
  }

  async #notFound(projectId: string, range: { from: number; to: number }): Promise<{ rows: NotFoundRow[]; complete: boolean }> {
    const report = await this.#deps.analytics.run(notFound, { projectId, range, limit: NOT_FOUND_ROWS, offset: 0 });
    return { rows: report.rows, complete: !report.hasMore };
  }

  /** The proposals again with the likely pages of their broken paths, scored off the event loop; what was left unscored is noted on the site's status. */
  async #withCandidates(proposed: Proposals, input: ProposalInput, status: SiteStatus): Promise<Proposals> {
    const broken = proposed.suggestions.find((s) => s.kind === 'broken_paths')?.paths.map((p) => p.path) ?? [];
    if (!input.index || broken.length === 0) return proposed;
    const scored = await scoreCandidates({ version: input.index.commit, pages: input.index.pages }, broken);
    if (scored.note) status.notes.push(scored.note);
    return proposals({ ...input, candidates: scored.byPath });
  }

  /**
   * What the range's traffic proposes. `counting`: which visitors meet the threshold — the reports'
   * visitors for a list a person reads and starts, `derived` (server-derived identities only) for
   * the weekly automatic run.
   */
  async list(projectId: string, q: SuggestionsQuery = {}, now = Date.now(), counting: Counting = 'visitors'): Promise<SuggestionList> {
    const range = this.rangeOf(q, now);
    const minVisitors = q.minVisitors ?? this.#deps.config.suggestions.minVisitors;
    const [{ index, status }, { rows }, started] = await Promise.all([
      this.#site(projectId),
      this.#notFound(projectId, range),
      suggestionJobs(this.#deps.db, projectId).then((rows) => this.#refreshed(rows, now)),
    ]);
    const days = Math.max(1, Math.round((range.to - range.from) / DAY_MS));
    const views = await Promise.all(started.map((r) => startedView(r, (from, to) => this.#notFound(projectId, { from, to }), now)));
    const input: ProposalInput = { projectId, rows, index, minVisitors, counting, inProgress: settledPaths(started, views), days };
    const { suggestions, notProposed } = await this.#withCandidates(proposals(input), input, status);
    return { range, minVisitors, site: status, suggestions, notProposed, started: views };
  }

  /** Starts the agent job of a current suggestion; 404 when no current suggestion has this id. */
  async start(projectId: string, id: string, q: SuggestionsQuery = {}, now = Date.now()): Promise<{ job: Job; suggestion: Proposal }> {
    const list = await this.list(projectId, q, now);
    const suggestion = list.suggestions.find((s) => s.id === id);
    if (!suggestion) {
      throw new CodedError('suggestion_not_found', `Project "${projectId}" has no current suggestion "${id}": list the current ones with GET /v2/agent/${projectId}/suggestions (a suggestion changes when its paths do, and is gone while a job works on them).`);
    }
    return { job: await this.startListed(projectId, list, suggestion, { automatic: false, now }), suggestion };
  }

  /** Starts the job of `suggestion`, one of `list` (just read); the weekly run starts it this way. */
  async startListed(projectId: string, list: SuggestionList, suggestion: Proposal, opts: { automatic: boolean; now: number }): Promise<Job> {
    const { now } = opts;
    return this.#deps.jobs.startWith(projectId, suggestionJobRecords, async (records, start) => {
      // Serialised per project: a start that raced this one has recorded its paths by now.
      const busy = pathsInProgress(await records.started(projectId));
      const taken = suggestion.paths.filter((p) => busy.has(p.path)).map((p) => p.path);
      if (taken.length > 0) throw new CodedError('suggestion_in_progress', `A job started from another suggestion is already fixing ${taken.slice(0, 3).join(', ')}${taken.length > 3 ? ' and more' : ''}.`);
      const created = await start({
        prompt: suggestion.prompt,
        title: suggestion.title,
        trigger: { kind: 'suggestion', suggestionId: suggestion.id, suggestionKind: suggestion.kind, automatic: opts.automatic },
      });
      await records.insert({
        job_id: created.id,
        project_id: projectId,
        suggestion_id: suggestion.id,
        kind: suggestion.kind,
        title: suggestion.title,
        paths: JSON.stringify(suggestion.paths),
        range_from: list.range.from,
        range_to: list.range.to,
        automatic: opts.automatic ? 1 : 0,
        created_at: now,
      });
      return created;
    });
  }
}
