// What every transition shares: its dependencies, the change it reports for the after-commit
// announcement, the row lock, and the record each writes with its row (the job event, and the webhook
// outbox entry when the status changed) — so row, event and outbox entry commit or roll back together.
import type { Kysely, Transaction } from 'kysely';
import type { Config } from '../../config.ts';
import type { JobEvent, JobEventData, JobEventType } from '../../contracts/job-events.ts';
import type { StoreDialect } from '../../store/dialect.ts';
import type { Database } from '../../store/schema.ts';
import { insertJobEvent } from '../events.ts';
import { enqueueWebhook } from '../webhooks.ts';
import type { JobRow } from '../view.ts';

export type Trx = Transaction<Database>;

/** A transition's event: a declared type with its data (contracts/job-events.ts). */
export type TransitionEvent = { [T in JobEventType]: { type: T; data: JobEventData<T> } }[JobEventType];

export interface LifecycleDeps {
  db: Kysely<Database>;
  dialect: StoreDialect;
  config: Pick<Config, 'queue' | 'models' | 'agent'>;
}

/**
 * What a committed transition announces: its events, and whether the status changed, a webhook
 * delivery was queued, work was queued or the job archived.
 */
export interface Change {
  row: JobRow;
  events: JobEvent[];
  status: boolean;
  webhook?: boolean;
  work?: boolean;
  archived?: boolean;
}

/** The job's row, locked until the transaction ends (a concurrent transition of the job waits). */
export function lockedJob(trx: Trx, deps: LifecycleDeps, jobId: string, projectId?: string): Promise<JobRow | undefined> {
  let q = trx.selectFrom('jobs').selectAll().where('id', '=', jobId);
  if (projectId !== undefined) q = q.where('project_id', '=', projectId);
  return deps.dialect.forUpdate(q).executeTakeFirst();
}

/**
 * Writes what goes with a transition's row: its event (if any) and, when `statusChanged`, the
 * announcement of the new status in the webhook outbox. Returns the events to publish after commit
 * and whether a delivery was queued. `created`: the transition inserted the job (a create), so its
 * project's webhook URL is known and its event is the job's first.
 */
export async function record(
  trx: Trx,
  deps: LifecycleDeps,
  row: JobRow,
  event: TransitionEvent | null,
  statusChanged: boolean,
  now: number,
  created?: { webhookUrl: string | null },
): Promise<{ events: JobEvent[]; webhook: boolean }> {
  const webhook = statusChanged && (await enqueueWebhook(trx, row, deps.config.models.prices, now, created?.webhookUrl));
  const events = event ? [await insertJobEvent(trx, deps.dialect, row.id, event.type, event.data as JobEventData<typeof event.type>, created !== undefined)] : [];
  return { events, webhook };
}

/** Marks the job's unhandled messages handled with `outcome` (archive, a job failed by the queue). */
export async function settleMessages(trx: Trx, jobId: string, outcome: 'archived' | 'failed', now: number): Promise<void> {
  await trx.updateTable('job_messages').set({ handled_at: now, outcome }).where('job_id', '=', jobId).where('handled_at', 'is', null).execute();
}
