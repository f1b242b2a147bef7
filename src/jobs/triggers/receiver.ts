// Receives a code host's webhook for a project and decides, exactly once per code change, whether it
// starts an agent job, follows up on the job that tracks its pull request, or does nothing (and why).
// A delivery is deduplicated on its delivery id and on what it means (events.ts, meaningKeyOf: the
// pushed range, the merged pull request and its merge commit, a pull request at its head), so a
// signed body replayed with a new delivery id does nothing again.
// Only verified deliveries are recorded: anyone can send the others, so they are only counted (per
// process by host and code for /metrics, and per project in the store for the dashboard), and a
// body is read only once the project, its secret and the signature header have checked out
// (admit(), run before the body).
import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { CodedError, rateLimitHeaders, type ApiErrorCode } from '../../errors.ts';
import type { JobTrigger } from '../../contracts/jobs.ts';
import { codeHostAccess, CodeHostError, readChange, triggerAdapter, type ChangedFile, type ChangeRef } from '../../codehost/index.ts';
import { headerOf as header, MalformedPayload, type ChangeEvent, type ParsedDelivery } from '../../codehost/triggers.ts';
import type { Kysely, Transaction } from 'kysely';
import type { Database, TriggerHost } from '../../store/schema.ts';
import { SecretBoxError } from '../../store/secret-box.ts';
import type { DeliveryRecord, TriggerStore, WatchedRepository } from '../../store/triggers.ts';
import type { JobsService } from '../service.ts';
import { meaningKeyOf, meaningText } from './events.ts';
import { pathsMatch, summarizeChange } from './summary.ts';
import { DEFAULT_TEMPLATE, fillTemplate } from './template.ts';
import type { ReviewComments } from './reviews.ts';

export interface IncomingDelivery {
  projectId: string;
  host: TriggerHost;
  headers: Record<string, string | string[] | undefined>;
  contentType: string | undefined;
  body: Buffer;
}

export interface DeliveryAnswer {
  statusCode: number;
  body: { outcome: DeliveryRecord['outcome']; reason: string; deliveryId: string | null; jobId?: string; code?: string; error?: string };
  headers?: Record<string, string>;
}

export interface TriggerReceiverDeps {
  store: TriggerStore;
  jobs: JobsService;
  config: Config;
  log: Logger;
  /** Review comments on Folio's pull requests (reviews.ts); without it they are ignored. */
  reviews?: ReviewComments;
}

const DELIVERY_ID = /^[\x21-\x7e]{1,200}$/;
/** Refusals are written to the store at most this often per process (see #countStored). */
const REFUSALS_SAVED_EVERY_MS = 1000;

/** The delivery id the host sent in a header, if usable. */
function sentDeliveryId(host: TriggerHost, headers: IncomingDelivery['headers']): string | undefined {
  for (const n of triggerAdapter(host).deliveryIdHeaders) {
    const v = header(headers, n);
    if (v !== undefined && DELIVERY_ID.test(v)) return v;
  }
  return undefined;
}

function deliveryIdOf(d: IncomingDelivery): string {
  // No usable id: a byte-identical redelivery is the same delivery.
  return sentDeliveryId(d.host, d.headers) ?? `sha256:${createHash('sha256').update(d.body).digest('hex')}`;
}

/** A delivery refused before it was verified: answered and counted, never recorded. */
export interface Refusal {
  code: ApiErrorCode;
  reason: string;
}

/**
 * The status of each error code: the API's one table (http/error-status.ts, HTTP_STATUS), which the
 * route hands to each call, so the receiver never picks an error status itself.
 */
export type ErrorStatuses = { readonly [C in ApiErrorCode]: number };

/** What a sender gets for a delivery that was not refused: 201 a job started, 202 nothing to do, 200 the rest. */
const DONE = { started: 201, followed_up: 200, duplicate: 200, ignored: 202, ping: 200 } as const;

/** The keys a delivery is deduplicated on, per project: `host:delivery id`, and what it means (null when its payload cannot say). */
interface DedupeKeys {
  deliveryKey: string;
  meaningKey: string | null;
}

/** What the project did with the same delivery or change before: its job, and the reason a duplicate is answered with. */
interface HandledBefore {
  jobId: string | null;
  reason: string;
}

type Answered = Pick<DeliveryRecord, 'outcome' | 'statusCode' | 'reason' | 'jobId'>;

/** An error answer's code, and the headers it carries (a rate limit's). */
type Failure = { code: ApiErrorCode; headers?: Record<string, string> };

/** The answer's body: what was done and why; refusals carry the API's error body too, so every 4xx/5xx reads like the rest of the API. */
function answerOf(r: Answered, deliveryId: string | null, failure?: Failure): DeliveryAnswer {
  const body: DeliveryAnswer['body'] = { outcome: r.outcome, reason: r.reason, deliveryId, ...(r.jobId ? { jobId: r.jobId } : {}) };
  if (failure) Object.assign(body, { error: r.reason, code: failure.code });
  return { statusCode: r.statusCode, body, headers: failure?.headers };
}

/** The JSON payload of a delivery: a JSON body, or a form with the JSON in its `payload` field (GitHub can send that). */
function payloadOf(d: IncomingDelivery): unknown {
  const type = (d.contentType ?? '').split(';')[0].trim().toLowerCase();
  let text: string;
  if (type === 'application/json' || type === '') text = d.body.toString('utf8');
  else if (type === 'application/x-www-form-urlencoded') {
    const payload = new URLSearchParams(d.body.toString('utf8')).get('payload');
    if (payload === null) throw new MalformedPayload('The form body has no "payload" field.');
    text = payload;
  } else throw new MalformedPayload(`The body is ${type.slice(0, 100)}; send application/json (or GitHub's form encoding).`);
  try {
    return JSON.parse(text);
  } catch {
    throw new MalformedPayload('The body is not valid JSON.');
  }
}

/** The delivery's event header (its first 100 characters), or null. */
function eventOf(d: IncomingDelivery): string | null {
  return header(d.headers, triggerAdapter(d.host).eventHeader.name)?.slice(0, 100) ?? null;
}

function changeKeyOf(e: ChangeEvent): string | null {
  return e.number === null ? null : `${e.host}:${e.fullPath}#${e.number}`;
}

/** What happened, for the prompt's {{event}}. */
function eventText(e: ChangeEvent): string {
  const what = triggerAdapter(e.host).changeName(e.number ?? 0);
  switch (e.kind) {
    case 'pull_request_merged':
      return `merged (${what})`;
    case 'pull_request_opened':
      return `opened for review (${what})`;
    case 'pull_request_updated':
      return `updated with new commits (${what})`;
    case 'push':
      return 'pushed to the default branch';
  }
}

/** Which watched-repository event setting lets this change through. */
const NEEDS: Record<ChangeEvent['kind'], 'merged' | 'opened' | 'push'> = {
  pull_request_merged: 'merged',
  pull_request_opened: 'opened',
  pull_request_updated: 'opened',
  push: 'push',
};

type Seen = { repository: string; changeUrl: string };
/** A watched repository with its token for the code host's API. */
type Watched = WatchedRepository & { token: string | null };
/** Records (unless a job was started or followed up) and answers: with `failure`, its code's status; otherwise `statusCode`. */
export type Answer = (r: Omit<DeliveryRecord, 'projectId' | 'host' | 'deliveryId' | 'event' | 'statusCode'> & { statusCode?: number }, failure?: Failure) => Promise<DeliveryAnswer>;

/** What a change starts or follows up, once it is wanted. */
interface JobRun {
  dedupe: DedupeKeys;
  changeKey: string | null;
  prompt: string;
  trigger: JobTrigger;
}

/** Why the watched repository's event settings let this change pass by; null when they let it through. */
function eventNotWatched(watched: WatchedRepository, e: ChangeEvent): string | null {
  if (watched.events.includes(NEEDS[e.kind])) return null;
  if (e.kind === 'pull_request_updated') return 'New commits on a pull request start nothing unless jobs start when pull requests are opened.';
  return `This repository does not start jobs on ${NEEDS[e.kind] === 'push' ? 'pushes to the default branch' : `${NEEDS[e.kind]} pull requests`}.`;
}

/** Why the change's labels start nothing (labels filter pull requests, not pushes); null when they do. */
function labelsMissing(watched: WatchedRepository, e: ChangeEvent): string | null {
  if (watched.labels.length === 0 || e.kind === 'push') return null;
  const wanted = new Set(watched.labels.map((l) => l.toLowerCase()));
  return e.labels.some((l) => wanted.has(l.toLowerCase())) ? null : `The change carries none of the labels ${watched.labels.join(', ')}.`;
}

/** What to read from the code host's API: new commits on a tracked pull request, the pull request, or the pushed range. */
function changeRefOf(e: ChangeEvent, tracked: boolean): ChangeRef | null {
  if (e.kind === 'pull_request_updated' && tracked && e.before && e.after) return { base: e.before, head: e.after };
  if (e.number !== null) return { pull: e.number };
  return e.before && e.after ? { base: e.before, head: e.after } : null;
}

/** The follow-up's job id; undefined when that job was archived or is gone (the change then gets a new job). */
async function followUpUnlessGone(followUp: () => Promise<{ id: string }>): Promise<string | undefined> {
  try {
    return (await followUp()).id;
  } catch (err) {
    if (err instanceof CodedError && (err.code === 'job_archived' || err.code === 'job_not_found')) return undefined;
    throw err;
  }
}

/** A refusal by the jobs service (the project's rate limit, an unconfigured model) as the delivery's answer. */
export function refusedByJobs(err: unknown): { record: Pick<DeliveryRecord, 'outcome' | 'reason'>; failure: Failure } | null {
  if (!(err instanceof CodedError)) return null;
  if (err.code === 'rate_limited') {
    const { retryAfterSeconds, rateLimit } = err.hints;
    const headers = { 'retry-after': String(retryAfterSeconds ?? 60), ...(rateLimit ? rateLimitHeaders(rateLimit) : {}) };
    return { record: { outcome: 'rejected', reason: err.message }, failure: { code: 'rate_limited', headers } };
  }
  if (err.code === 'model_not_configured') return { record: { outcome: 'failed', reason: err.message }, failure: { code: 'model_not_configured' } };
  // The project's monthly budget is spent (jobs/budget.ts): listed as rejected with the budget's sentence.
  if (err.code === 'monthly_budget_exceeded') return { record: { outcome: 'rejected', reason: err.message }, failure: { code: 'monthly_budget_exceeded' } };
  return null;
}

export class TriggerReceiver {
  private readonly deps: TriggerReceiverDeps;
  constructor(deps: TriggerReceiverDeps) {
    this.deps = deps;
  }

  readonly #refusals = new Map<string, number>();
  /** Refusals of existing projects not yet added to the store's count, by project. */
  readonly #unsaved = new Map<string, { count: number; lastAt: number }>();
  #saveTimer: NodeJS.Timeout | null = null;

  /** Deliveries refused before their signature checked out by this process, by host and code (/metrics). */
  refusals(): { host: string; code: string; count: number }[] {
    return [...this.#refusals].map(([k, count]) => {
      const [host, code] = k.split(' ');
      return { host, code, count };
    });
  }

  #refuse(projectId: string, host: TriggerHost, deliveryId: string | null, refusal: Refusal, statuses: ErrorStatuses): DeliveryAnswer {
    const { code, reason } = refusal;
    const statusCode = statuses[code];
    const k = `${host} ${code}`;
    this.#refusals.set(k, (this.#refusals.get(k) ?? 0) + 1);
    // An unknown project has no settings to count on (and its id is the sender's text).
    if (code !== 'project_not_found') this.#countStored(projectId);
    this.deps.log.info({ host, deliveryId, code }, 'code host delivery refused before verification');
    // A 5xx is Folio's side failing (a secret it cannot open), not the sender's delivery.
    return answerOf({ outcome: statusCode >= 500 ? 'failed' : 'rejected', statusCode, reason }, deliveryId, { code });
  }

  /**
   * Counts a refusal in the project's stored settings (shown in the dashboard), batched: written at
   * most once a second per process, so unsigned traffic never takes the store's write lock (or
   * invalidates its read caches) once per request.
   */
  #countStored(projectId: string): void {
    const unsaved = this.#unsaved.get(projectId) ?? { count: 0, lastAt: 0 };
    unsaved.count++;
    unsaved.lastAt = Date.now();
    this.#unsaved.set(projectId, unsaved);
    this.#saveTimer ??= setTimeout(() => void this.saveRefusals(), REFUSALS_SAVED_EVERY_MS).unref();
  }

  /** Adds the refusals counted since the last write to the store (on a timer, at shutdown, in tests). */
  async saveRefusals(): Promise<void> {
    if (this.#saveTimer) clearTimeout(this.#saveTimer);
    this.#saveTimer = null;
    const batch = [...this.#unsaved];
    this.#unsaved.clear();
    for (const [projectId, { count, lastAt }] of batch) {
      try {
        await this.deps.store.countRefusals(projectId, count, lastAt);
      } catch (err) {
        this.deps.log.warn({ projectId, count, err }, 'refused code host deliveries could not be counted in the store');
      }
    }
  }

  /**
   * Runs before the body is read: null when the delivery may be read (its project exists, has a
   * secret, and the signature header checks out — GitLab's token entirely, GitHub's by its shape,
   * since its HMAC covers the body); otherwise the refusal, counted and not recorded.
   */
  async admit(projectId: string, host: TriggerHost, headers: IncomingDelivery['headers'], statuses: ErrorStatuses): Promise<DeliveryAnswer | null> {
    const refusal = await this.#unverified(projectId, host, headers, null);
    return refusal && this.#refuse(projectId, host, sentDeliveryId(host, headers) ?? null, refusal, statuses);
  }

  /** Answers a delivery of an admitted project refused while its body was read (too large, a broken length): counted, not recorded. */
  refused(projectId: string, host: TriggerHost, headers: IncomingDelivery['headers'], refusal: Refusal, statuses: ErrorStatuses): DeliveryAnswer {
    return this.#refuse(projectId, host, sentDeliveryId(host, headers) ?? null, refusal, statuses);
  }

  /** Why a delivery is not (yet) verified, or null when it is; `body` null checks the headers only. */
  async #unverified(projectId: string, host: TriggerHost, headers: IncomingDelivery['headers'], body: Buffer | null): Promise<Refusal | null> {
    const { store } = this.deps;
    if (!(await store.projectExists(projectId))) return { code: 'project_not_found', reason: `Project "${projectId}" does not exist.` };
    let secret: string | null;
    try {
      secret = await store.secret(projectId);
    } catch (err) {
      if (!(err instanceof SecretBoxError)) throw err;
      return { code: 'trigger_secret_unavailable', reason: 'The webhook secret cannot be opened: FOLIO_SECRET changed since it was made; make a new secret.' };
    }
    if (secret === null) return { code: 'triggers_not_configured', reason: 'This project has no webhook secret yet: make one in the project settings first.' };
    const adapter = triggerAdapter(host);
    const ok = body === null ? adapter.signatureHeaderOk(secret, headers) : adapter.verify(secret, body, headers);
    return ok ? null : { code: 'invalid_signature', reason: adapter.signatureRefused };
  }

  async receive(d: IncomingDelivery, statuses: ErrorStatuses): Promise<DeliveryAnswer> {
    const { store, log } = this.deps;
    const deliveryId = deliveryIdOf(d);
    const refusal = await this.#unverified(d.projectId, d.host, d.headers, d.body);
    if (refusal) return this.#refuse(d.projectId, d.host, sentDeliveryId(d.host, d.headers) ?? null, refusal, statuses);
    const adapter = triggerAdapter(d.host);
    const event = eventOf(d);
    const base: Pick<DeliveryRecord, 'projectId' | 'host' | 'deliveryId' | 'event'> = { projectId: d.projectId, host: d.host, deliveryId, event };
    const answer: Answer = async (answered, failure) => {
      const r = { ...answered, statusCode: failure ? statuses[failure.code] : (answered.statusCode ?? DONE[answered.outcome as keyof typeof DONE]) };
      // Verified from here on. Jobs and follow-ups were recorded with what they did; the rest are recorded here.
      if (r.outcome !== 'started' && r.outcome !== 'followed_up') await store.recordDelivery(store.db, { ...base, ...r });
      log.info({ projectId: d.projectId, host: d.host, deliveryId, event, outcome: r.outcome, jobId: r.jobId ?? undefined }, 'code host delivery');
      return answerOf(r, deliveryId, failure);
    };
    if (event === null) {
      return answer({ outcome: 'rejected', reason: `The ${adapter.eventHeader.spelled} header is missing.` }, { code: 'invalid_payload' });
    }

    let parsed: ParsedDelivery;
    try {
      const payload = payloadOf(d);
      parsed = adapter.parse(event, payload);
    } catch (err) {
      if (!(err instanceof MalformedPayload)) throw err;
      return answer({ outcome: 'rejected', reason: `Malformed ${event} payload: ${err.message}` }, { code: 'invalid_payload' });
    }
    if (parsed.type === 'ping') return answer({ outcome: 'ignored', statusCode: DONE.ping, reason: 'Ping received: the webhook is set up.' });
    if (parsed.type === 'ignored') return answer({ outcome: 'ignored', reason: parsed.reason });
    if (parsed.type === 'review') {
      if (!this.deps.reviews) return answer({ outcome: 'ignored', reason: 'Review comments are not handled by this server.' });
      return this.deps.reviews.act(base, parsed.event, answer);
    }
    return this.act(d, parsed.event, deliveryId, answer);
  }

  private async act(d: IncomingDelivery, e: ChangeEvent, deliveryId: string, answer: Answer): Promise<DeliveryAnswer> {
    const { store } = this.deps;
    const watched = await store.watched(d.projectId, e.host, e.fullPath);
    if (!watched) return answer({ outcome: 'ignored', reason: `Repository ${e.fullPath} is not watched by this project.` });
    const seen = { repository: watched.repositoryUrl, changeUrl: triggerAdapter(e.host).changeUrl(watched.repositoryUrl, e) };
    const unwanted = eventNotWatched(watched, e);
    if (unwanted) return answer({ ...seen, outcome: 'ignored', reason: unwanted });

    // Per project (each project's copy of an event counts once): the same delivery again (its id), or
    // the same change under a new delivery id (its meaning), is a duplicate of what was done then.
    // Looked up here to spare the code host's API; decided again in the transaction.
    const dedupe: DedupeKeys = { deliveryKey: `${d.host}:${deliveryId}`, meaningKey: meaningKeyOf(e) };
    const earlier = await this.#handledBefore(store.db, d.projectId, dedupe, e);
    if (earlier) return this.duplicate(seen, earlier, answer);

    const changeKey = changeKeyOf(e);
    const tracking = changeKey ? await store.changeJob(store.db, d.projectId, changeKey) : undefined;
    // Labels decide whether a job starts; a change that already has its job is followed whatever its labels.
    const unlabelled = tracking ? null : labelsMissing(watched, e);
    if (unlabelled) return answer({ ...seen, outcome: 'ignored', reason: unlabelled });

    const changed = await this.#changedFiles(e, watched, tracking !== undefined);
    if ('unreadable' in changed) {
      const reason = `The changed files could not be read, so the path filters cannot be checked: ${changed.unreadable}. Redeliver when the code host answers.`;
      return answer({ ...seen, outcome: 'failed', reason }, { code: 'code_host_error' });
    }
    if (!pathsMatch(changed.files, watched.paths)) {
      return answer({ ...seen, outcome: 'ignored', reason: `No changed file matches the path filters ${watched.paths.join(', ')}.` });
    }

    const run: JobRun = { dedupe, changeKey, prompt: await this.#promptFor(d.projectId, e, seen, changed), trigger: { kind: e.kind === 'pull_request_updated' ? 'pull_request_opened' : e.kind, host: e.host, repository: seen.repository, url: seen.changeUrl } };
    try {
      const result = await this.#startOrFollow(d, e, deliveryId, seen, run);
      if (result.duplicate) return this.duplicate(seen, result.prior, answer);
      return answer({ ...seen, outcome: result.outcome, reason: result.reason, jobId: result.jobId });
    } catch (err) {
      const refused = refusedByJobs(err);
      if (refused) return answer({ ...seen, ...refused.record }, refused.failure);
      throw err;
    }
  }

  /**
   * What changed, from the code host's API (the payload's own file list when that fails, with a note
   * for the prompt; unreadable when path filters need the list). New commits on a tracked pull
   * request: only what they changed; otherwise the whole change.
   */
  async #changedFiles(e: ChangeEvent, watched: Watched, tracked: boolean): Promise<{ files: ChangedFile[]; note?: string } | { unreadable: string }> {
    const { config } = this.deps;
    const files: ChangedFile[] = e.payloadFiles.map((path) => ({ path, previousPath: null, status: 'modified' as const, patch: null }));
    const ref = changeRefOf(e, tracked);
    if (!ref) return { files };
    const access = codeHostAccess(e.host, watched.repositoryUrl, watched.token, { operator: config.codeHosts, outbound: config.outbound });
    try {
      return { files: await readChange(e.host, { ...access, timeoutMs: config.triggers.apiTimeoutMs }, ref) };
    } catch (err) {
      const why = err instanceof CodeHostError ? err.message : (err as Error).name === 'TimeoutError' ? 'the code host did not answer in time' : 'the code host could not be reached';
      if (watched.paths.length > 0) return { unreadable: why };
      return { files, note: `(The changed files could not be read from the code host: ${why}.${files.length ? ' Files named by the webhook:' : ''})` };
    }
  }

  /** The job's prompt: the project's template (or the default) filled with the change. */
  async #promptFor(projectId: string, e: ChangeEvent, seen: Seen, changed: { files: ChangedFile[]; note?: string }): Promise<string> {
    const settings = await this.deps.store.settings(projectId);
    return fillTemplate(settings.template ?? DEFAULT_TEMPLATE, {
      event: eventText(e),
      repository: seen.repository,
      title: e.title,
      url: seen.changeUrl,
      author: e.author,
      description: e.description,
      changes: summarizeChange(changed.files, changed.note),
    });
  }

  /**
   * In one transaction under the project's lock: unless a concurrent copy of this delivery or change
   * committed first, follows up on the job that tracks the change (a new job when it was archived or
   * is gone) or starts one, and records the delivery with what it did.
   */
  async #startOrFollow(d: IncomingDelivery, e: ChangeEvent, deliveryId: string, seen: Seen, run: JobRun) {
    const { store, jobs } = this.deps;
    const { dedupe, changeKey, prompt, trigger } = run;
    return jobs.transact(d.projectId, async (trx, ops) => {
      const prior = await this.#handledBefore(trx, d.projectId, dedupe, e);
      if (prior) return { duplicate: true as const, prior };
      // The claim is atomic by itself (a unique key), whatever lock is held.
      if (dedupe.meaningKey && !(await store.claimMeaning(trx, d.projectId, dedupe.meaningKey))) {
        return { duplicate: true as const, prior: (await this.#handledBefore(trx, d.projectId, dedupe, e)) ?? { jobId: null, reason: 'This change was handled before; nothing was done again.' } };
      }
      const current = changeKey ? await store.changeJob(trx, d.projectId, changeKey) : undefined;
      const followed = current ? await followUpUnlessGone(() => ops.followUp(current, prompt)) : undefined;
      const jobId = followed ?? (await ops.create({ prompt, trigger })).id;
      if (!followed && changeKey) await store.linkChange(trx, d.projectId, changeKey, jobId);
      if (dedupe.meaningKey) await store.settleMeaning(trx, d.projectId, dedupe.meaningKey, jobId);
      const outcome = followed ? ('followed_up' as const) : ('started' as const);
      const reason = followed ? `Sent the new commits of ${seen.changeUrl} to job ${jobId} as a follow-up.` : `Started job ${jobId} for ${seen.changeUrl}.`;
      await store.recordDelivery(trx, { projectId: d.projectId, host: d.host, deliveryId, event: eventOf(d), outcome, statusCode: DONE[outcome], reason, ...seen, jobId, dedupeKey: dedupe.deliveryKey });
      return { duplicate: false as const, jobId, outcome, reason };
    });
  }

  /** What this project did before with the same delivery or the same change, if anything. */
  async #handledBefore(db: Kysely<Database> | Transaction<Database>, projectId: string, keys: DedupeKeys, e: ChangeEvent): Promise<HandledBefore | undefined> {
    const { store } = this.deps;
    const byJob = (jobId: string | null) => (jobId ? ` by job ${jobId}` : '');
    const delivery = await store.acted(db, projectId, [keys.deliveryKey]);
    if (delivery) return { jobId: delivery.jobId, reason: `This delivery was handled before${byJob(delivery.jobId)}; nothing was done again.` };
    const change = keys.meaningKey ? await store.meaningHandled(db, projectId, keys.meaningKey) : undefined;
    if (change) return { jobId: change.jobId, reason: `This change (${meaningText(e)}) was handled before${byJob(change.jobId)}, under another delivery id; nothing was done again.` };
    return undefined;
  }

  private async duplicate(seen: Seen, prior: HandledBefore, answer: Answer): Promise<DeliveryAnswer> {
    // Recorded (by answer()) without a dedupe key: only the first delivery holds it.
    return answer({ ...seen, outcome: 'duplicate', reason: prior.reason, jobId: prior.jobId });
  }
}
