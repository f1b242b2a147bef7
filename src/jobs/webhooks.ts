// Project webhooks through a durable outbox. A job status change to announce becomes a row of
// webhook_outbox in the same transaction as the change (enqueueWebhook), so it survives a crash the
// moment the change does. Every Folio process runs a WebhookOutbox that claims due deliveries with a
// lease (never two senders at once), POSTs them signed to the project's webhook URL through the
// outbound address check, records each attempt, and retries with exponential backoff until it is
// delivered or out of attempts. Deliveries of one job go out in order; a delivery can be sent again.
import { createHmac, randomBytes } from 'node:crypto';
import os from 'node:os';
import type { Kysely, Transaction } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database, WebhookOutboxTable } from '../store/schema.ts';
import type { ProjectStore } from '../store/projects.ts';
import { newId } from '../store/ids.ts';
import { SecretBoxError } from '../store/secret-box.ts';
import type { Resolve } from '../net/address-policy.ts';
import { createGuardedFetch, refusalOf } from '../net/guarded-fetch.ts';
import { jobView, type JobRow } from './view.ts';
import { backoffDelay } from '../util/retry.ts';
import type { PriceTable } from './usage.ts';

/** Redirects a delivery follows (307/308 only: they keep the method and body), each checked again. */
const MAX_REDIRECTS = 3;
/** Deliveries one process sends at once. */
const CONCURRENCY = 4;
const MAX_BACKOFF_MS = 300_000;

export function signWebhook(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(Number(ms)).toISOString());

/**
 * Queues the announcement of a job's status (`job.<status>`), in the transaction that changed it.
 * Nothing is queued for a project without a webhook URL; `webhookUrl` is the project's when the
 * caller has its row already (a create), else it is read. True when an entry was queued.
 */
export async function enqueueWebhook(trx: Transaction<Database>, row: JobRow, prices: PriceTable, now = Date.now(), webhookUrl?: string | null): Promise<boolean> {
  const url =
    webhookUrl !== undefined ? webhookUrl : (await trx.selectFrom('projects').select('webhook_url').where('id', '=', row.project_id).executeTakeFirst())?.webhook_url;
  if (!url) return false;
  const id = newId('whd');
  const event = `job.${row.status}`;
  const body = JSON.stringify({ id, event, createdAt: iso(now), job: { ...jobView(row, prices), projectId: row.project_id } });
  await trx
    .insertInto('webhook_outbox')
    .values({ id, project_id: row.project_id, job_id: row.id, event, body, status: 'pending', attempts: 0, next_attempt_at: now, created_at: now, updated_at: now })
    .execute();
  return true;
}

export interface WebhookDelivery {
  id: string;
  event: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  lastStatusCode: number | null;
  lastError: string | null;
  createdAt: string;
  /** When the next attempt is due; null unless pending. */
  nextAttemptAt: string | null;
  deliveredAt: string | null;
}

function deliveryView(row: WebhookOutboxTable): WebhookDelivery {
  return {
    id: row.id,
    event: row.event,
    status: row.status,
    attempts: Number(row.attempts),
    lastStatusCode: row.last_status_code,
    lastError: row.last_error,
    createdAt: iso(row.created_at)!,
    nextAttemptAt: row.status === 'pending' ? iso(row.next_attempt_at) : null,
    deliveredAt: iso(row.delivered_at),
  };
}

export interface WebhookOutboxDeps {
  db: Kysely<Database>;
  dialect: StoreDialect;
  config: Config;
  projects: ProjectStore;
  log: Logger;
  /** Name resolution for the outbound address check (tests). */
  resolve?: Resolve;
}

interface AttemptResult {
  status: number | null;
  error: string | null;
  /** Retrying cannot help: a refused address, a redirect, a 4xx other than 408/429. */
  final: boolean;
}

export class WebhookOutbox {
  readonly #deps: WebhookOutboxDeps;
  readonly #owner = `${os.hostname()}:${process.pid}:${randomBytes(4).toString('hex')}`;
  readonly #fetch: typeof globalThis.fetch;
  readonly #closing = new AbortController();
  #wake: (() => void) | null = null;
  #woken = false;
  #loop: Promise<void> | null = null;

  constructor(deps: WebhookOutboxDeps) {
    this.#deps = deps;
    this.#fetch = createGuardedFetch(deps.config.outbound, { resolve: deps.resolve, connectTimeoutMs: deps.config.webhooks.timeoutMs });
  }

  /** A sender holds a delivery this long: one attempt with its redirects, and a margin. */
  get #leaseMs(): number {
    return this.#deps.config.webhooks.timeoutMs + 10_000;
  }

  start(): void {
    this.#loop ??= this.#run();
  }

  /** Something was queued (or is due): look now rather than at the next poll. */
  wake(): void {
    this.#woken = true;
    this.#wake?.();
  }

  /** Stops sending; deliveries in flight are abandoned and their leases released for the next process. */
  async close(): Promise<void> {
    this.#closing.abort();
    this.wake();
    await this.#loop;
    await this.#deps.db
      .updateTable('webhook_outbox')
      .set({ lease_owner: null, lease_expires_at: null })
      .where('lease_owner', '=', this.#owner)
      .execute()
      .catch(() => undefined);
  }

  /** A job's deliveries, oldest first. */
  async list(jobId: string): Promise<WebhookDelivery[]> {
    const rows = await this.#deps.db.selectFrom('webhook_outbox').selectAll().where('job_id', '=', jobId).orderBy('id').execute();
    return rows.map(deliveryView);
  }

  /** Sends a delivery again (same id and body) with a fresh set of attempts; undefined for an unknown one. */
  async redeliver(jobId: string, deliveryId: string): Promise<WebhookDelivery | undefined> {
    const now = Date.now();
    await this.#deps.db
      .updateTable('webhook_outbox')
      .set({ status: 'pending', attempts: 0, next_attempt_at: now, updated_at: now, delivered_at: null })
      .where('id', '=', deliveryId)
      .where('job_id', '=', jobId)
      .where('status', '!=', 'pending')
      .execute();
    const row = await this.#deps.db.selectFrom('webhook_outbox').selectAll().where('id', '=', deliveryId).where('job_id', '=', jobId).executeTakeFirst();
    if (row) this.wake();
    return row && deliveryView(row);
  }

  async #run(): Promise<void> {
    const { log, config } = this.#deps;
    while (!this.#closing.signal.aborted) {
      this.#woken = false;
      let batch: WebhookOutboxTable[] = [];
      try {
        batch = await this.#claim(CONCURRENCY);
      } catch (err) {
        log.warn({ err }, 'claiming webhook deliveries failed');
      }
      if (batch.length > 0) {
        await Promise.all(batch.map((d) => this.#send(d).catch((err) => log.warn({ err, deliveryId: d.id }, 'webhook delivery failed'))));
        continue;
      }
      if (this.#woken) continue;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          this.#wake = null;
          resolve();
        };
        const timer = setTimeout(done, config.queue.pollMs);
        this.#wake = done;
      });
    }
  }

  /** Takes up to `limit` due deliveries, each the oldest pending one of its job, with a lease. */
  async #claim(limit: number, now = Date.now()): Promise<WebhookOutboxTable[]> {
    const { db, dialect } = this.#deps;
    return db.transaction().execute(async (trx) => {
      const due = await dialect
        .forClaim(
          trx
            .selectFrom('webhook_outbox as o')
            .selectAll('o')
            .where('o.status', '=', 'pending')
            .where('o.next_attempt_at', '<=', now)
            .where((eb) => eb.or([eb('o.lease_expires_at', 'is', null), eb('o.lease_expires_at', '<', now)]))
            .where(({ not, exists, selectFrom }) =>
              not(
                exists(
                  selectFrom('webhook_outbox as p')
                    .select('p.id')
                    .whereRef('p.job_id', '=', 'o.job_id')
                    .where('p.status', '=', 'pending')
                    .whereRef('p.id', '<', 'o.id'),
                ),
              ),
            )
            .orderBy('o.next_attempt_at')
            .orderBy('o.id')
            .limit(limit),
        )
        .execute();
      if (due.length === 0) return [];
      await trx
        .updateTable('webhook_outbox')
        .set({ lease_owner: this.#owner, lease_expires_at: now + this.#leaseMs })
        .where('id', 'in', due.map((d) => d.id))
        .execute();
      return due;
    });
  }

  /** One attempt of one delivery, recorded with its outcome. */
  async #send(d: WebhookOutboxTable): Promise<void> {
    const { db, config, log } = this.#deps;
    const attempt = Number(d.attempts) + 1;
    const result = await this.#attempt(d);
    // Cut short by shutdown: not an attempt; close() hands the delivery to the next process.
    if (this.#closing.signal.aborted) return;
    const now = Date.now();
    const delivered = result.error === null;
    const giveUp = !delivered && (result.final || attempt >= config.webhooks.maxAttempts);
    const backoff = backoffDelay(attempt, { baseMs: config.webhooks.retryBaseMs, maxMs: MAX_BACKOFF_MS });
    await db.transaction().execute(async (trx) => {
      await trx
        .insertInto('webhook_deliveries')
        .values({ project_id: d.project_id, job_id: d.job_id, delivery_id: d.id, event: d.event, attempt, status_code: result.status, error: result.error, at: now })
        .execute();
      await trx
        .updateTable('webhook_outbox')
        .set({
          status: delivered ? 'delivered' : giveUp ? 'failed' : 'pending',
          attempts: attempt,
          last_status_code: result.status,
          last_error: result.error,
          next_attempt_at: delivered || giveUp ? now : now + backoff,
          delivered_at: delivered ? now : null,
          lease_owner: null,
          lease_expires_at: null,
          updated_at: now,
        })
        .where('id', '=', d.id)
        .where('lease_owner', '=', this.#owner)
        .execute();
    });
    if (giveUp) log.warn({ jobId: d.job_id, deliveryId: d.id, event: d.event, error: result.error }, 'webhook delivery gave up');
  }

  async #attempt(d: WebhookOutboxTable): Promise<AttemptResult> {
    const { projects, config } = this.#deps;
    const project = await projects.get(d.project_id);
    if (!project?.webhook_url) return { status: null, error: 'The project has no webhook URL any more.', final: true };
    let secret: string | null;
    try {
      secret = projects.secrets(project).webhookSecret;
    } catch (err) {
      if (err instanceof SecretBoxError) return { status: null, error: err.message, final: true };
      throw err;
    }
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Folio-Webhooks/1',
      'x-folio-event': d.event,
      'x-folio-delivery': d.id,
    };
    if (secret) headers['x-folio-signature'] = signWebhook(secret, d.body);
    const signal = AbortSignal.any([AbortSignal.timeout(config.webhooks.timeoutMs), this.#closing.signal]);
    try {
      const res = await this.#post(project.webhook_url, { method: 'POST', headers, body: d.body, signal });
      await res.body?.cancel().catch(() => undefined);
      if (res.status >= 200 && res.status < 300) return { status: res.status, error: null, final: false };
      if (res.status >= 300 && res.status < 400) {
        return { status: res.status, error: `HTTP ${res.status}: the receiver redirects; set the webhook URL to the final address.`, final: true };
      }
      return { status: res.status, error: `HTTP ${res.status}`, final: res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429 };
    } catch (err) {
      const refused = refusalOf(err);
      if (refused) return { status: null, error: refused.message, final: true };
      const e = err as Error;
      const timedOut = e.name === 'TimeoutError' || (e.name === 'AbortError' && !this.#closing.signal.aborted);
      const error = timedOut ? `Timed out after ${config.webhooks.timeoutMs} ms.` : ((e.cause as Error)?.message ?? e.message);
      return { status: null, error, final: false };
    }
  }

  /** POSTs, following 307/308 (each hop through the address check); other redirects end the attempt. */
  async #post(url: string, init: RequestInit): Promise<Response> {
    let target = url;
    for (let hop = 0; ; hop++) {
      const res = await this.#fetch(target, { ...init, redirect: 'manual' });
      const location = res.headers.get('location');
      if ((res.status !== 307 && res.status !== 308) || !location || hop >= MAX_REDIRECTS) return res;
      const next = new URL(location, target);
      if (next.protocol !== 'https:' && next.protocol !== 'http:') return res;
      await res.body?.cancel().catch(() => undefined);
      target = next.toString();
    }
  }
}
