// A job's life in one place. Every transition of a job's status — create, follow-up, archive,
// claim, lease lost, complete, fail, stop, release — is one function of this folder that writes the
// row, its event and its webhook outbox entry in the caller's transaction; this file runs them in a
// transaction and announces what committed, once and only after the commit: events on the bus, the
// webhook outbox and workers woken, archived runs stopped, status listeners told. Nothing outside
// writes a job's status (test/platform/layers.test.ts).
import type { Job } from '../../contracts/jobs.ts';
import type { JobEvent, JobEventData, JobEventType } from '../../contracts/job-events.ts';
import { retrying } from '../../util/retry.ts';
import { appendJobEvent, JobEventBus } from '../events.ts';
import { jobView, type JobRow } from '../view.ts';
import type { AbortReason } from '../handler.ts';
import { archiveJob } from './archive.ts';
import { claimJob, type Claim } from './claim.ts';
import { completeTurn, type CompletedTurn } from './complete.ts';
import type { Change, LifecycleDeps, Trx } from './context.ts';
import { createJob, type NewJob } from './create.ts';
import { failTurn, type FailedTurn } from './fail.ts';
import { followUp, type FollowUp } from './follow-up.ts';
import { heartbeat, releaseLease, setPrLink } from './lease.ts';
import { stopReason, stopRun } from './stop.ts';

export type { LifecycleDeps, NewJob, FollowUp, CompletedTurn, FailedTurn };

type StatusListener = (job: Job, projectId: string) => void;

/** The transitions offered inside one transaction (JobLifecycle.transaction); each reports its change for the announcement. */
export class JobTransitions {
  readonly trx: Trx;
  readonly #deps: LifecycleDeps;
  readonly #changes: Change[];

  constructor(trx: Trx, deps: LifecycleDeps, changes: Change[]) {
    this.trx = trx;
    this.#deps = deps;
    this.#changes = changes;
  }

  #took(change: Change): Change {
    this.#changes.push(change);
    return change;
  }

  async create(input: NewJob): Promise<JobRow> {
    return this.#took(await createJob(this.trx, this.#deps, input)).row;
  }

  /** `reopened`: the job had finished and is active again; `seq`: the message's number. */
  async followUp(input: FollowUp): Promise<{ row: JobRow; reopened: boolean; seq: number }> {
    const change = await followUp(this.trx, this.#deps, input);
    this.#took(change);
    return { row: change.row, reopened: change.status, seq: change.seq };
  }

  async archive(projectId: string, jobId: string): Promise<JobRow> {
    return this.#took(await archiveJob(this.trx, this.#deps, projectId, jobId)).row;
  }

  async claim(owner: string, now: number): Promise<Claim> {
    const claim = await claimJob(this.trx, this.#deps, owner, now);
    if (claim.kind !== 'none') this.#took(claim.change);
    return claim;
  }

  async completeTurn(t: CompletedTurn): Promise<{ row: JobRow; more: boolean } | undefined> {
    const end = await completeTurn(this.trx, this.#deps, t);
    return end && { row: this.#took(end.change).row, more: end.more };
  }

  async failTurn(t: FailedTurn): Promise<{ row: JobRow; more: boolean } | undefined> {
    const end = await failTurn(this.trx, this.#deps, t);
    return end && { row: this.#took(end.change).row, more: end.more };
  }

  async stop(jobId: string, reason: Exclude<AbortReason, 'shutdown'>): Promise<void> {
    const change = await stopRun(this.trx, this.#deps, jobId, reason);
    if (change) this.#took(change);
  }
}

export class JobLifecycle {
  readonly #deps: LifecycleDeps;
  /** Job events recorded by this process, as they are recorded (live streams subscribe). */
  readonly events = new JobEventBus();
  readonly #statusListeners: StatusListener[] = [];
  readonly #workListeners: (() => void)[] = [];
  readonly #archiveListeners: ((jobId: string) => void)[] = [];
  readonly #webhookListeners: (() => void)[] = [];

  constructor(deps: LifecycleDeps) {
    this.#deps = deps;
  }

  /** Called after every committed status change (webhooks, metrics). */
  onStatusChange(fn: StatusListener): void {
    this.#statusListeners.push(fn);
  }
  /** Called after new work was queued (wakes idle workers at once). */
  onWork(fn: () => void): void {
    this.#workListeners.push(fn);
  }
  /** Called after a webhook delivery was queued (the outbox sends it now, not at its next poll). */
  onWebhook(fn: () => void): void {
    this.#webhookListeners.push(fn);
  }
  /** Called after a job was archived (stops its run in this process). */
  onArchive(fn: (jobId: string) => void): void {
    this.#archiveListeners.push(fn);
  }

  /**
   * Runs `fn` in one transaction and announces its transitions once it committed. A writer of the
   * same job that took an event number meanwhile (PostgreSQL) fails it before anything commits, so
   * it runs again (a few times at most).
   */
  transaction<T>(fn: (tx: JobTransitions) => Promise<T>): Promise<T> {
    const once = async () => {
      const changes: Change[] = [];
      const result = await this.#deps.db.transaction().execute((trx) => fn(new JobTransitions(trx, this.#deps, changes)));
      this.#announce(changes);
      return result;
    };
    return retrying(once, { attempts: 5, retryable: (err) => this.#deps.dialect.isUniqueViolation(err) });
  }

  /** The one announcement of committed transitions, in their order. */
  #announce(changes: Change[]): void {
    for (const c of changes) {
      for (const e of c.events) this.events.publish(c.row.id, e);
      if (c.webhook) for (const fn of this.#webhookListeners) fn();
      if (c.archived) {
        for (const fn of this.#archiveListeners) fn(c.row.id);
        void this.#deps.dialect.notify('folio_archive', c.row.id).catch(() => {});
      }
      if (c.work) {
        for (const fn of this.#workListeners) fn();
        void this.#deps.dialect.notify('folio_jobs').catch(() => {});
      }
      if (c.status) {
        const job = jobView(c.row, this.#deps.config.models.prices);
        for (const fn of this.#statusListeners) fn(job, c.row.project_id);
      }
    }
  }

  /** Claims the oldest claimable job for `owner` (failing on the way those that lost their worker too often). */
  async claim(owner: string, now = Date.now()): Promise<JobRow | undefined> {
    for (;;) {
      const claim = await this.transaction((tx) => tx.claim(owner, now));
      if (claim.kind === 'none') return undefined;
      if (claim.kind === 'claimed') return claim.change.row;
    }
  }

  completeTurn(t: CompletedTurn) {
    return this.transaction((tx) => tx.completeTurn(t));
  }

  failTurn(t: FailedTurn) {
    return this.transaction((tx) => tx.failTurn(t));
  }

  stop(jobId: string, reason: Exclude<AbortReason, 'shutdown'>): Promise<void> {
    return this.transaction((tx) => tx.stop(jobId, reason));
  }

  archive(projectId: string, jobId: string): Promise<JobRow> {
    return this.transaction((tx) => tx.archive(projectId, jobId));
  }

  heartbeat(jobId: string, owner: string, now = Date.now()): Promise<boolean> {
    return heartbeat(this.#deps, jobId, owner, now);
  }

  release(jobId: string, owner: string): Promise<void> {
    return releaseLease(this.#deps, jobId, owner);
  }

  setPrLink(jobId: string, owner: string, url: string, title?: string): Promise<void> {
    return setPrLink(this.#deps, jobId, owner, url, title);
  }

  stopReason(jobId: string): Promise<Exclude<AbortReason, 'shutdown'>> {
    return stopReason(this.#deps, jobId);
  }

  /** A run's own event (no transition: the agent's steps), stored and published. */
  event<T extends JobEventType>(jobId: string, type: T, data: JobEventData<T>): Promise<JobEvent> {
    return appendJobEvent(this.events, this.#deps.db, this.#deps.dialect, jobId, type, data);
  }
}
