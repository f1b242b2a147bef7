// The durable queue is the jobs table: an `active` job without a live lease is claimable. A worker
// claims it with a lease, heartbeats while it runs and releases it when done. An expired lease is
// reclaimed; a job that keeps losing its worker ends `failed` (worker_lost).
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database } from '../store/schema.ts';
import type { JobRow } from './view.ts';

export interface QueueEvents {
  /** A job whose lease expired too often was failed by the queue. */
  onWorkerLost(row: JobRow): void;
}

export class JobQueue {
  private readonly db: Kysely<Database>;
  private readonly dialect: StoreDialect;
  private readonly cfg: Config['queue'];
  private readonly events: QueueEvents;

  constructor(dialect: StoreDialect, cfg: Config['queue'], events: QueueEvents) {
    this.db = dialect.db;
    this.dialect = dialect;
    this.cfg = cfg;
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

  /** Records a handled message. Returns the job row after, and whether more messages wait. */
  async completeTurn(
    jobId: string,
    owner: string,
    seq: number,
    result: { title: string; summary: string; prLink: string | null },
  ): Promise<{ row: JobRow; more: boolean } | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const job = await trx.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
      if (!job || job.lease_owner !== owner || job.status !== 'active') return undefined;
      const now = Date.now();
      await trx
        .updateTable('job_messages')
        .set({ handled_at: now, outcome: 'completed', title: result.title, summary: result.summary })
        .where('job_id', '=', jobId)
        .where('seq', '=', seq)
        .execute();
      const pending = await trx.selectFrom('job_messages').select('seq').where('job_id', '=', jobId).where('handled_at', 'is', null).limit(1).executeTakeFirst();
      const prLink = result.prLink ?? job.pr_link;
      if (pending) {
        await trx.updateTable('jobs').set({ pr_link: prLink, updated_at: now }).where('id', '=', jobId).execute();
        return { row: { ...job, pr_link: prLink, updated_at: now }, more: true };
      }
      const done: JobRow = { ...job, status: 'completed', pr_link: prLink, updated_at: now, lease_owner: null, lease_expires_at: null, lost_leases: 0 };
      await trx
        .updateTable('jobs')
        .set({ status: 'completed', pr_link: prLink, updated_at: now, lease_owner: null, lease_expires_at: null, lost_leases: 0 })
        .where('id', '=', jobId)
        .execute();
      return { row: done, more: false };
    });
  }

  /** Ends the job `failed`; its unhandled messages are closed as failed. */
  async fail(jobId: string, owner: string, code: string, message: string): Promise<JobRow | undefined> {
    return this.db.transaction().execute(async (trx) => {
      const job = await trx.selectFrom('jobs').selectAll().where('id', '=', jobId).executeTakeFirst();
      if (!job || job.lease_owner !== owner || job.status !== 'active') return undefined;
      const now = Date.now();
      await trx
        .updateTable('jobs')
        .set({ status: 'failed', error_code: code, error_message: message, updated_at: now, lease_owner: null, lease_expires_at: null })
        .where('id', '=', jobId)
        .execute();
      await trx.updateTable('job_messages').set({ handled_at: now, outcome: 'failed' }).where('job_id', '=', jobId).where('handled_at', 'is', null).execute();
      return { ...job, status: 'failed', error_code: code, error_message: message, updated_at: now, lease_owner: null, lease_expires_at: null };
    });
  }

  async setPrLink(jobId: string, owner: string, url: string): Promise<void> {
    await this.db.updateTable('jobs').set({ pr_link: url }).where('id', '=', jobId).where('lease_owner', '=', owner).execute();
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
