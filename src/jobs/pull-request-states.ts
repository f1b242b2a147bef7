// Whether jobs' pull requests were merged, asked of the code host (through the same access policy as
// the job) at most every few minutes per job, a bounded number per call, and remembered in the store
// (job_pull_requests). A merge, with the time the host gives, is the point from which a job's impact
// and a suggestion's "after" are counted. The jobs list, the job impact and the suggestions ask here.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { JobStatusName } from '../contracts/jobs.ts';
import { accessFor, type RepositoryProject } from './repository.ts';
import { createCodeHost } from '../codehost/index.ts';
import type { Database } from '../store/schema.ts';
import { NOT_CHECKED, pullRequestStates, savePullRequestState, type StoredPullRequest } from '../store/job-pull-requests.ts';

const RECHECK_MS = 5 * 60_000;
/** Code host calls per refresh at most; the rest wait for a later one. */
const MAX_CHECKS = 10;

/** What asking for a job's pull request needs to know of the job. */
export interface PullRequestJob {
  id: string;
  projectId: string;
  status: JobStatusName;
  prLink: string | null;
  ref: string;
  baseRef: string;
}

/** Whether `pr` is worth asking about again at `now`: a pull request that may still change, not asked lately. */
function due(job: PullRequestJob, pr: StoredPullRequest, now: number): boolean {
  if (job.prLink === null || job.status === 'archived' || pr.prState === 'merged' || pr.prState === 'closed') return false;
  return pr.checkedAt === null || now - pr.checkedAt >= RECHECK_MS;
}

export class PullRequestStates {
  readonly #db: Kysely<Database>;
  readonly #config: Config;
  readonly #repositoryOf: (projectId: string) => Promise<RepositoryProject>;
  readonly #log: Logger;

  constructor(db: Kysely<Database>, config: Config, repositoryOf: (projectId: string) => Promise<RepositoryProject>, log: Logger) {
    this.#db = db;
    this.#config = config;
    this.#repositoryOf = repositoryOf;
    this.#log = log;
  }

  /** The stored states of `jobs` (NOT_CHECKED for one never asked), those due asked anew first (at most MAX_CHECKS). */
  async refreshed(jobs: PullRequestJob[], now: number, stored?: Map<string, StoredPullRequest>): Promise<Map<string, StoredPullRequest>> {
    const states = new Map(stored ?? (await pullRequestStates(this.#db, jobs.filter((j) => j.prLink !== null).map((j) => j.id))));
    const asked = jobs.filter((j) => due(j, states.get(j.id) ?? NOT_CHECKED, now)).slice(0, MAX_CHECKS);
    await Promise.all(
      asked.map(async (job) => {
        const old = states.get(job.id) ?? NOT_CHECKED;
        try {
          const answer = await this.#ask(job);
          const fresh = { prState: answer?.state ?? null, mergedAt: answer?.mergedAt ?? null, checkedAt: now };
          await savePullRequestState(this.#db, job.id, fresh.prState, fresh.mergedAt, now);
          states.set(job.id, fresh);
        } catch (err) {
          this.#log.warn({ jobId: job.id, code: (err as { code?: string }).code }, 'the pull request state could not be read');
          // Asked again after RECHECK_MS like any other, not on every call (a revoked token fails every time).
          await savePullRequestState(this.#db, job.id, old.prState, old.mergedAt, now).catch(() => {});
          states.set(job.id, { ...old, checkedAt: now });
        }
      }),
    );
    return states;
  }

  async #ask(job: PullRequestJob) {
    const host = createCodeHost(accessFor(this.#config, await this.#repositoryOf(job.projectId)));
    return host.pullRequestState(job.ref, job.baseRef, AbortSignal.timeout(10_000));
  }
}
