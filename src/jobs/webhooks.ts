// Project webhooks: a signed POST on every job status change, retried with exponential backoff, each
// attempt recorded in webhook_deliveries. Deliveries of one job go out in order.
import { createHmac, randomUUID } from 'node:crypto';
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../config.ts';
import type { Database } from '../store/schema.ts';
import type { ProjectStore } from '../store/projects.ts';
import type { Resolve } from '../net/address-policy.ts';
import { createGuardedFetch, refusalOf } from '../net/guarded-fetch.ts';

/** Redirects a delivery follows (307/308 only: they keep the method and body), each checked again. */
const MAX_REDIRECTS = 3;

export interface WebhookJob {
  id: string;
  projectId: string;
  status: string;
  [k: string]: unknown;
}

export interface WebhookDispatcher {
  notify(job: WebhookJob): void;
  close(): Promise<void>;
}

export interface WebhookDeps {
  db: Kysely<Database>;
  config: Config;
  projects: ProjectStore;
  log: Logger;
  /** Name resolution for the outbound address check (tests). */
  resolve?: Resolve;
  /** First retry delay (doubles per attempt, capped at 5 minutes). Default 1 s. */
  retryBaseMs?: number;
}

export function signWebhook(secret: string, body: string): string {
  return `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
}

export function startWebhookDispatcher(deps: WebhookDeps): WebhookDispatcher {
  const { db, config, log, projects } = deps;
  const guardedFetch = createGuardedFetch(config.outbound, { resolve: deps.resolve, connectTimeoutMs: config.webhooks.timeoutMs });

  /** POSTs to the receiver, following 307/308 (each hop through the address check); other redirects are failures. */
  async function post(url: string, init: RequestInit): Promise<Response> {
    let target = url;
    for (let hop = 0; ; hop++) {
      const res = await guardedFetch(target, { ...init, redirect: 'manual' });
      const location = res.headers.get('location');
      if ((res.status !== 307 && res.status !== 308) || !location || hop >= MAX_REDIRECTS) return res;
      await res.body?.cancel().catch(() => undefined);
      target = new URL(location, target).toString();
      if (!/^https?:/.test(target)) return res;
    }
  }
  const base = deps.retryBaseMs ?? 1000;
  const closing = new AbortController();
  const chains = new Map<string, Promise<void>>();
  const inflight = new Set<Promise<void>>();

  const wait = (ms: number) =>
    new Promise<void>((resolve) => {
      if (closing.signal.aborted) return resolve();
      const t = setTimeout(done, ms);
      function done() {
        clearTimeout(t);
        closing.signal.removeEventListener('abort', done);
        resolve();
      }
      closing.signal.addEventListener('abort', done, { once: true });
    });

  async function record(projectId: string, jobId: string, event: string, attempt: number, statusCode: number | null, error: string | null) {
    await db
      .insertInto('webhook_deliveries')
      .values({ project_id: projectId, job_id: jobId, event, attempt, status_code: statusCode, error, at: Date.now() })
      .execute();
  }

  async function deliver(job: WebhookJob): Promise<void> {
    const row = await projects.get(job.projectId);
    if (!row?.webhook_url) return;
    const project = { webhook_url: row.webhook_url, webhook_secret: projects.secrets(row).webhookSecret };
    const event = `job.${job.status}`;
    const deliveryId = `whd_${randomUUID()}`;
    const body = JSON.stringify({ id: deliveryId, event, createdAt: new Date().toISOString(), job });
    const headers: Record<string, string> = {
      'content-type': 'application/json',
      'user-agent': 'Folio-Webhooks/1',
      'x-folio-event': event,
      'x-folio-delivery': deliveryId,
    };
    if (project.webhook_secret) headers['x-folio-signature'] = signWebhook(project.webhook_secret, body);

    for (let attempt = 1; attempt <= config.webhooks.maxAttempts; attempt++) {
      let status: number | null = null;
      let error: string | null = null;
      try {
        const res = await post(project.webhook_url, { method: 'POST', headers, body, signal: AbortSignal.timeout(config.webhooks.timeoutMs) });
        status = res.status;
        await res.body?.cancel().catch(() => undefined);
        if (status >= 300 && status < 400) error = `HTTP ${status}: the receiver redirects; set the webhook URL to the final address`;
        else if (status < 200 || status >= 300) error = `HTTP ${status}`;
      } catch (err) {
        const e = err as Error;
        const refused = refusalOf(err);
        error = refused ? refused.message : e.name === 'TimeoutError' ? `timed out after ${config.webhooks.timeoutMs} ms` : ((e.cause as Error)?.message ?? e.message);
        // An address the policy refuses stays refused: no retries.
        if (refused) status = 0;
      }
      await record(job.projectId, job.id, event, attempt, status, error).catch((err) =>
        log.warn({ err, jobId: job.id }, 'recording a webhook delivery failed'),
      );
      if (error === null) return;
      // A refused address, a redirect, or a 4xx other than 408/429: retrying will not help.
      if (status !== null && (status === 0 || (status >= 300 && status < 500 && status !== 408 && status !== 429))) break;
      if (attempt < config.webhooks.maxAttempts && !closing.signal.aborted) {
        await wait(Math.min(300_000, base * 2 ** (attempt - 1)));
        if (closing.signal.aborted) break;
      }
    }
    log.warn({ jobId: job.id, event }, 'webhook delivery gave up');
  }

  return {
    notify(job) {
      if (closing.signal.aborted) return;
      const snapshot = JSON.parse(JSON.stringify(job)) as WebhookJob;
      const prev = chains.get(job.id) ?? Promise.resolve();
      const next = prev.then(() => deliver(snapshot)).catch((err) => log.warn({ err, jobId: job.id }, 'webhook delivery failed'));
      chains.set(job.id, next);
      inflight.add(next);
      void next.finally(() => {
        inflight.delete(next);
        if (chains.get(job.id) === next) chains.delete(job.id);
      });
    },
    async close() {
      closing.abort();
      await Promise.allSettled([...inflight]);
    },
  };
}
