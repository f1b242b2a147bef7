// The durable queue is the jobs table: an `active` job without a live lease is claimable. A worker
// claims it with a lease, heartbeats while it runs and releases it when done. An expired lease is
// reclaimed; a job that keeps losing its worker ends `failed` (worker_lost).
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';
import type { JobRow } from './view.ts';
import { jobTitle } from '../contracts/job-title.ts';
import { enqueueWebhook } from './webhooks.ts';
import type { PriceTable } from './usage.ts';

export type TurnOutcome =
  | { kind: 'completed'; title: string; summary: string; prLink: string | null }
  | { kind: 'failed'; code: string; message: string };

export interface QueueEvents {
  /** A job whose lease expired too often was failed by the queue. */
  onWorkerLost(row: JobRow): void;
}

export class JobQueue {
  private readonly db: Kysely<Database>;
  private readonly dialect: StoreDialect;
  private readonly cfg: Config['queue'];
  /** For the job view of webhook deliveries queued with a status change. */
  private readonly prices: PriceTable;
  private readonly events: QueueEvents;

  constructor(dialect: StoreDialect, config: Pick<Config, 'queue' | 'models'>, events: QueueEvents) {
    this.db = dialect.db;
    this.dialect = dialect;
    this.cfg = config.queue;
    this.prices = config.models.prices;
    this.events = events;
  }

  /** Claims the oldest claimable job for `owner`, or returns undefined when there is none. */
  async claim(owner: string, now = Date.now()): Promise<JobRow | undefined> {
    for (;;) {
      const outcome = await this.db.transaction().execute(async (trx) => {
        const candidate = await this.dialect
          .forClaim(
            trx
              .selectFrom('jobs')
              .selectAll()
              .where('status', '=', 'active')
              .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
              .orderBy('updated_at')
              .orderBy('id')
              .limit(1),
          )
          .executeTakeFirst();
        if (!candidate) return { kind: 'none' as const };
        if (candidate.lease_owner !== null) {
          // The previous holder stopped heartbeating: its run is lost.
          const lost = candidate.lost_leases + 1;
          if (lost >= this.cfg.maxLostLeases) {
            const failed: JobRow = {
              ...candidate,
              status: 'failed',
              lost_leases: lost,
              lease_owner: null,
              lease_expires_at: null,
              updated_at: now,
              error_code: 'worker_lost',
              error_message: `The job lost its worker ${lost} times (process crash or restart) and was stopped.`,
            };
            await trx
              .updateTable('jobs')
              .set({ status: 'failed', lost_leases: lost, lease_owner: null, lease_expires_at: null, updated_at: now, error_code: failed.error_code, error_message: failed.error_message })
              .where('id', '=', candidate.id)
              .execute();
            await trx.updateTable('job_messages').set({ handled_at: now, outcome: 'failed' }).where('job_id', '=', candidate.id).where('handled_at', 'is', null).execute();
            await enqueueWebhook(trx, failed, this.prices, now);
            return { kind: 'lost' as const, row: failed };
          }
          candidate.lost_leases = lost;
        }
        const leased: JobRow = { ...candidate, lease_owner: owner, lease_expires_at: now + this.cfg.leaseMs };
        await trx
          .updateTable('jobs')
          .set({ lease_owner: owner, lease_expires_at: leased.lease_expires_at, lost_leases: leased.lost_leases })
          .where('id', '=', candidate.id)
          .execute();
        return { kind: 'claimed' as const, row: leased };
      });
      if (outcome.kind === 'none') return undefined;
      if (outcome.kind === 'claimed') return outcome.row;
      this.events.onWorkerLost(outcome.row);
    }
  }

  /** Extends the lease. False when the job is no longer ours to run (archived, failed or taken). */
  async heartbeat(jobId: string, owner: string, now = Date.now()): Promise<boolean> {
    const r = await this.db
      .updateTable('jobs')
      .set({ lease_expires_at: now + this.cfg.leaseMs })
      .where('id', '=', jobId)
      .where('lease_owner', '=', owner)
      .where('status', '=', 'active')
      .executeTakeFirst();
    return Number(r.numUpdatedRows) === 1;
  }

  async release(jobId: string, owner: string): Promise<void> {
    await this.db.updateTable('jobs').set({ lease_owner: null, lease_expires_at: null }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
  }

  /**
   * Records how a turn ended. The job stays `active` while later messages wait (follow-ups queued
   * during the turn are never dropped, even after a failed turn); otherwise it ends `completed` or
   * `failed` and the lease is released. `seq` null records no message (nothing was left to run).
   * The job row is locked first, so a follow-up committing meanwhile is either seen here or reopens
   * the job after this commits.
   */
  async finishTurn(jobId: string, owner: string, seq: number | null, outcome: TurnOutcome): Promise<{ row: JobRow; more: boolean } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const job = await this.dialect.forUpdate(trx.selectFrom('jobs').selectAll().where('id', '=', jobId)).executeTakeFirst();
      if (!job || job.lease_owner !== owner || job.status !== 'active') return undefined;
      const now = Date.now();
      if (seq !== null) {
        await trx
          .updateTable('job_messages')
          .set(
            outcome.kind === 'completed'
              ? { handled_at: now, outcome: 'completed', title: outcome.title, summary: outcome.summary }
              : { handled_at: now, outcome: 'failed' },
          )
          .where('job_id', '=', jobId)
          .where('seq', '=', seq)
          .execute();
      }
      const pending = await trx.selectFrom('job_messages').select('seq').where('job_id', '=', jobId).where('handled_at', 'is', null).limit(1).executeTakeFirst();
      const prLink = (outcome.kind === 'completed' ? outcome.prLink : null) ?? job.pr_link;
      if (pending) {
        await trx.updateTable('jobs').set({ pr_link: prLink, updated_at: now }).where('id', '=', jobId).execute();
        return { row: { ...job, pr_link: prLink, updated_at: now }, more: true };
      }
      const end =
        outcome.kind === 'completed'
          ? { status: 'completed' as const, error_code: null, error_message: null }
          : { status: 'failed' as const, error_code: outcome.code, error_message: outcome.message };
      const set = { ...end, pr_link: prLink, updated_at: now, lease_owner: null, lease_expires_at: null, lost_leases: 0 };
      await trx.updateTable('jobs').set(set).where('id', '=', jobId).execute();
      const ended = { ...job, ...set };
      await enqueueWebhook(trx, ended, this.prices, now);
      return { row: ended, more: false };
    });
  }

  /** The job's pull request link and, when given, its title (which becomes the job's title). */
  async setPrLink(jobId: string, owner: string, url: string, title?: string): Promise<void> {
    const named = title?.trim() ? { title: jobTitle(title) } : {};
    await this.db.updateTable('jobs').set({ pr_link: url, ...named }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
  }

  /** Jobs waiting for a worker (active, not leased): the queue depth. */
  async depth(now = Date.now()): Promise<number> {
    const { n } = await this.db
      .selectFrom('jobs')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', '=', 'active')
      .where((eb) => eb.or([eb('lease_expires_at', 'is', null), eb('lease_expires_at', '<', now)]))
      .executeTakeFirstOrThrow();
    return Number(n);
  }
}
