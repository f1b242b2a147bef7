// Jobs through the API: create, follow up, archive, read. Each write is one transaction that also
// takes the rate-limit slot and the idempotency record, so nothing is done twice or half; the job's
// transitions themselves are src/jobs/lifecycle's, which announces them after the commit.
import type { Kysely, Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import type { Config } from '../config.ts';
import { CodedError } from '../errors.ts';
import type { Job, JobTrigger, MessageOrigin } from '../contracts/jobs.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database, JobStatus } from '../store/schema.ts';
import { preparedRead } from '../store/prepared.ts';
import { takeRateSlot, type RateInfo } from '../store/rate-limits.ts';
import { IdempotencyMismatchError, findStoredResponse, requestHash, storeResponse, type IdempotencyRequest } from '../store/idempotency.ts';
import type { JobEventBus } from './events.ts';
import { jobView, type JobRow } from './view.ts';
import { jobTitle } from '../contracts/job-title.ts';
import { readChanges } from './changes.ts';
import { recordUsage, usageReport } from './usage.ts';
import type { JobLifecycle, JobTransitions } from './lifecycle/index.ts';
import type { JobEventData, JobEventType } from '../contracts/job-events.ts';
import { jobLimitFor, monthBudget } from './budget.ts';
import type { ProjectRow } from '../store/projects.ts';
import type { JobChanges, UsageReport } from '../contracts/jobs.ts';
import type { PullRequestStates } from './pull-request-states.ts';
import { stateName } from '../store/job-pull-requests.ts';

/** A write's Idempotency-Key bound to what the request asks for (`requestHash`). */
export { requestHash, type IdempotencyRequest };

export interface WriteResult {
  job: Job;
  statusCode: number;
  rate: RateInfo | null;
  /** True when an Idempotency-Key replayed an earlier response. */
  replayed: boolean;
}

/** Job writes offered inside JobsService.transact(). */
export interface TransactionJobs {
  /** Starts a job on the project's default model (takes a job-creation rate-limit slot). */
  /** `title`: the job's title until its pull request names it (default: the prompt's first line). */
  create(input: { prompt: string; trigger: JobTrigger; title?: string }): Promise<Job>;
  /** Queues a follow-up on a job (takes a follow-up slot); 404 unknown, 409 archived. `origin`: a review comment's. */
  followUp(jobId: string, prompt: string, origin?: MessageOrigin): Promise<Job & { seq: number }>;
}

/** A job a caller starts with records of its own (JobsService.startWith). */
export interface StartedJob {
  prompt: string;
  trigger: JobTrigger;
  /** The job's title until its pull request names it (default: the prompt's first line). */
  title?: string;
}

/** What routes may use of the jobs service: no transaction of another area's records (transact, startWith). */
export type JobsApi = Omit<JobsService, 'transact' | 'startWith'>;

export interface JobsServiceDeps {
  db: Kysely<Database>;
  dialect: StoreDialect;
  config: Config;
  /** Every transition of a job (src/jobs/lifecycle), shared with the worker's queue. */
  lifecycle: JobLifecycle;
  /** A sentence naming the missing setting when a model cannot be used; null when it can. */
  modelConfigError: (modelId: string) => string | null;
  /** The one refresher of pull request merge states (the list asks it about due jobs). */
  pullRequests?: Pick<PullRequestStates, 'refreshed'>;
}

type StatusListener = (job: Job, projectId: string) => void;
type RateBucket = { bucket: string; limit: number; what: string };

const CURSOR_PREFIX = 'c1.';

export class JobsService {
  private readonly deps: JobsServiceDeps;
  /** Job events recorded by this process, as they are recorded (live streams subscribe). */
  readonly events: JobEventBus;

  private readonly jobById;
  /** Jobs whose pull request is being asked about now (a list does not ask twice at once). */
  private readonly refreshing = new Set<string>();
  private readonly projectById;
  /** Job views by id, valid while the store's data version is unchanged (polling clients hit it). */
  private readonly viewCache = new LRUCache<string, { version: number; job: Job }>({ max: 10_000 });

  constructor(deps: JobsServiceDeps) {
    this.deps = deps;
    this.events = deps.lifecycle.events;
    this.projectById = preparedRead(deps.dialect, deps.db.selectFrom('projects').selectAll().where('id', '=', ':id'), ['id']);
    this.jobById = preparedRead(
      deps.dialect,
      deps.db
        .selectFrom('jobs')
        .leftJoin('job_pull_requests as pr', 'pr.job_id', 'jobs.id')
        .selectAll('jobs')
        .select('pr.merged_at')
        .where('jobs.id', '=', ':id')
        .where('jobs.project_id', '=', ':projectId'),
      ['id', 'projectId'],
    );
  }

  /** Called after every committed status change (webhooks, metrics). */
  onStatusChange(fn: StatusListener): void {
    this.deps.lifecycle.onStatusChange(fn);
  }
  /** Called after new work was queued (wakes idle workers at once). */
  onWork(fn: () => void): void {
    this.deps.lifecycle.onWork(fn);
  }
  /** Called after a job was archived (stops its run in this process). */
  onArchive(fn: (jobId: string) => void): void {
    this.deps.lifecycle.onArchive(fn);
  }

  private view(row: JobRow): Job {
    return jobView(row, this.deps.config.models.prices);
  }

  private async project(projectId: string): Promise<ProjectRow> {
    const [project] = await this.projectById({ id: projectId });
    if (!project) throw new CodedError('project_not_found', `Project "${projectId}" does not exist.`);
    return project;
  }

  private resolveModel(requested: string | undefined, projectDefault: string | null): string {
    const { models } = this.deps.config;
    if (requested !== undefined && !models.allowed.includes(requested)) {
      throw new CodedError('model_not_allowed', `Model "${requested}" is not allowed on this server; allowed: ${models.allowed.join(', ')}.`, {
        details: [{ message: 'not an allowed model', path: '/body/model' }],
      });
    }
    const model = requested ?? projectDefault ?? models.defaultModel;
    const problem = this.deps.modelConfigError(model);
    if (problem) throw new CodedError('model_not_configured', problem);
    return model;
  }

  private get createSlot(): RateBucket {
    return { bucket: 'create', limit: this.deps.config.rateLimits.createJobPerHour, what: 'job creations' };
  }

  private get followUpSlot(): RateBucket {
    return { bucket: 'follow_up', limit: this.deps.config.rateLimits.followUpPerHour, what: 'follow-up messages' };
  }

  /** Runs `fn` in a project-serialised transaction of transitions, with idempotency and rate limiting. */
  private async write(
    projectId: string,
    idem: IdempotencyRequest | undefined,
    rate: RateBucket,
    fn: (tx: JobTransitions, takeSlot: () => Promise<RateInfo | null>) => Promise<{ row: JobRow; statusCode: number }>,
  ): Promise<WriteResult> {
    try {
      return await this.deps.lifecycle.transaction(async (tx) => {
        const { trx } = tx;
        await this.deps.dialect.lockProject(trx, projectId);
        if (idem) {
          const stored = await findStoredResponse(trx, projectId, idem);
          if (stored) return { job: JSON.parse(stored.body) as Job, statusCode: stored.statusCode, rate: null, replayed: true };
        }
        let rateInfo: RateInfo | null = null;
        const takeSlot = async () => (rateInfo = await takeRateSlot(trx, projectId, rate.bucket, rate.limit, rate.what));
        const { row, statusCode } = await fn(tx, takeSlot);
        const job = this.view(row);
        if (idem) await storeResponse(trx, projectId, idem, { statusCode, body: JSON.stringify(job) });
        return { job, statusCode, rate: rateInfo, replayed: false };
      });
    } catch (err) {
      if (err instanceof IdempotencyMismatchError) throw new CodedError('idempotency_key_reused', err.message);
      throw err;
    }
  }

  async create(projectId: string, body: { prompt: string; model?: string; maxCostUsd?: number; maxTokens?: number }, idem?: IdempotencyRequest): Promise<WriteResult> {
    const project = await this.project(projectId);
    const model = this.resolveModel(body.model, project.default_model);
    const limit = jobLimitFor(body, project, this.deps.config.models.prices, model);
    return this.write(projectId, idem, this.createSlot, async (tx, takeSlot) => {
      await takeSlot();
      return { row: await tx.create({ project, model, prompt: body.prompt, trigger: null, limit }), statusCode: 201 };
    });
  }

  async sendMessage(projectId: string, jobId: string, prompt: string, idem?: IdempotencyRequest): Promise<WriteResult> {
    return this.write(projectId, idem, this.followUpSlot, async (tx, takeSlot) => {
      const { row } = await tx.followUp({ projectId, jobId, prompt, takeSlot });
      return { row, statusCode: 200 };
    });
  }

  /** The transaction's job writes for callers in src/jobs (TransactionJobs), slots taken as the API takes them. */
  private transactionJobs(tx: JobTransitions, project: ProjectRow): TransactionJobs {
    const { trx } = tx;
    const slot = (r: RateBucket) => takeRateSlot(trx, project.id, r.bucket, r.limit, r.what);
    return {
      create: async ({ prompt, trigger, title }) => {
        const model = this.resolveModel(undefined, project.default_model);
        await slot(this.createSlot);
        const limit = jobLimitFor({}, project, this.deps.config.models.prices, model);
        return this.view(await tx.create({ project, model, prompt, trigger, limit, title: title === undefined ? undefined : jobTitle(title) }));
      },
      followUp: async (jobId, prompt, origin) => {
        const { row, seq } = await tx.followUp({ projectId: project.id, jobId, prompt, origin, takeSlot: () => slot(this.followUpSlot) });
        return { ...this.view(row), seq };
      },
    };
  }

  /**
   * For src/jobs only (code-change triggers): runs `fn` in one project-serialised transaction in which
   * it may start a job or follow up on one (with the usual rate-limit slots) and write its own records,
   * so a delivery starts its job exactly once. Workers are woken, events published and status
   * listeners told only after the commit. Callers elsewhere use startWith().
   */
  async transact<T>(projectId: string, fn: (trx: Transaction<Database>, jobs: TransactionJobs) => Promise<T>): Promise<T> {
    const project = await this.project(projectId);
    return this.deps.lifecycle.transaction(async (tx) => {
      await this.deps.dialect.lockProject(tx.trx, projectId);
      return fn(tx.trx, this.transactionJobs(tx, project));
    });
  }

  /**
   * Starts a job together with records of the caller's area, in one project-serialised transaction:
   * `bind` (a store function) binds those records to the transaction, so the caller never holds it;
   * `fn` reads and writes them around `start` (which takes a job-creation slot). Nothing is announced
   * unless all of it commits.
   */
  async startWith<R, T>(projectId: string, bind: (trx: Transaction<Database>) => R, fn: (records: R, start: (job: StartedJob) => Promise<Job>) => Promise<T>): Promise<T> {
    return this.transact(projectId, (trx, jobs) => fn(bind(trx), (job) => jobs.create(job)));
  }

  async archive(projectId: string, jobId: string): Promise<Job> {
    return this.view(await this.deps.lifecycle.archive(projectId, jobId));
  }

  /** `since`: when the request arrived (see StoreDialect.dataVersion); the view is never older. */
  async get(projectId: string, jobId: string, since?: number): Promise<Job> {
    const hit = this.cachedView(projectId, jobId, since);
    if (hit) return hit;
    const version = this.deps.dialect.dataVersion(since);
    const key = `${projectId}/${jobId}`;
    const [row] = await this.jobById({ id: jobId, projectId });
    if (!row) throw new CodedError('job_not_found', `Job "${jobId}" does not exist in this project.`);
    const job = jobView(row, this.deps.config.models.prices);
    if (version !== null) {
      // Read after the version: a commit in between only makes the entry look older than it is.
      this.viewCache.set(key, { version, job });
    }
    return job;
  }

  /** True while the job and its project exist, read from the store (open event streams ask). */
  async exists(projectId: string, jobId: string): Promise<boolean> {
    const row = await this.deps.db
      .selectFrom('jobs')
      .innerJoin('projects', 'projects.id', 'jobs.project_id')
      .select('jobs.id')
      .where('jobs.id', '=', jobId)
      .where('jobs.project_id', '=', projectId)
      .executeTakeFirst();
    return row !== undefined;
  }

  /** get() without a query: the view when the cache holds it for the current data version. */
  cachedView(projectId: string, jobId: string, since?: number): Job | undefined {
    const version = this.deps.dialect.dataVersion(since);
    if (version === null) return undefined;
    const hit = this.viewCache.get(`${projectId}/${jobId}`);
    return hit && hit.version === version ? hit.job : undefined;
  }

  async list(projectId: string, q: { status?: JobStatus; limit?: number; cursor?: string }): Promise<{ jobs: Job[]; nextCursor: string | null; hasMore: boolean }> {
    const limit = q.limit ?? 20;
    let after: string | undefined;
    if (q.cursor !== undefined) {
      after = decodeCursor(q.cursor);
      if (after === undefined) throw new CodedError('invalid_cursor', 'The cursor is not one this server returned; start again without it.', { details: [{ message: 'invalid cursor', path: '/query/cursor' }] });
    }
    let query = this.deps.db
      .selectFrom('jobs')
      .leftJoin('job_pull_requests as pr', 'pr.job_id', 'jobs.id')
      .selectAll('jobs')
      .select(['pr.merged_at', 'pr.pr_state', 'pr.pr_checked_at'])
      .where('jobs.project_id', '=', projectId);
    if (q.status) query = query.where('jobs.status', '=', q.status);
    if (after) query = query.where('jobs.id', '<', after);
    const rows = await query.orderBy('jobs.id', 'desc').limit(limit + 1).execute();
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    this.refreshMergeStates(projectId, page);
    return {
      jobs: page.map((r) => jobView(r, this.deps.config.models.prices)),
      hasMore,
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null,
    };
  }

  /**
   * Asks the code host about the listed jobs' pull requests that are due (deps.pullRequests: at most
   * every 5 minutes per job, a bounded number per call), in the background: a polled list never waits
   * for a code host, and a later list shows what it said.
   */
  private refreshMergeStates(projectId: string, rows: (JobRow & { pr_state: string | null; pr_checked_at: number | null })[]): void {
    const states = this.deps.pullRequests;
    if (!states) return;
    const jobs = rows.filter((r) => r.pr_link !== null && !this.refreshing.has(r.id));
    if (jobs.length === 0) return;
    const stored = new Map(
      rows
        .filter((r) => r.pr_checked_at !== null && r.pr_checked_at !== undefined)
        .map((r) => [r.id, { prState: stateName(r.pr_state), mergedAt: r.merged_at === null || r.merged_at === undefined ? null : Number(r.merged_at), checkedAt: Number(r.pr_checked_at) }]),
    );
    for (const r of jobs) this.refreshing.add(r.id);
    const asked = jobs.map((r) => ({ id: r.id, projectId, status: r.status, prLink: r.pr_link, ref: r.ref, baseRef: r.base_ref }));
    void states
      .refreshed(asked, Date.now(), stored)
      .catch(() => {})
      .finally(() => {
        for (const r of jobs) this.refreshing.delete(r.id);
      });
  }

  /** Messages of a job in order (dashboard, CLI). */
  async messages(projectId: string, jobId: string) {
    await this.get(projectId, jobId);
    const rows = await this.deps.db.selectFrom('job_messages').selectAll().where('job_id', '=', jobId).orderBy('seq').execute();
    return rows.map((m) => ({
      seq: Number(m.seq),
      prompt: m.prompt,
      createdAt: new Date(Number(m.created_at)).toISOString(),
      handledAt: m.handled_at === null ? null : new Date(Number(m.handled_at)).toISOString(),
      outcome: m.outcome,
      title: m.title,
      summary: m.summary,
      origin: m.origin ? (JSON.parse(m.origin) as MessageOrigin) : null,
    }));
  }

  /** The job's diff against its base, its files and the last docs checks report. */
  async changes(projectId: string, jobId: string): Promise<JobChanges> {
    const job = await this.get(projectId, jobId);
    return readChanges(this.deps.db, jobId, job.files);
  }

  /** Token usage and estimated cost of the project's jobs per day and per job, and this month against its budgets. */
  async usage(projectId: string, days: number): Promise<UsageReport> {
    const { db, config } = this.deps;
    const project = await this.project(projectId);
    const report = await usageReport(db, config.models.prices, projectId, days);
    return { ...report, month: await monthBudget(db, config.models.prices, projectId, project) };
  }

  /** One model call's tokens (what a run records through its queue; tests and tools call it here). */
  recordUsage(job: { id: string; projectId: string; model: string }, usage: { inputTokens: number; outputTokens: number }): Promise<void> {
    return recordUsage(this.deps.db, job, usage);
  }

  /** Records an event of a job that is no transition (stored and published). */
  event<T extends JobEventType>(jobId: string, type: T, data: JobEventData<T>) {
    return this.deps.lifecycle.event(jobId, type, data);
  }

}

function encodeCursor(id: string): string {
  return CURSOR_PREFIX + Buffer.from(id).toString('base64url');
}

function decodeCursor(cursor: string): string | undefined {
  if (!cursor.startsWith(CURSOR_PREFIX)) return undefined;
  const id = Buffer.from(cursor.slice(CURSOR_PREFIX.length), 'base64url').toString();
  return /^job_[0-9a-z]{26}$/.test(id) ? id : undefined;
}
