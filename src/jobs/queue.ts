// The worker's handle on the queue: the jobs table is the queue (an `active` job without a live
// lease is claimable). A worker claims a job, reads its messages, records its run through the
// RunRecords bound to the job, heartbeats the lease and ends each turn; every status change among
// these is a transition of src/jobs/lifecycle, which also announces it.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { AbortReason, RunRecords, TurnMessage } from './handler.ts';
import type { JobLifecycle } from './lifecycle/index.ts';
import type { JobRow } from './view.ts';
import { recordUsage } from './usage.ts';
import { saveBranchDiff, saveChecks } from './changes.ts';
import { readJobSpend } from './budget.ts';

export type TurnOutcome =
  | { kind: 'completed'; title: string; summary: string; prLink: string | null }
  | { kind: 'failed'; code: string; message: string };

export class JobQueue {
  readonly #lifecycle: JobLifecycle;
  readonly #db: Kysely<Database>;

  constructor(lifecycle: JobLifecycle, db: Kysely<Database>) {
    this.#lifecycle = lifecycle;
    this.#db = db;
  }

  /** Claims the oldest claimable job for `owner`, or returns undefined when there is none. */
  claim(owner: string, now = Date.now()): Promise<JobRow | undefined> {
    return this.#lifecycle.claim(owner, now);
  }

  /** Extends the lease. False when the job is no longer ours to run (archived, failed or taken). */
  heartbeat(jobId: string, owner: string, now = Date.now()): Promise<boolean> {
    return this.#lifecycle.heartbeat(jobId, owner, now);
  }

  /** Shutdown: gives the lease up so another worker resumes the job at once. */
  release(jobId: string, owner: string): Promise<void> {
    return this.#lifecycle.release(jobId, owner);
  }

  /**
   * Records how a turn ended (`seq` null: nothing was left to run). The job stays `active` while later
   * messages wait (`more`); undefined when the job is no longer this owner's.
   */
  finishTurn(jobId: string, owner: string, seq: number | null, outcome: TurnOutcome): Promise<{ row: JobRow; more: boolean } | undefined> {
    return outcome.kind === 'completed'
      ? this.#lifecycle.completeTurn({ jobId, owner, seq, title: outcome.title, summary: outcome.summary, prLink: outcome.prLink })
      : this.#lifecycle.failTurn({ jobId, owner, seq, code: outcome.code, message: outcome.message });
  }

  /** The run stopped because the job was archived or its lease was taken (its `run.stopped` event). */
  stopped(jobId: string, reason: Exclude<AbortReason, 'shutdown'>): Promise<void> {
    return this.#lifecycle.stop(jobId, reason);
  }

  /** Why the store says a run may not go on: archived, or someone else holds the lease. */
  stopReason(jobId: string): Promise<Exclude<AbortReason, 'shutdown'>> {
    return this.#lifecycle.stopReason(jobId);
  }

  /** The job's pull request link and, when given, its title (which becomes the job's title). */
  setPrLink(jobId: string, owner: string, url: string, title?: string): Promise<void> {
    return this.#lifecycle.setPrLink(jobId, owner, url, title);
  }

  /** Every message of the job in order, handled or not. */
  async messages(jobId: string): Promise<TurnMessage[]> {
    const rows = await this.#db.selectFrom('job_messages').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
    return rows.map((m) => ({ seq: Number(m.seq), prompt: m.prompt, title: m.title, summary: m.summary, handled: m.handled_at !== null }));
  }

  /** A run's records, bound to its job and lease; `onPrLink` hears of each pull request link set. */
  records(job: JobRow, owner: string, onPrLink: (url: string) => void): RunRecords {
    const db = this.#db;
    return {
      emit: async (type, data) => {
        await this.#lifecycle.event(job.id, type, data);
      },
      setPrLink: async (url, title) => {
        onPrLink(url);
        await this.setPrLink(job.id, owner, url, title);
      },
      recordUsage: (usage) => recordUsage(db, { id: job.id, projectId: job.project_id, model: job.model }, usage),
      saveBranchDiff: (diff) => saveBranchDiff(db, job.id, diff),
      saveChecks: (checks) => saveChecks(db, job.id, checks),
      spend: () => readJobSpend(db, job.id),
    };
  }

  /** Jobs waiting for a worker (active, not leased): the queue depth. */
  async depth(now = Date.now()): Promise<number> {
    const { n } = await this.#db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
