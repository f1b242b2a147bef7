// The effect of a merged job on the pages it touched (GET …/job/{id}/impact): the job's pull request
// must be merged (the code host says when, through the one refresher) at least a day ago; its pages
// come from job_changes (the worker stored them after its push) or, for a job that pushed before
// that, are read once from its stored base and head commits through the worktree pool and stored;
// the counts are the job-impact report's. A computed answer is kept a minute (polling dashboards).
import type { Kysely } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { CodedError } from '../errors.ts';
import type { JobImpact } from '../contracts/impact.ts';
import type { Job } from '../contracts/jobs.ts';
import type { Analytics } from '../analytics/index.ts';
import { DEFAULT_DAYS, firstMeasurable, inDays } from '../analytics/impact-windows.ts';
import { addressesOf, jobImpact } from '../analytics/reports/job-impact.ts';
import { iso } from '../analytics/reports/report.ts';
import type { WorktreePool } from '../git/worktree-pool.ts';
import type { Database } from '../store/schema.ts';
import { readPushed, savePages } from './changes.ts';
import { storedPages, touchedPages, type TouchedPage } from './impact-pages.ts';
import type { PullRequestStates } from './pull-request-states.ts';
import { accessFor, openRepository, type RepositoryProject } from './repository.ts';

/** A computed answer is served again for this long. */
const CACHE_MS = 60_000;

export interface JobImpactDeps {
  db: Kysely<Database>;
  config: Config;
  jobs: { get(projectId: string, jobId: string): Promise<Job> };
  analytics: Pick<Analytics, 'run'>;
  pullRequests: PullRequestStates;
  pool: WorktreePool;
  repositoryOf: (projectId: string) => Promise<RepositoryProject>;
  log: Logger;
}

/** Where a touched page's views count, and where its not-found visitors do (its old addresses). */
export function addressesFor(page: TouchedPage): { views: string[]; notFound: string[] } {
  switch (page.change) {
    case 'moved': {
      const old = addressesOf(page.previousPath ?? page.path);
      return { views: [...addressesOf(page.path), ...old], notFound: old };
    }
    case 'removed':
    case 'redirect':
      return { views: addressesOf(page.path), notFound: addressesOf(page.path) };
    default:
      return { views: addressesOf(page.path), notFound: [] };
  }
}

const notReady = (why: string) => new CodedError('impact_not_ready', why);

/** "in about 30 hours", "in 40 minutes": how long until `ms` has passed. */
function waitText(ms: number): string {
  const minutes = Math.max(1, Math.ceil(ms / 60_000));
  return minutes >= 90 ? `in about ${Math.round(minutes / 60)} hours` : `in ${minutes} minutes`;
}

/** Why a merge is not measurable yet: the first whole UTC day after its day is not over. */
const tooRecent = (mergedAt: number, now: number) =>
  notReady(
    `The pull request was merged ${iso(mergedAt)}; its effect is compared over whole UTC days after the day of the merge, from ${iso(firstMeasurable(mergedAt))} (${waitText(firstMeasurable(mergedAt) - now)}).`,
  );

export class JobImpactService {
  readonly #deps: JobImpactDeps;
  readonly #answers = new LRUCache<string, JobImpact>({ max: 1000, ttl: CACHE_MS });

  constructor(deps: JobImpactDeps) {
    this.#deps = deps;
  }

  /**
   * `beforeCount` runs just before the traffic is read (the caller's analytics read limit): an
   * answer served from the cache, or a job not measurable yet, reads no traffic and costs no read
   * (the jobs list asks for every merged job's badge).
   */
  async impact(projectId: string, jobId: string, days = DEFAULT_DAYS, beforeCount: () => Promise<void> = async () => {}, now = Date.now()): Promise<JobImpact> {
    const job = await this.#deps.jobs.get(projectId, jobId); // 404 job_not_found, another project's included
    const key = `${projectId}/${jobId}/${days}`;
    const cached = this.#answers.get(key);
    if (cached) return cached;
    const mergedAt = await this.#mergedAt(projectId, job, now);
    const pages = await this.#pages(projectId, job);
    await beforeCount();
    const counts = await this.#deps.analytics.run(jobImpact, { projectId, range: { from: null, to: null }, pages: pages.map(addressesFor), at: mergedAt, days, now });
    const w = counts.windows;
    if (!w) throw tooRecent(mergedAt, now);
    const answer: JobImpact = {
      jobId: job.id,
      pullRequest: { url: job.prLink, mergedAt: iso(mergedAt) },
      days,
      windowDays: inDays(w.length),
      clipped: w.clipped,
      before: { from: iso(w.before.from), to: iso(w.before.to) },
      after: { from: iso(w.after.from), to: iso(w.after.to) },
      total: counts.total,
      pages: pages.map((p, i) => ({ ...p, before: counts.pages[i].before, after: counts.pages[i].after })),
    };
    this.#answers.set(key, answer);
    return answer;
  }

  /** The merge time the code host gave, or impact_not_ready saying why there is none (yet). */
  async #mergedAt(projectId: string, job: Job, now: number): Promise<number> {
    if (job.prLink === null) throw notReady(`Job "${job.id}" has no pull request: its effect is measured from the merge of one.`);
    const ref = { id: job.id, projectId, status: job.status, prLink: job.prLink, ref: job.source.ref, baseRef: job.source.baseRef };
    const states = await this.#deps.pullRequests.refreshed([ref], now);
    const pr = states.get(job.id);
    if (pr?.prState === 'closed') throw notReady(`The pull request of job "${job.id}" was closed without merging: there is no change to measure.`);
    if (pr?.prState !== 'merged' || pr.mergedAt === null) {
      const asked = pr?.checkedAt ? ` (asked ${Math.max(0, Math.round((now - pr.checkedAt) / 60_000))} minutes ago)` : '';
      throw notReady(`The pull request of job "${job.id}" is not merged yet${asked}: its effect is measured from the merge.`);
    }
    if (now < firstMeasurable(pr.mergedAt)) throw tooRecent(pr.mergedAt, now);
    return pr.mergedAt;
  }

  /** The pages the job touched: stored, or read once from its commits and stored. */
  async #pages(projectId: string, job: Job): Promise<TouchedPage[]> {
    const pushed = await readPushed(this.#deps.db, job.id);
    if (!pushed) return [];
    const stored = storedPages(pushed.pages);
    if (stored) return stored;
    try {
      const project = await this.#deps.repositoryOf(projectId);
      const { repo } = openRepository(this.#deps.config, accessFor(this.#deps.config, project), project.repositoryUrl, this.#deps.pool);
      await repo.fetch(AbortSignal.timeout(60_000));
      const pages = await touchedPages(repo, pushed.baseSha, pushed.headSha, job.files);
      await savePages(this.#deps.db, job.id, pushed.headSha, pages);
      return pages;
    } catch (err) {
      if (err instanceof CodedError && err.code === 'project_not_found') throw err;
      this.#deps.log.warn({ jobId: job.id, code: (err as { code?: string }).code }, 'impact: the touched pages could not be read');
      throw new CodedError('job_pages_unavailable', `The pages job "${job.id}" touched could not be read from the repository now (its commits ${pushed.baseSha.slice(0, 12)}..${pushed.headSha.slice(0, 12)}); try again later.`);
    }
  }
}
