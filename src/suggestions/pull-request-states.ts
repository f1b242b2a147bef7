// Whether the pull requests of suggestion jobs were merged, asked of the code host (through the same
// access policy as the job) at most every few minutes per job and remembered in the store: a merge
// is the point from which a suggestion counts its paths' not-found visitors "after".
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { accessFor, type RepositoryProject } from '../jobs/repository.ts';
import { createCodeHost } from '../codehost/index.ts';
import type { Database } from '../store/schema.ts';
import { savePullRequestState, type SuggestionJobRow } from '../store/suggestions.ts';

const RECHECK_MS = 5 * 60_000;
/** Code host calls per list at most; the rest wait for a later list. */
const MAX_CHECKS = 10;

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

  /** The rows, with the pull request state of those due for a check asked anew. */
  async refreshed(rows: SuggestionJobRow[], now: number): Promise<SuggestionJobRow[]> {
    const due = rows
      .filter((r) => r.pr_link !== null && r.status !== 'archived' && r.pr_state !== 'merged' && r.pr_state !== 'closed')
      .filter((r) => r.pr_checked_at === null || now - r.pr_checked_at >= RECHECK_MS)
      .slice(0, MAX_CHECKS);
    const fresh = new Map<string, SuggestionJobRow>();
    await Promise.all(
      due.map(async (r) => {
        try {
          const state = await this.#ask(r);
          await savePullRequestState(this.#db, r.job_id, state?.state ?? null, state?.mergedAt ?? null, now);
          fresh.set(r.job_id, { ...r, pr_state: state?.state ?? null, merged_at: state?.mergedAt ?? null, pr_checked_at: now });
        } catch (err) {
          this.#log.warn({ jobId: r.job_id, code: (err as { code?: string }).code }, 'suggestions: the pull request state could not be read');
          // Asked again after RECHECK_MS like any other, not on every list (a revoked token fails every time).
          await savePullRequestState(this.#db, r.job_id, r.pr_state as 'open' | 'merged' | 'closed' | null, r.merged_at, now).catch(() => {});
        }
      }),
    );
    return rows.map((r) => fresh.get(r.job_id) ?? r);
  }

  async #ask(r: SuggestionJobRow) {
    const host = createCodeHost(accessFor(this.#config, await this.#repositoryOf(r.project_id)));
    return host.pullRequestState(r.ref, r.base_ref, AbortSignal.timeout(10_000));
  }
}
