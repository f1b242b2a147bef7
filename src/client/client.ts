// FolioClient: a typed client of the Folio API (and of any server with the same operations).
// Platform fetch only: runs in Node 20+, Deno, Bun and browsers.
import { codeForStatus, FolioError, type FolioErrorDetail } from './errors.ts';
import { parseSse } from './sse.ts';
import {
  TERMINAL_STATUSES,
  type AnalyticsEvent,
  type AnalyticsQuery,
  type IngestResult,
  type ImportResult,
  type Job,
  type JobChanges,
  type JobImpact,
  type JobEvent,
  type JobEventPage,
  type JobMessage,
  type JobPage,
  type JobStatus,
  type UsageReport,
  type ViewsPage,
  type NotFoundPage,
  type ReferrersPage,
  type AiCompaniesPage,
  type SuggestionJob,
  type SuggestionList,
  type SuggestionsQuery,
  type VisitorsPage,
  type WebhookDelivery,
} from './types.ts';
import pRetry from 'p-retry';
import { backoffDelay, isAbortError, linkedSignal, parseRetryAfter, randomId, sleep, type LinkedSignal } from './util.ts';

export const CLIENT_VERSION = '0.1.0';

/** What `onResponse` sees for every HTTP response the client receives (including ones it retries). */
export interface ResponseInfo {
  method: string;
  url: string;
  status: number;
  headers: Headers;
  /** 0 for the first try, 1 for the first retry… */
  attempt: number;
}

export interface FolioClientOptions {
  /** Where the API lives, e.g. https://folio.example.com (a path prefix is kept). */
  baseUrl: string;
  /** An admin API key; sent as `Authorization: Bearer …`. */
  apiKey: string;
  /** Default project of every call; a call's own `projectId` wins. */
  projectId?: string;
  /** A fetch implementation (tests, proxies, custom agents); the platform's by default. */
  fetch?: typeof fetch;
  /** How many times a safe request is retried after a 429, a 5xx or a network error (default 3). */
  retries?: number;
  /** Sent as User-Agent where the platform allows it (default folio-client/<version> outside browsers). */
  userAgent?: string;
  /** Time limit of one attempt until the whole response is read; 0 disables (default 30 s). */
  timeoutMs?: number;
  /** First backoff step of retries (default 500 ms); doubles each retry, jittered. */
  retryBaseMs?: number;
  /** Longest backoff step (default 10 s). */
  retryMaxMs?: number;
  /** A 429 whose Retry-After is longer than this is not waited for but thrown at once (default 60 s). */
  maxRetryAfterMs?: number;
  /** Called for every response, before it is handled (logging, metrics, tests). */
  onResponse?: (info: ResponseInfo) => void;
}

export interface CallOptions {
  signal?: AbortSignal;
  /** Overrides the client's projectId for this call. */
  projectId?: string;
}

export interface WriteOptions extends CallOptions {
  /**
   * Idempotency-Key of this logical call, reused across its retries. A random UUID by default;
   * pass your own to make a call safe to repeat across processes, or `false` to send none (then it
   * is not retried).
   */
  idempotencyKey?: string | false;
}

export interface CreateJobInput {
  prompt: string;
  /** provider/model-id; must be one of the server's allowed models. */
  model?: string;
  /** The job's spending limit in US dollars (Folio; its model needs a price); the project's default otherwise. */
  maxCostUsd?: number;
  /** The job's limit in tokens, input + output (Folio); the project's default otherwise. */
  maxTokens?: number;
}

export interface ListJobsQuery {
  status?: JobStatus;
  /** Jobs per page, 1 to 100 (server default 20). */
  limit?: number;
  cursor?: string;
}

/** Iterates jobs newest first across every page; `pages()` iterates the pages themselves. */
export interface JobIterable extends AsyncIterable<Job> {
  pages(): AsyncGenerator<JobPage, void, undefined>;
}

export interface JobEventsOptions extends CallOptions {
  /** Start after this event id (0 = from the beginning). */
  after?: number;
  /** Keep the connection open and yield events live (Server-Sent Events), resuming after drops. */
  follow?: boolean;
  /**
   * With `follow`: end once the job is no longer active (completed, failed or archived) and every
   * event up to then was yielded. Default true; false streams until aborted or the loop breaks.
   */
  untilDone?: boolean;
  /** With `follow` and `untilDone`: how often the job's status is checked while the stream is quiet (default 2 s). */
  statusIntervalMs?: number;
  /** Consecutive failed connections before giving up (default 10). */
  maxReconnects?: number;
  /**
   * With `follow`: a connection that receives nothing, not even the server's keepalive comments, for
   * this long is treated as dropped and resumed (default 60 s; Folio sends a keepalive every 15 s; 0 disables).
   */
  idleTimeoutMs?: number;
}

export interface WaitForJobOptions extends CallOptions {
  /** Give up after this long with a FolioError `timeout` (default: wait forever). */
  timeoutMs?: number;
  /** First polling interval (default 1 s); grows by half each quiet poll up to `maxIntervalMs`. */
  intervalMs?: number;
  /** Longest polling interval (default 10 s). */
  maxIntervalMs?: number;
  /** Called with the job on the first poll and whenever its status, PR link or update time changes. */
  onUpdate?: (job: Job) => void;
}

export interface IngestOptions extends WriteOptions {
  /** Events per request (the server takes at most 1,000). */
  batchSize?: number;
}

export interface LogImportOptions extends CallOptions {
  /** `combined`, `json` or `auto` (decided per line; the default). */
  format?: 'auto' | 'combined' | 'json';
  /** JSON lines: `NAME=FIELD` entries that say where a value is (e.g. `path=req.uri`). */
  map?: string[];
}

type QueryValue = string | number | string[] | undefined;

interface RequestOptions {
  query?: Record<string, QueryValue>;
  /** A JSON body. */
  body?: unknown;
  /** A body sent as is (instead of `body`). */
  bytes?: string | Uint8Array<ArrayBuffer>;
  /** Media type of the body (default application/json). */
  contentType?: string;
  idempotencyKey?: string;
  signal?: AbortSignal;
}

const RETRYABLE_STATUS = new Set([408, 429, 500, 502, 503, 504]);
/** Events after which the job may have left `active`. */
const SETTLING_EVENTS = new Set(['turn.completed', 'error', 'job.archived', 'run.stopped']);
const MAX_INGEST_BATCH = 1_000;

export class FolioClient {
  readonly baseUrl: string;
  readonly projectId: string | undefined;
  private readonly apiKey: string;
  private readonly fetchImpl: typeof fetch;
  private readonly retries: number;
  private readonly userAgent: string | undefined;
  private readonly timeoutMs: number;
  private readonly retryBaseMs: number;
  private readonly retryMaxMs: number;
  private readonly maxRetryAfterMs: number;
  private readonly onResponse: ((info: ResponseInfo) => void) | undefined;

  constructor(options: FolioClientOptions) {
    if (!options || typeof options.baseUrl !== 'string' || options.baseUrl === '') throw new TypeError('FolioClient: baseUrl is required.');
    if (typeof options.apiKey !== 'string' || options.apiKey === '') throw new TypeError('FolioClient: apiKey is required.');
    let base: URL;
    try {
      base = new URL(options.baseUrl);
    } catch {
      throw new TypeError(`FolioClient: baseUrl "${options.baseUrl}" is not an absolute URL.`);
    }
    this.baseUrl = base.href.endsWith('/') ? base.href : base.href + '/';
    this.apiKey = options.apiKey;
    this.projectId = options.projectId;
    const given = options.fetch;
    if (typeof (given ?? globalThis.fetch) !== 'function') throw new TypeError('FolioClient: no fetch on this platform; pass options.fetch.');
    // Called as a plain function: a browser's window.fetch throws "Illegal invocation" with another `this`.
    this.fetchImpl = given ? (input, init) => given(input, init) : (input, init) => globalThis.fetch(input, init);
    this.retries = Math.max(0, Math.floor(options.retries ?? 3));
    const inBrowser = typeof (globalThis as { document?: unknown }).document !== 'undefined';
    this.userAgent = options.userAgent ?? (inBrowser ? undefined : `folio-client/${CLIENT_VERSION}`);
    this.timeoutMs = options.timeoutMs ?? 30_000;
    this.retryBaseMs = options.retryBaseMs ?? 500;
    this.retryMaxMs = options.retryMaxMs ?? 10_000;
    this.maxRetryAfterMs = options.maxRetryAfterMs ?? 60_000;
    this.onResponse = options.onResponse;
  }

  // ---- Agent jobs -------------------------------------------------------------------------

  /** POST /v2/agent/{projectId}/job → the new job (status `active`). */
  async createJob(input: string | CreateJobInput, opts: WriteOptions = {}): Promise<Job> {
    const body = typeof input === 'string' ? { prompt: input } : definedOnly({ prompt: input.prompt, model: input.model, maxCostUsd: input.maxCostUsd, maxTokens: input.maxTokens });
    return this.request<Job>('POST', `v2/agent/${seg(this.project(opts))}/job`, { body, idempotencyKey: this.idemKey(opts), signal: opts.signal });
  }

  /** GET /v2/agent/{projectId}/job/{id}. */
  async getJob(id: string, opts: CallOptions = {}): Promise<Job> {
    return this.request<Job>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}`, { signal: opts.signal });
  }

  /** GET /v2/agent/{projectId}/job/{id}/changes: the branch's diff against its base, its files and the last docs checks (Folio). */
  async getJobChanges(id: string, opts: CallOptions = {}): Promise<JobChanges> {
    return this.request<JobChanges>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/changes`, { signal: opts.signal });
  }

  /**
   * GET /v2/agent/{projectId}/job/{id}/impact: the pages a merged job touched, with exact counts for
   * equal windows of `days` whole UTC days (1–90, default 14) before and after the day of the merge
   * (Folio). 409 `impact_not_ready` while its pull request is not merged, or until the first whole day
   * after the merge's day is over.
   */
  async getJobImpact(id: string, query: { days?: number } = {}, opts: CallOptions = {}): Promise<JobImpact> {
    return this.request<JobImpact>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/impact`, { query: { days: query.days }, signal: opts.signal });
  }

  /** GET /v2/agent/{projectId}/usage: the project's tokens and estimated cost per day and per job, and this month against its budgets (Folio). */
  async usage(query: { days?: number } = {}, opts: CallOptions = {}): Promise<UsageReport> {
    return this.request<UsageReport>('GET', `v2/agent/${seg(this.project(opts))}/usage`, { query: { days: query.days }, signal: opts.signal });
  }

  /** POST /v2/agent/{projectId}/job/{id}/message: queues a follow-up; the job becomes active again. */
  async sendMessage(id: string, prompt: string, opts: WriteOptions = {}): Promise<Job> {
    return this.request<Job>('POST', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/message`, {
      body: { prompt },
      idempotencyKey: this.idemKey(opts),
      signal: opts.signal,
    });
  }

  /** GET /v2/agent/{projectId}/job/{id}/messages: the prompt and every follow-up, in order. */
  async jobMessages(id: string, opts: CallOptions = {}): Promise<JobMessage[]> {
    const res = await this.request<{ messages: JobMessage[] }>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/messages`, { signal: opts.signal });
    return res.messages;
  }

  /** POST /v2/agent/{projectId}/job/{id}/archive: archives the job (final), stopping a running one. */
  async archiveJob(id: string, opts: WriteOptions = {}): Promise<Job> {
    // Archiving is idempotent on the server, so the key only marks the call as safe to retry.
    return this.request<Job>('POST', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/archive`, {
      idempotencyKey: this.idemKey(opts),
      signal: opts.signal,
    });
  }

  /** GET /v2/agent/{projectId}/job/{id}/webhooks: the job's webhook deliveries, oldest first. */
  async webhookDeliveries(id: string, opts: CallOptions = {}): Promise<WebhookDelivery[]> {
    const page = await this.request<{ deliveries: WebhookDelivery[] }>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/webhooks`, { signal: opts.signal });
    return page.deliveries;
  }

  /** POST …/job/{id}/webhooks/{deliveryId}/redeliver: sends a delivery again (same id and body). */
  async redeliverWebhook(id: string, deliveryId: string, opts: WriteOptions = {}): Promise<WebhookDelivery> {
    return this.request<WebhookDelivery>('POST', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/webhooks/${seg(deliveryId)}/redeliver`, {
      idempotencyKey: this.idemKey(opts),
      signal: opts.signal,
    });
  }

  /** GET /v2/agent/{projectId}/jobs: one page, newest first. */
  async listJobsPage(query: ListJobsQuery = {}, opts: CallOptions = {}): Promise<JobPage> {
    return this.request<JobPage>('GET', `v2/agent/${seg(this.project(opts))}/jobs`, {
      query: { status: query.status, limit: query.limit, cursor: query.cursor },
      signal: opts.signal,
    });
  }

  /** Every job, newest first, fetching pages as the loop asks for them. */
  listJobs(query: ListJobsQuery = {}, opts: CallOptions = {}): JobIterable {
    const pages = async function* (this: FolioClient): AsyncGenerator<JobPage, void, undefined> {
      let cursor = query.cursor;
      for (;;) {
        const page = await this.listJobsPage({ ...query, cursor }, opts);
        yield page;
        if (!page.hasMore || !page.nextCursor || page.nextCursor === cursor) return;
        cursor = page.nextCursor;
      }
    }.bind(this);
    return {
      pages,
      async *[Symbol.asyncIterator]() {
        for await (const page of pages()) yield* page.jobs;
      },
    };
  }

  /** GET /v2/agent/{projectId}/job/{id}/events: one page of events after `after`. */
  async jobEventsPage(id: string, query: { after?: number; limit?: number } = {}, opts: CallOptions = {}): Promise<JobEventPage> {
    return this.request<JobEventPage>('GET', `v2/agent/${seg(this.project(opts))}/job/${seg(id)}/events`, {
      query: { after: query.after, limit: query.limit },
      signal: opts.signal,
    });
  }

  /**
   * The job's events in order. Without `follow`: every event recorded so far. With `follow`: then
   * live over Server-Sent Events, reconnecting with `Last-Event-ID` after a dropped connection so no
   * event is lost or repeated; ends when the job leaves `active` (unless `untilDone: false`).
   */
  async *jobEvents(id: string, opts: JobEventsOptions = {}): AsyncGenerator<JobEvent, void, undefined> {
    const s: EventFollow = {
      id,
      projectId: this.project(opts),
      opts,
      last: opts.after ?? 0,
      untilDone: opts.untilDone ?? true,
      statusEvery: opts.statusIntervalMs ?? 2_000,
      maxReconnects: opts.maxReconnects ?? 10,
      reconnectMs: 1_000,
      failures: 0,
    };
    if (!opts.follow) {
      yield* this.drainJobEvents(s);
      return;
    }
    for (;;) {
      if (await this.followDone(s)) {
        yield* this.drainJobEvents(s);
        return;
      }
      const stream = await this.openJobEventStream(s);
      if (!stream) continue;
      const { finished, gotData } = yield* this.readJobEventStream(s, stream.body, stream.conn);
      if (finished) {
        yield* this.drainJobEvents(s);
        return;
      }
      // A connection that delivered anything counts as working; only silent failures add up.
      s.failures = gotData ? 0 : s.failures + 1;
      if (s.failures > s.maxReconnects) {
        throw new FolioError(0, 'network_error', `The event stream of job ${id} keeps closing; gave up after ${s.maxReconnects} reconnects.`);
      }
      await sleep(s.failures === 0 ? s.reconnectMs : backoffDelay(s.failures - 1, s.reconnectMs, 30_000), opts.signal);
    }
  }

  /** Every event after `s.last` recorded so far, page by page. */
  private async *drainJobEvents(s: EventFollow): AsyncGenerator<JobEvent, void, undefined> {
    for (;;) {
      const page = await this.jobEventsPage(s.id, { after: s.last, limit: 500 }, { ...s.opts, projectId: s.projectId });
      for (const event of page.events) {
        if (event.id <= s.last) continue;
        s.last = event.id;
        yield event;
      }
      if (!page.hasMore || page.events.length === 0) return;
    }
  }

  /** With `untilDone`: whether the job has left `active`. */
  private async followDone(s: EventFollow): Promise<boolean> {
    return s.untilDone && (await this.getJob(s.id, { ...s.opts, projectId: s.projectId })).status !== 'active';
  }

  /**
   * Connects to the job's event stream after `s.last`. Null after a failed attempt that may be
   * retried (having waited its backoff or the server's Retry-After); throws when it may not.
   */
  private async openJobEventStream(s: EventFollow): Promise<{ body: ReadableStream<Uint8Array>; conn: LinkedSignal } | null> {
    const { opts } = s;
    const url = this.url(`v2/agent/${seg(s.projectId)}/job/${seg(s.id)}/events`, { after: s.last });
    const conn = linkedSignal(opts.signal, this.timeoutMs);
    try {
      const res = await this.fetchImpl(url, {
        method: 'GET',
        headers: this.headers({ accept: 'text/event-stream', 'last-event-id': String(s.last) }),
        signal: conn.signal,
      });
      conn.clearTimer();
      this.onResponse?.({ method: 'GET', url, status: res.status, headers: res.headers, attempt: s.failures });
      if (!res.ok) {
        const error = errorFromResponse(res, await res.text().catch(() => ''));
        if (!RETRYABLE_STATUS.has(res.status)) throw error;
        throw new RetryableStreamError(error, error.retryAfter);
      }
      const type = res.headers.get('content-type') ?? '';
      if (!type.includes('text/event-stream') || !res.body) {
        throw new FolioError(res.status, 'invalid_response', `Expected an event stream from ${url}, got "${type || 'no content type'}".`);
      }
      return { body: res.body, conn };
    } catch (err) {
      conn.dispose();
      if (opts.signal?.aborted) throw opts.signal.reason;
      if (err instanceof FolioError) throw err;
      s.failures++;
      const cause = err instanceof RetryableStreamError ? err.error : networkError(err, url, conn.timedOut, this.timeoutMs);
      if (s.failures > s.maxReconnects) throw cause;
      const asked = err instanceof RetryableStreamError && err.retryAfter !== undefined ? err.retryAfter * 1000 : undefined;
      if (asked !== undefined && asked > this.maxRetryAfterMs) throw cause;
      const wait = asked ?? backoffDelay(s.failures - 1, s.reconnectMs, 30_000);
      await sleep(wait, opts.signal);
      return null;
    }
  }

  /**
   * Yields the events of one connection until it ends, breaks or goes quiet for too long.
   * `finished`: the job is done and the rest comes from the event pages; `gotData`: anything arrived.
   */
  private async *readJobEventStream(
    s: EventFollow,
    body: ReadableStream<Uint8Array>,
    conn: LinkedSignal,
  ): AsyncGenerator<JobEvent, { finished: boolean; gotData: boolean }, undefined> {
    let lastActivity = Date.now();
    let gotData = false;
    const watchdog = idleWatchdog(conn, s.opts.idleTimeoutMs ?? 60_000, () => lastActivity);
    const messages = parseSse(
      body,
      (ms) => {
        s.reconnectMs = Math.min(Math.max(ms, 100), 30_000);
      },
      () => {
        lastActivity = Date.now();
        gotData = true;
      },
    );
    let pending = messages.next();
    let finished = false;
    try {
      for (;;) {
        const step = s.untilDone ? await nextOrTick(pending, s.statusEvery) : await pending;
        if (step === TICK) {
          if (await this.followDone(s)) {
            finished = true;
            break;
          }
          continue;
        }
        if (step.done) break;
        pending = messages.next();
        const msg = step.value;
        const event = parseEvent(msg.data, s.id);
        const eventId = msg.id !== undefined && /^\d+$/.test(msg.id) ? Number(msg.id) : event.id;
        if (typeof eventId !== 'number' || eventId <= s.last) continue;
        s.last = eventId;
        s.failures = 0;
        yield event;
        if (s.untilDone && SETTLING_EVENTS.has(event.type) && (await this.followDone(s))) {
          finished = true;
          break;
        }
      }
    } catch (err) {
      if (s.opts.signal?.aborted) throw s.opts.signal.reason;
      if (err instanceof FolioError) throw err;
      // The connection broke mid-stream: fall through and reconnect from `last`.
    } finally {
      clearInterval(watchdog);
      conn.abort(new DOMException('Event stream closed.', 'AbortError'));
      pending.catch(() => {});
      conn.dispose();
    }
    return { finished, gotData };
  }

  /**
   * Polls the job until it is completed, archived or failed and returns it. Throws a FolioError with
   * code `timeout` after `timeoutMs`, or the signal's reason when aborted.
   */
  async waitForJob(id: string, opts: WaitForJobOptions = {}): Promise<Job> {
    const first = opts.intervalMs ?? 1_000;
    const max = Math.max(first, opts.maxIntervalMs ?? 10_000);
    const deadline = linkedSignal(opts.signal, opts.timeoutMs);
    let interval = first;
    let seen: string | undefined;
    let latest: Job | undefined;
    try {
      for (;;) {
        const job = await this.getJob(id, { projectId: opts.projectId, signal: deadline.signal });
        latest = job;
        const fingerprint = `${job.status}|${job.prLink}|${job.updatedAt}|${job.archivedAt}`;
        if (fingerprint !== seen) {
          seen = fingerprint;
          interval = first;
          opts.onUpdate?.(job);
        }
        if (TERMINAL_STATUSES.includes(job.status)) return job;
        await sleep(interval * (0.8 + Math.random() * 0.4), deadline.signal);
        interval = Math.min(max, interval * 1.5);
      }
    } catch (err) {
      if (deadline.timedOut && !opts.signal?.aborted) {
        const state = latest ? `is still ${latest.status}` : 'did not answer';
        throw new FolioError(0, 'timeout', `Job ${id} ${state} after ${Math.round(opts.timeoutMs! / 1000)} s of waiting.`, { cause: err });
      }
      throw err;
    } finally {
      deadline.dispose();
    }
  }

  // ---- Analytics -------------------------------------------------------------------------

  // One line per report (src/analytics/reports/): GET /v1/analytics/{projectId}/<name>, and its pages.

  /** GET /v1/analytics/{projectId}/visitors: one page of unique visitors per path, with site-wide totals. */
  readonly visitors = this.report<VisitorsPage>('visitors');
  /** Every page of visitors from `offset` on (page size `limit`, default 250), one page per iteration. */
  readonly allVisitors = this.everyPage(this.visitors, (p) => p.visitors.length);
  /** GET /v1/analytics/{projectId}/views: one page of view counts per path, with site-wide totals. */
  readonly views = this.report<ViewsPage>('views');
  /** Every page of views from `offset` on, one page per iteration. */
  readonly allViews = this.everyPage(this.views, (p) => p.views.length);
  /** GET /v1/analytics/{projectId}/not-found: one page of paths that answered 404 or 410, with exact visitors. */
  readonly notFound = this.report<NotFoundPage>('not-found');
  /** Every page of not-found paths from `offset` on, one page per iteration. */
  readonly allNotFound = this.everyPage(this.notFound, (p) => p.paths.length);
  /** GET /v1/analytics/{projectId}/referrers: one page of referring hosts, with the classes and the AI-answer share per day. */
  readonly referrers = this.report<ReferrersPage>('referrers');
  /** GET /v1/analytics/{projectId}/ai-companies: one page of what each AI company crawls and sends back (per path with `company`). */
  readonly aiCompanies = this.report<AiCompaniesPage>('ai-companies');
  /** Every page of AI companies (or one company's paths) from `offset` on, one page per iteration. */
  readonly allAiCompanies = this.everyPage(this.aiCompanies, (p) => p.companies.length);

  /** GET /v2/agent/{projectId}/suggestions: what the project's traffic proposes to the agent, and the jobs started from it. */
  async suggestions(query: SuggestionsQuery = {}, opts: CallOptions = {}): Promise<SuggestionList> {
    return this.request<SuggestionList>('GET', `v2/agent/${seg(this.project(opts))}/suggestions`, { query: suggestionsQuery(query), signal: opts.signal });
  }

  /**
   * POST /v2/agent/{projectId}/suggestions/{id}/job: starts the agent job of a current suggestion
   * (listed with the same range and threshold as `query`). A retry after a lost answer gets 404
   * `suggestion_not_found` once the first call started it: its paths are then being fixed.
   */
  async startSuggestion(id: string, query: SuggestionsQuery = {}, opts: CallOptions = {}): Promise<SuggestionJob> {
    return this.request<SuggestionJob>('POST', `v2/agent/${seg(this.project(opts))}/suggestions/${seg(id)}/job`, { query: suggestionsQuery(query), signal: opts.signal });
  }

  /**
   * POST /v1/analytics/{projectId}/events. More than `batchSize` (1,000) events are sent in several
   * requests; the result adds them up, with `rejected[].index` counted over the whole input.
   */
  async ingestEvents(events: AnalyticsEvent[], opts: IngestOptions = {}): Promise<IngestResult> {
    const size = Math.min(MAX_INGEST_BATCH, Math.max(1, Math.floor(opts.batchSize ?? MAX_INGEST_BATCH)));
    const baseKey = this.idemKey(opts);
    const project = this.project(opts);
    const result: IngestResult = { accepted: 0, rejected: [] };
    const batches = Math.max(1, Math.ceil(events.length / size));
    for (let b = 0; b < batches; b++) {
      const slice = events.slice(b * size, (b + 1) * size).map((e) => ({
        ...e,
        ...(e.timestamp instanceof Date ? { timestamp: e.timestamp.toISOString() } : {}),
      }));
      const key = baseKey === undefined ? undefined : batches === 1 ? baseKey : `${baseKey}.${b}`;
      const res = await this.request<IngestResult>('POST', `v1/analytics/${seg(project)}/events`, { body: { events: slice }, idempotencyKey: key, signal: opts.signal });
      result.accepted += res.accepted;
      for (const r of res.rejected ?? []) result.rejected.push({ ...r, index: r.index + b * size });
    }
    return result;
  }

  /**
   * POST /v1/analytics/{projectId}/import with raw access-log lines (combined format or JSON lines,
   * as the web server wrote them); the server reads them as `folio analytics import` does without a
   * server. Retried like an idempotent call: a line imported before is never stored twice.
   */
  async importLog(lines: string | Uint8Array<ArrayBuffer>, opts: LogImportOptions = {}): Promise<ImportResult> {
    return this.request<ImportResult>('POST', `v1/analytics/${seg(this.project(opts))}/import`, {
      query: { format: opts.format, map: opts.map },
      bytes: lines,
      contentType: 'text/plain; charset=utf-8',
      idempotencyKey: randomId(),
      signal: opts.signal,
    });
  }

  // ---- Plumbing --------------------------------------------------------------------------

  /** A report's call: one page of `GET /v1/analytics/{projectId}/<name>` (the query's dates as the API reads them). */
  private report<P>(name: string): (query?: AnalyticsQuery, opts?: CallOptions) => Promise<P> {
    return (query = {}, opts = {}) => this.request<P>('GET', `v1/analytics/${seg(this.project(opts))}/${name}`, { query: analyticsQuery(query), signal: opts.signal });
  }

  /** Every page of a report from `offset` on (page size `limit`, default 250), one page per iteration. */
  private everyPage<P extends { hasMore: boolean }>(
    fetchPage: (query: AnalyticsQuery, opts: CallOptions) => Promise<P>,
    rows: (p: P) => number,
  ): (query?: AnalyticsQuery, opts?: CallOptions) => AsyncGenerator<P, void, undefined> {
    return async function* (query: AnalyticsQuery = {}, opts: CallOptions = {}) {
      const limit = query.limit ?? 250;
      let offset = query.offset ?? 0;
      for (;;) {
        const page = await fetchPage({ ...query, limit, offset }, opts);
        yield page;
        if (!page.hasMore || rows(page) === 0) return;
        offset += limit;
      }
    };
  }

  private project(opts: CallOptions): string {
    const id = opts.projectId ?? this.projectId;
    if (!id) throw new FolioError(0, 'missing_project', 'No project: pass projectId to the FolioClient or to the call.');
    return id;
  }

  private idemKey(opts: WriteOptions): string | undefined {
    if (opts.idempotencyKey === false) return undefined;
    return opts.idempotencyKey ?? randomId();
  }

  private url(path: string, query?: Record<string, QueryValue>): string {
    const u = new URL(path, this.baseUrl);
    for (const [k, v] of Object.entries(query ?? {})) {
      if (Array.isArray(v)) for (const item of v) u.searchParams.append(k, item);
      else if (v !== undefined) u.searchParams.set(k, String(v));
    }
    return u.href;
  }

  private headers(extra: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { authorization: `Bearer ${this.apiKey}`, ...extra };
    if (this.userAgent) h['user-agent'] = this.userAgent;
    return h;
  }

  /** One logical call: retried after 429/5xx/network errors only when safe (GET, or POST with an Idempotency-Key). */
  private async request<T>(method: 'GET' | 'POST', path: string, o: RequestOptions): Promise<T> {
    const url = this.url(path, o.query);
    const extra: Record<string, string> = { accept: 'application/json' };
    let body: string | Uint8Array<ArrayBuffer> | undefined = o.bytes;
    if (o.body !== undefined) body = JSON.stringify(o.body);
    if (body !== undefined) extra['content-type'] = o.contentType ?? 'application/json';
    if (o.idempotencyKey !== undefined) extra['idempotency-key'] = o.idempotencyKey;
    const headers = this.headers(extra);
    const safe = method === 'GET' || o.idempotencyKey !== undefined;
    // Failures worth another attempt: the network's, and the statuses of RETRYABLE_STATUS.
    const transient = new WeakSet<FolioError>();
    const attempt = async (attemptNumber: number): Promise<T> => {
      const conn = linkedSignal(o.signal, this.timeoutMs);
      let res: Response;
      let text: string;
      try {
        res = await this.fetchImpl(url, { method, headers, body, signal: conn.signal });
        this.onResponse?.({ method, url, status: res.status, headers: res.headers, attempt: attemptNumber - 1 });
        text = await res.text();
      } catch (err) {
        if (o.signal?.aborted || err instanceof FolioError) throw err;
        const error = networkError(err, url, conn.timedOut, this.timeoutMs);
        transient.add(error);
        throw error;
      } finally {
        conn.dispose();
      }
      if (!res.ok) {
        const error = errorFromResponse(res, text);
        if (RETRYABLE_STATUS.has(res.status)) transient.add(error);
        throw error;
      }
      if (text === '') return undefined as T;
      try {
        return JSON.parse(text) as T;
      } catch (err) {
        throw new FolioError(res.status, 'invalid_response', `${method} ${url} answered ${res.status} with a body that is not JSON.`, {
          cause: err,
          requestId: res.headers.get('x-request-id') ?? undefined,
        });
      }
    };
    return pRetry(attempt, {
      retries: safe ? this.retries : 0,
      // The wait is decided below: the server's Retry-After when it sent one, else backoff.
      minTimeout: 0,
      signal: o.signal,
      shouldRetry: async ({ error, attemptNumber }) => {
        if (!(error instanceof FolioError) || !transient.has(error)) return false;
        let wait = backoffDelay(attemptNumber - 1, this.retryBaseMs, this.retryMaxMs);
        if (error.retryAfter !== undefined) {
          const asked = error.retryAfter * 1000;
          if (asked > this.maxRetryAfterMs) return false;
          // What the server asked for, plus a little jitter so many clients do not return together.
          wait = asked + Math.random() * Math.min(1_000, this.retryBaseMs);
        }
        await sleep(wait, o.signal);
        return true;
      },
    });
  }
}

const TICK = Symbol('tick');

/** A followed job event stream: the job, the last event yielded, and how reconnecting goes. */
interface EventFollow {
  id: string;
  projectId: string;
  opts: JobEventsOptions;
  /** The id of the last event yielded (or `after`). */
  last: number;
  untilDone: boolean;
  statusEvery: number;
  maxReconnects: number;
  /** The server's `retry:` delay (1 s until it sends one). */
  reconnectMs: number;
  /** Failed or silent connections in a row. */
  failures: number;
}

type SseStep = IteratorResult<{ id: string | undefined; event: string; data: string }, void>;

/** The next message of the stream, or TICK when none came within `ms` (time to check the job's status). */
async function nextOrTick(pending: Promise<SseStep>, ms: number): Promise<SseStep | typeof TICK> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const tick = new Promise<typeof TICK>((resolve) => (timer = setTimeout(() => resolve(TICK), ms)));
  try {
    return await Promise.race([pending, tick]);
  } finally {
    clearTimeout(timer);
  }
}

/** Aborts the connection when nothing, not even a keepalive, arrived for `idleMs` (0: never). */
function idleWatchdog(conn: LinkedSignal, idleMs: number, lastActivity: () => number): ReturnType<typeof setInterval> | undefined {
  if (!(idleMs > 0)) return undefined;
  return setInterval(() => {
    if (Date.now() - lastActivity() > idleMs) conn.abort(new DOMException('The event stream went quiet.', 'TimeoutError'));
  }, Math.max(50, Math.min(idleMs / 4, 5_000)));
}

function parseEvent(data: string, jobId: string): JobEvent {
  try {
    return JSON.parse(data) as JobEvent;
  } catch (err) {
    throw new FolioError(200, 'invalid_response', `An event of job ${jobId} is not JSON.`, { cause: err });
  }
}

class RetryableStreamError extends Error {
  readonly error: FolioError;
  readonly retryAfter: number | undefined;
  constructor(error: FolioError, retryAfter: number | undefined) {
    super(error.message);
    this.error = error;
    this.retryAfter = retryAfter;
  }
}

/** A request body without its undefined fields (the server refuses none, but sends stay minimal). */
function definedOnly<T extends Record<string, unknown>>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

function seg(s: string): string {
  return encodeURIComponent(s);
}

/** A date parameter as sent: a Date as ISO 8601, a string as given. */
const dateParam = (d: string | Date | undefined) => (d instanceof Date ? d.toISOString() : d);

function analyticsQuery(q: AnalyticsQuery): Record<string, QueryValue> {
  return { dateFrom: dateParam(q.dateFrom), dateTo: dateParam(q.dateTo), limit: q.limit, offset: q.offset, company: q.company };
}

function suggestionsQuery(q: SuggestionsQuery): Record<string, QueryValue> {
  return { dateFrom: dateParam(q.dateFrom), dateTo: dateParam(q.dateTo), minVisitors: q.minVisitors };
}

function networkError(err: unknown, url: string, timedOut: boolean, timeoutMs: number): FolioError {
  const origin = new URL(url).origin;
  if (timedOut) return new FolioError(0, 'timeout', `No complete answer from ${origin} within ${timeoutMs} ms.`, { cause: err });
  const cause = (err as { cause?: { code?: string; message?: string } })?.cause;
  const why = cause?.code ?? cause?.message ?? (err instanceof Error ? err.message : String(err));
  if (isAbortError(err)) return new FolioError(0, 'network_error', `The request to ${origin} was aborted.`, { cause: err });
  return new FolioError(0, 'network_error', `Could not reach ${origin} (${why}).`, { cause: err });
}

function errorFromResponse(res: Response, text: string): FolioError {
  const retryAfter = parseRetryAfter(res.headers.get('retry-after'));
  const requestId = res.headers.get('x-request-id') ?? undefined;
  let message = `${res.status} ${res.statusText || 'error'}`.trim();
  let code = codeForStatus(res.status);
  let details: FolioErrorDetail[] | undefined;
  try {
    const parsed = JSON.parse(text) as { error?: unknown; message?: unknown; code?: unknown; details?: unknown };
    if (typeof parsed.error === 'string' && parsed.error) message = parsed.error;
    else if (typeof parsed.message === 'string' && parsed.message) message = parsed.message;
    if (typeof parsed.code === 'string' && parsed.code) code = parsed.code;
    if (Array.isArray(parsed.details)) {
      details = parsed.details
        .filter((d): d is { message: string; path?: unknown } => typeof d === 'object' && d !== null && typeof (d as { message?: unknown }).message === 'string')
        .map((d) => (typeof d.path === 'string' ? { message: d.message, path: d.path } : { message: d.message }));
    }
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): the status says enough.
  }
  return new FolioError(res.status, code, message, { details, retryAfter, requestId });
}
