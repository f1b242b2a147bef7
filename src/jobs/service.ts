// Job lifecycle through the API: create, follow up, archive, read. Each write is one transaction that
// also takes the rate-limit slot and the idempotency record, so nothing is done twice or half.
import type { Kysely, Transaction } from 'kysely';
import { LRUCache } from 'lru-cache';
import { retrying } from '../util/retry.ts';
import type { Config } from '../config.ts';
import { CodedError } from '../errors.ts';
import type { Job, JobTrigger } from '../contracts/jobs.ts';
import type { StoreDialect } from '../store/dialect.ts';
import type { Database, JobStatus } from '../store/schema.ts';
import { newId } from '../store/ids.ts';
import { preparedRead } from '../store/prepared.ts';
import { takeRateSlot, type RateInfo } from '../store/rate-limits.ts';
import { IdempotencyMismatchError, findStoredResponse, requestHash, storeResponse, type IdempotencyRequest } from '../store/idempotency.ts';
import { appendJobEvent, insertJobEvent, JobEventBus } from './events.ts';
import type { JobEvent as JobEventView, JobEventData, JobEventType } from '../contracts/job-events.ts';
import { jobView, type JobRow } from './view.ts';
import { jobTitle } from '../contracts/job-title.ts';
import { enqueueWebhook } from './webhooks.ts';
import { readChanges, saveBranchDiff, saveChecks, type BranchDiff, type StoredChecks } from './changes.ts';
import { recordUsage, usageReport } from './usage.ts';
import { jobLimitFor, monthBudget, readJobSpend, refuseOverMonthlyBudget, type JobSpend } from './budget.ts';
import type { JobLimit } from '../contracts/budget.ts';
import type { JobChanges, UsageReport } from '../contracts/jobs.ts';

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
  /** Queues a follow-up on a job (takes a follow-up slot); 404 unknown, 409 archived. */
  followUp(jobId: string, prompt: string): Promise<Job>;
}

export interface JobsServiceDeps {
  db: Kysely<Database>;
  dialect: StoreDialect;
  config: Config;
  /** A sentence naming the missing setting when a model cannot be used; null when it can. */
  modelConfigError: (modelId: string) => string | null;
}

type StatusListener = (job: Job, projectId: string) => void;

const CURSOR_PREFIX = 'c1.';

export class JobsService {
  private readonly deps: JobsServiceDeps;
  /** Job events recorded by this process, as they are recorded (live streams subscribe). */
  readonly events = new JobEventBus();
  private readonly statusListeners: StatusListener[] = [];
  private readonly workListeners: (() => void)[] = [];
  private readonly archiveListeners: ((jobId: string) => void)[] = [];

  private readonly jobById;
  private readonly projectById;
  /** Job views by id, valid while the store's data version is unchanged (polling clients hit it). */
  private readonly viewCache = new LRUCache<string, { version: number; job: Job }>({ max: 10_000 });

  constructor(deps: JobsServiceDeps) {
    this.deps = deps;
    this.projectById = preparedRead(deps.dialect, deps.db.selectFrom('projects').selectAll().where('id', '=', ':id'), ['id']);
    this.jobById = preparedRead(deps.dialect, deps.db.selectFrom('jobs').selectAll().where('id', '=', ':id').where('project_id', '=', ':projectId'), ['id', 'projectId']);
  }

  /** Called after every committed status change (webhooks, metrics). */
  onStatusChange(fn: StatusListener): void {
    this.statusListeners.push(fn);
  }
  /** Called after new work was queued (wakes idle workers at once). */
  onWork(fn: () => void): void {
    this.workListeners.push(fn);
  }
  /** Called after a job was archived (stops its run in this process). */
  onArchive(fn: (jobId: string) => void): void {
    this.archiveListeners.push(fn);
  }

  statusChanged(row: JobRow): void {
    const job = jobView(row, this.deps.config.models.prices);
    for (const fn of this.statusListeners) fn(job, row.project_id);
  }

  private workQueued(): void {
    for (const fn of this.workListeners) fn();
    void this.deps.dialect.notify('folio_jobs').catch(() => {});
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

  /** Runs `fn` in a project-serialised transaction with idempotency and rate limiting. */
  private async write(
    projectId: string,
    idem: IdempotencyRequest | undefined,
    rate: { bucket: string; limit: number; what: string } | null,
    fn: (trx: Transaction<Database>, takeSlot: () => Promise<RateInfo | null>) => Promise<{ row: JobRow; statusCode: number; changed: boolean; event?: JobEventView }>,
  ): Promise<WriteResult & { changed: boolean; row?: JobRow }> {
    return retrying(() => this.writeOnce(projectId, idem, rate, fn), this.onEventNumberTaken);
  }

  /**
   * A worker took the same event number meanwhile (PostgreSQL): nothing was committed, so the write
   * goes again (a few times at most).
   */
  private readonly onEventNumberTaken = { attempts: 5, retryable: (err: unknown) => this.deps.dialect.isUniqueViolation(err) };

  private async writeOnce(
    projectId: string,
    idem: IdempotencyRequest | undefined,
    rate: { bucket: string; limit: number; what: string } | null,
    fn: (trx: Transaction<Database>, takeSlot: () => Promise<RateInfo | null>) => Promise<{ row: JobRow; statusCode: number; changed: boolean; event?: JobEventView }>,
  ): Promise<WriteResult & { changed: boolean; row?: JobRow }> {
    try {
      const result = await this.deps.db.transaction().execute(async (trx) => {
        await this.deps.dialect.lockProject(trx, projectId);
        if (idem) {
          const stored = await findStoredResponse(trx, projectId, idem);
          if (stored) return { job: JSON.parse(stored.body) as Job, statusCode: stored.statusCode, rate: null, replayed: true, changed: false };
        }
        let rateInfo: RateInfo | null = null;
        const takeSlot = async () => (rateInfo = rate ? await takeRateSlot(trx, projectId, rate.bucket, rate.limit, rate.what) : null);
        const { row, statusCode, changed, event } = await fn(trx, takeSlot);
        const job = jobView(row, this.deps.config.models.prices);
        if (idem) await storeResponse(trx, projectId, idem, { statusCode, body: JSON.stringify(job) });
        return { job, statusCode, rate: rateInfo, replayed: false, changed, row, event };
      });
      if (result.event && result.row) this.events.publish(result.row.id, result.event);
      return result;
    } catch (err) {
      if (err instanceof IdempotencyMismatchError) throw new CodedError('idempotency_key_reused', err.message);
      throw err;
    }
  }

  async create(projectId: string, body: { prompt: string; model?: string; maxCostUsd?: number; maxTokens?: number }, idem?: IdempotencyRequest): Promise<WriteResult> {
    const { config } = this.deps;
    const [project] = await this.projectById({ id: projectId });
    if (!project) throw new CodedError('project_not_found', `Project "${projectId}" does not exist.`);
    const model = this.resolveModel(body.model, project.default_model);
    const limit = jobLimitFor(body, project, config.models.prices, model);
    const result = await this.write(
      projectId,
      idem,
      { bucket: 'create', limit: config.rateLimits.createJobPerHour, what: 'job creations' },
      async (trx, takeSlot) => {
        await takeSlot();
        return { ...(await this.insertJob(trx, project, model, body.prompt, null, limit)), statusCode: 201, changed: true };
      },
    );
    if (result.changed && result.row) {
      this.workQueued();
      this.statusChanged(result.row);
    }
    return result;
  }

  /** Writes a new job, its first message and its first event. */
  private async insertJob(
    trx: Transaction<Database>,
    project: { id: string; repository_url: string; base_branch: string },
    model: string,
    prompt: string,
    trigger: JobTrigger | null,
    limit: JobLimit,
    title: string = jobTitle(prompt),
  ): Promise<{ row: JobRow; event: JobEventView }> {
    await refuseOverMonthlyBudget(trx, this.deps.config.models.prices, project.id);
    const now = Date.now();
    const id = newId('job');
    const row: JobRow = {
      id,
      project_id: project.id,
      status: 'active',
      model,
      repository: project.repository_url,
      ref: `${this.deps.config.agent.branchPrefix}${id}`,
      base_ref: project.base_branch,
      pr_link: null,
      error_code: null,
      error_message: null,
      created_at: now,
      updated_at: now,
      archived_at: null,
      lease_owner: null,
      lease_expires_at: null,
      lost_leases: 0,
      trigger: trigger === null ? null : JSON.stringify(trigger),
      input_tokens: 0,
      output_tokens: 0,
      files: '[]',
      title,
      max_cost_usd: limit.maxCostUsd,
      max_tokens: limit.maxTokens,
    };
    await trx.insertInto('jobs').values(row).execute();
    await trx.insertInto('job_messages').values({ job_id: id, seq: 1, prompt, created_at: now, handled_at: null, outcome: null, title: null, summary: null }).execute();
    await enqueueWebhook(trx, row, this.deps.config.models.prices, now);
    const event = await insertJobEvent(trx, this.deps.dialect, id, 'job.created', { model, ref: row.ref, baseRef: row.base_ref, ...(trigger ? { trigger } : {}) });
    return { row, event };
  }

  async sendMessage(projectId: string, jobId: string, prompt: string, idem?: IdempotencyRequest): Promise<WriteResult> {
    let reopened = false;
    const result = await this.write(
      projectId,
      idem,
      { bucket: 'follow_up', limit: this.deps.config.rateLimits.followUpPerHour, what: 'follow-up messages' },
      async (trx, takeSlot) => {
        const queued = await this.queueMessage(trx, projectId, jobId, prompt, takeSlot);
        reopened = queued.reopened;
        return { row: queued.row, statusCode: 200, changed: true, event: queued.event };
      },
    );
    if (result.changed && result.row) {
      this.workQueued();
      if (reopened) this.statusChanged(result.row);
    }
    return result;
  }

  /** Queues a follow-up message on a job (reopening it when it had finished). */
  private async queueMessage(
    trx: Transaction<Database>,
    projectId: string,
    jobId: string,
    prompt: string,
    takeSlot: () => Promise<unknown>,
  ): Promise<{ row: JobRow; event: JobEventView; reopened: boolean }> {
    // Row lock: a concurrent archive or end of turn either sees this message or waits for it.
    const job = await this.deps.dialect
      .forUpdate(trx.selectFrom('jobs').selectAll().where('id', '=', jobId).where('project_id', '=', projectId))
      .executeTakeFirst();
    if (!job) throw new CodedError('job_not_found', `Job "${jobId}" does not exist in this project.`);
    if (job.status === 'archived') throw new CodedError('job_archived', `Job "${jobId}" is archived and takes no more messages.`);
    await refuseOverMonthlyBudget(trx, this.deps.config.models.prices, projectId);
    await takeSlot();
    const { max } = await trx
      .selectFrom('job_messages')
      .select((eb) => eb.fn.max<number>('seq').as('max'))
      .where('job_id', '=', jobId)
      .executeTakeFirstOrThrow();
    const seq = Number(max ?? 0) + 1;
    const now = Date.now();
    await trx.insertInto('job_messages').values({ job_id: jobId, seq, prompt, created_at: now, handled_at: null, outcome: null, title: null, summary: null }).execute();
    const reopened = job.status !== 'active';
    const row: JobRow = { ...job, status: 'active', updated_at: now, error_code: null, error_message: null };
    await trx
      .updateTable('jobs')
      .set({ status: 'active', updated_at: now, error_code: null, error_message: null, ...(reopened ? { lost_leases: 0 } : {}) })
      .where('id', '=', jobId)
      .execute();
    if (reopened) await enqueueWebhook(trx, row, this.deps.config.models.prices, now);
    const event = await insertJobEvent(trx, this.deps.dialect, jobId, 'message.queued', { seq });
    return { row, event, reopened };
  }

  /**
   * Runs `fn` in one project-serialised transaction in which it may start a job or follow up on one
   * (with the usual rate-limit slots) and write its own records: what a code-change trigger commits
   * together with its delivery record, so a delivery starts its job exactly once. Workers are woken,
   * events published and status listeners told only after the commit.
   */
  async transact<T>(projectId: string, fn: (trx: Transaction<Database>, jobs: TransactionJobs) => Promise<T>): Promise<T> {
    const [project] = await this.projectById({ id: projectId });
    if (!project) throw new CodedError('project_not_found', `Project "${projectId}" does not exist.`);
    const { config, dialect } = this.deps;
    const once = async (): Promise<T> => {
      const after: (() => void)[] = [];
      const result = await this.deps.db.transaction().execute(async (trx) => {
        await dialect.lockProject(trx, projectId);
        const ops: TransactionJobs = {
          create: async ({ prompt, trigger, title }) => {
            const model = this.resolveModel(undefined, project.default_model);
            await takeRateSlot(trx, projectId, 'create', config.rateLimits.createJobPerHour, 'job creations');
            const limit = jobLimitFor({}, project, config.models.prices, model);
            const { row, event } = await this.insertJob(trx, project, model, prompt, trigger, limit, title === undefined ? undefined : jobTitle(title));
            after.push(() => {
              this.events.publish(row.id, event);
              this.workQueued();
              this.statusChanged(row);
            });
            return jobView(row, config.models.prices);
          },
          followUp: async (jobId, prompt) => {
            const take = () => takeRateSlot(trx, projectId, 'follow_up', config.rateLimits.followUpPerHour, 'follow-up messages');
            const { row, event, reopened } = await this.queueMessage(trx, projectId, jobId, prompt, take);
            after.push(() => {
              this.events.publish(row.id, event);
              this.workQueued();
              if (reopened) this.statusChanged(row);
            });
            return jobView(row, config.models.prices);
          },
        };
        return fn(trx, ops);
      });
      for (const f of after) f();
      return result;
    };
    try {
      return await retrying(once, this.onEventNumberTaken);
    } catch (err) {
      throw err;
    }
  }

  async archive(projectId: string, jobId: string): Promise<Job> {
    const { db } = this.deps;
    let changed = false;
    const row = await db.transaction().execute(async (trx) => {
      const job = await this.deps.dialect
        .forUpdate(trx.selectFrom('jobs').selectAll().where('id', '=', jobId).where('project_id', '=', projectId))
        .executeTakeFirst();
      if (!job) throw new CodedError('job_not_found', `Job "${jobId}" does not exist in this project.`);
      if (job.status === 'archived') return job;
      const now = Date.now();
      await trx.updateTable('jobs').set({ status: 'archived', archived_at: now, updated_at: now }).where('id', '=', jobId).execute();
      await trx
        .updateTable('job_messages')
        .set({ handled_at: now, outcome: 'archived' })
        .where('job_id', '=', jobId)
        .where('handled_at', 'is', null)
        .execute();
      changed = true;
      const archived = { ...job, status: 'archived' as JobStatus, archived_at: now, updated_at: now };
      await enqueueWebhook(trx, archived, this.deps.config.models.prices, now);
      return archived;
    });
    if (changed) {
      await this.event(jobId, 'job.archived', {});
      for (const fn of this.archiveListeners) fn(jobId);
      void this.deps.dialect.notify('folio_archive', jobId).catch(() => {});
      this.statusChanged(row);
    }
    return jobView(row, this.deps.config.models.prices);
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
    let query = this.deps.db.selectFrom('jobs').selectAll().where('project_id', '=', projectId);
    if (q.status) query = query.where('status', '=', q.status);
    if (after) query = query.where('id', '<', after);
    const rows = await query.orderBy('id', 'desc').limit(limit + 1).execute();
    const hasMore = rows.length > limit;
    const page = rows.slice(0, limit);
    return {
      jobs: page.map((r) => jobView(r, this.deps.config.models.prices)),
      hasMore,
      nextCursor: hasMore ? encodeCursor(page[page.length - 1].id) : null,
    };
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
    const [project] = await this.projectById({ id: projectId });
    if (!project) throw new CodedError('project_not_found', `Project "${projectId}" does not exist.`);
    const report = await usageReport(db, config.models.prices, projectId, days);
    return { ...report, month: await monthBudget(db, config.models.prices, projectId, project) };
  }

  /** Worker side: the job's limits and what it has spent (checked before each model call, jobs/budget.ts). */
  spend(jobId: string): Promise<JobSpend> {
    return readJobSpend(this.deps.db, jobId);
  }

  /** Worker side: one model call's tokens. */
  recordUsage(job: { id: string; projectId: string; model: string }, usage: { inputTokens: number; outputTokens: number }): Promise<void> {
    return recordUsage(this.deps.db, job, usage);
  }

  /** Worker side: what the pushed branch changed. */
  saveBranchDiff(jobId: string, diff: BranchDiff): Promise<void> {
    return saveBranchDiff(this.deps.db, jobId, diff);
  }

  /** Worker side: the docs checks of the last turn. */
  saveChecks(jobId: string, checks: StoredChecks): Promise<void> {
    return saveChecks(this.deps.db, jobId, checks);
  }

  event<T extends JobEventType>(jobId: string, type: T, data: JobEventData<T>) {
    return appendJobEvent(this.events, this.deps.db, this.deps.dialect, jobId, type, data);
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
