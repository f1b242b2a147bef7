// Agent workers: each loop claims a job, runs its queued messages in order through the handler while
// heartbeating the lease, and records the outcome. Never two runs of one job at once: the lease says who.
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import { JobFailure, type AbortReason, type JobContext, type JobHandler } from './handler.ts';
import type { JobQueue, TurnOutcome } from './queue.ts';
import { storedTrigger, type JobRow } from './view.ts';
import { checksMode, redirectHostsOf, type ProjectStore } from '../store/projects.ts';
import { SecretBoxError } from '../store/secret-box.ts';

/** How long a stopped run may take to wind down before the worker moves on. */
const ABORT_GRACE_MS = 5_000;

export interface WorkerPoolDeps {
  config: Config;
  projects: ProjectStore;
  /** The worker's one handle on jobs: claims, messages, run records and the end of each turn. */
  queue: JobQueue;
  handler: JobHandler;
  log: Logger;
}

export class WorkerPool {
  readonly owner: string;
  private readonly deps: WorkerPoolDeps;
  private readonly running = new Map<string, AbortController>();
  private readonly loops: Promise<void>[] = [];
  private stopping = false;
  private wakeWaiters: (() => void)[] = [];

  constructor(deps: WorkerPoolDeps) {
    this.deps = deps;
    this.owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  }

  start(count: number): void {
    for (let i = 0; i < count; i++) this.loops.push(this.loop(i));
  }

  /** Wakes idle workers at once (new job or follow-up). */
  wake(): void {
    const waiters = this.wakeWaiters;
    this.wakeWaiters = [];
    for (const w of waiters) w();
  }

  /** Stops a run of this job in this process, if any. */
  abort(jobId: string, reason: AbortReason): void {
    this.running.get(jobId)?.abort(reason);
  }

  get activeRuns(): number {
    return this.running.size;
  }

  /** Graceful stop: abort runs with reason `shutdown`, wait for them, release their leases. */
  async stop(): Promise<void> {
    this.stopping = true;
    for (const c of this.running.values()) c.abort('shutdown');
    this.wake();
    await Promise.allSettled(this.loops);
  }

  private idle(): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, this.deps.config.queue.pollMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.wakeWaiters.push(done);
    });
  }

  private async loop(index: number): Promise<void> {
    const { queue, log } = this.deps;
    while (!this.stopping) {
      let row: JobRow | undefined;
      try {
        row = await queue.claim(this.owner);
      } catch (err) {
        log.error({ err, worker: index }, 'claiming a job failed');
      }
      if (!row) {
        await this.idle();
        continue;
      }
      await this.run(row).catch((err) => log.error({ err, jobId: row.id }, 'job run crashed'));
    }
  }

  private async run(row: JobRow): Promise<void> {
    const { queue, log, config } = this.deps;
    const controller = new AbortController();
    this.running.set(row.id, controller);
    const heartbeat = setInterval(() => {
      queue
        .heartbeat(row.id, this.owner)
        .then(async (ok) => {
          if (!ok && !controller.signal.aborted) controller.abort(await queue.stopReason(row.id));
        })
        .catch((err) => log.warn({ err, jobId: row.id }, 'heartbeat failed'));
    }, config.queue.heartbeatMs);
    const jobLog = log.child({ jobId: row.id });
    jobLog.info({ lostLeases: row.lost_leases }, 'job run started');
    try {
      let prLink = row.pr_link;
      const records = queue.records(row, this.owner, (url) => (prLink = url));
      for (;;) {
        const history = await queue.messages(row.id);
        const message = history.find((m) => !m.handled);
        let outcome: TurnOutcome;
        if (!message) {
          // Nothing left (e.g. resumed after the last turn was recorded): finish the job.
          outcome = { kind: 'completed', title: '', summary: '', prLink };
        } else {
          const project = await this.projectOf(row.project_id).catch((err: unknown) => {
            if (err instanceof SecretBoxError) return new JobFailure('project_secret_unreadable', err.message);
            throw err;
          });
          const job = { id: row.id, projectId: row.project_id, model: row.model, repository: row.repository, ref: row.ref, baseRef: row.base_ref, prLink, trigger: storedTrigger(row.trigger) };
          outcome =
            project instanceof JobFailure
              ? { kind: 'failed', code: project.code, message: project.message }
              : await this.runTurn({ job, project, history, message, signal: controller.signal, ...records }, controller.signal, jobLog);
          if (outcome.kind === 'completed') outcome.prLink = prLink = outcome.prLink ?? prLink;
        }
        const after = await queue.finishTurn(row.id, this.owner, message?.seq ?? null, outcome);
        if (!after) throw new Aborted(await queue.stopReason(row.id));
        if (!after.more) {
          jobLog.info({ status: after.row.status, prLink }, 'job run finished');
          return;
        }
      }
    } catch (err) {
      await this.settleStop(row, err, jobLog);
    } finally {
      clearInterval(heartbeat);
      this.running.delete(row.id);
    }
  }

  /** Runs one turn; a failure of the turn (JobFailure or a bug) becomes a `failed` outcome. Stops propagate. */
  private async runTurn(ctx: JobContext, signal: AbortSignal, jobLog: Logger): Promise<TurnOutcome> {
    try {
      const result = await this.raceAbort(this.deps.handler.runTurn(ctx), signal);
      if (signal.aborted) throw new Aborted(signal.reason as AbortReason);
      return { kind: 'completed', ...result };
    } catch (err) {
      if (err instanceof Aborted) throw err;
      if (err instanceof JobFailure) {
        jobLog.warn({ code: err.code, message: err.message }, 'turn failed');
        return { kind: 'failed', code: err.code, message: err.message };
      }
      jobLog.error({ err }, 'turn failed on an internal error');
      return { kind: 'failed', code: 'internal_error', message: 'The agent stopped on an internal error; see the server log.' };
    }
  }

  /** The run stopped before finishing: shutdown releases the lease; archive or a lost lease leaves the job to others. */
  private async settleStop(row: JobRow, err: unknown, jobLog: Logger): Promise<void> {
    const { queue } = this.deps;
    const reason = err instanceof Aborted ? err.reason : undefined;
    if (reason === 'shutdown') {
      await queue.release(row.id, this.owner);
      jobLog.info('job run stopped for shutdown; lease released');
      return;
    }
    if (reason === 'archived' || reason === 'lease_lost') {
      jobLog.info({ reason }, 'job run stopped');
      await queue.stopped(row.id, reason);
      return;
    }
    // The store failed under us (e.g. database down): keep the lease; it expires and the job resumes.
    jobLog.error({ err }, 'job run broke off; it resumes when its lease expires');
  }

  /** The job's project with its repository token opened (SecretBoxError when FOLIO_SECRET changed). */
  private async projectOf(projectId: string): Promise<JobContext['project']> {
    const { projects } = this.deps;
    const p = await projects.get(projectId);
    if (!p) throw new Error(`project ${projectId} of a queued job is gone`);
    return {
      id: p.id,
      name: p.name,
      repositoryUrl: p.repository_url,
      baseBranch: p.base_branch,
      codeHost: p.code_host,
      draftPrs: p.draft_prs === 1,
      repoToken: projects.secrets(p).repoToken,
      checks: checksMode(p.checks),
      redirectHosts: redirectHostsOf(p),
      build: { enabled: p.build !== 'off', setup: p.build_setup, command: p.build_command, timeoutSeconds: p.build_timeout_seconds },
      instructions: p.instructions ?? null,
    };
  }

  /** Waits for the turn, but once the run is aborted waits at most the grace period. */
  private raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      let timer: NodeJS.Timeout | undefined;
      const onAbort = () => {
        timer = setTimeout(() => reject(new Aborted(signal.reason as AbortReason)), ABORT_GRACE_MS);
      };
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
      p.then(
        (v) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(v);
        },
        (e) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          reject(signal.aborted ? new Aborted(signal.reason as AbortReason) : e);
        },
      );
    });
  }
}

class Aborted extends Error {
  readonly reason: AbortReason;
  constructor(reason: AbortReason) {
    super(`run stopped: ${reason}`);
    this.reason = reason;
  }
}
