// What a process's services report to the Prometheus endpoint (http/metrics.ts names the series).
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { JobStatus } from '../store/schema.ts';
import type { JobQueue } from './queue.ts';
import type { WorkerPool } from './worker.ts';
import type { TriggerReceiver } from './triggers/receiver.ts';

export interface ServiceMetrics {
  /** Active jobs waiting for a worker. */
  queueDepth(): Promise<number>;
  /** Jobs by status (statuses with none are left out). */
  jobsByStatus(): Promise<{ status: JobStatus; count: number }[]>;
  /** Deliveries refused before their signature checked out, by host and code, since the start. */
  triggerRefusals(): { host: string; code: string; count: number }[];
  /** Job runs in progress in this process. */
  activeRuns(): number;
}

export function serviceMetrics(deps: { db: Kysely<Database>; queue: JobQueue; workers: WorkerPool | null; receiver: TriggerReceiver }): ServiceMetrics {
  return {
    queueDepth: () => deps.queue.depth(),
    async jobsByStatus() {
      const rows = await deps.db
        .selectFrom('jobs')
        .select((eb) => ['status', eb.fn.countAll<number>().as('n')])
        .groupBy('status')
        .execute();
      return rows.map((r) => ({ status: r.status as JobStatus, count: Number(r.n) }));
    },
    triggerRefusals: () => deps.receiver.refusals(),
    activeRuns: () => deps.workers?.activeRuns ?? 0,
  };
}
