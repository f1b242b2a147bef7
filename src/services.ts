// Builds everything a Folio process runs from one Config: store, services, workers.
import { statSync } from 'node:fs';
import pino, { type Logger } from 'pino';
import { logDestination } from './util/log-destination.ts';
import type { Config } from './config.ts';
import { isReady, openStore, type Store } from './store/database.ts';
import { ApiKeyStore } from './store/api-keys.ts';
import type { ProjectStore } from './store/projects.ts';
import { ProjectsService } from './admin/projects.ts';
import { KeysService } from './admin/keys.ts';
import { UsersService } from './admin/users.ts';
import { pruneIdempotency } from './store/idempotency.ts';
import { JobsService } from './jobs/service.ts';
import { JobQueue } from './jobs/queue.ts';
import { JobLifecycle } from './jobs/lifecycle/index.ts';
import { WorkerPool } from './jobs/worker.ts';
import type { JobHandler } from './jobs/handler.ts';
import { modelConfigError } from './agent/models.ts';
import { createAnalytics, type Analytics } from './analytics/index.ts';
import { AnalyticsReadLimit } from './analytics/read-limit.ts';
import { WebhookOutbox } from './jobs/webhooks.ts';
import { WorktreePool } from './git/worktree-pool.ts';
import { createSecretBox } from './store/secret-box.ts';
import { TriggerStore } from './store/triggers.ts';
import { TriggerReceiver } from './jobs/triggers/receiver.ts';
import { ReviewComments } from './jobs/triggers/reviews.ts';
import { ReviewReplies } from './jobs/triggers/review-replies.ts';
import { TriggersService } from './jobs/triggers/service.ts';
import { JobEventsService } from './jobs/event-streams.ts';
import { serviceMetrics, type ServiceMetrics } from './jobs/metrics.ts';
import { SuggestionsService } from './suggestions/service.ts';
import { SiteIndexReader } from './suggestions/site-index.ts';
import { PullRequestStates } from './jobs/pull-request-states.ts';
import { JobImpactService } from './jobs/impact.ts';
import { WeeklyAutoFix } from './suggestions/weekly.ts';

export interface ServicesOptions {
  /** Replaces the agent (tests, benchmarks). */
  jobHandler?: JobHandler;
  /** Agent workers in this process; defaults to config.workers. */
  workers?: number;
  log?: Logger;
}

export interface Services {
  readonly config: Config;
  readonly log: Logger;
  readonly store: Store;
  readonly projects: ProjectsService;
  readonly keys: KeysService;
  readonly users: UsersService;
  readonly jobs: JobsService;
  /** A job's events as pages and live streams. */
  readonly jobEvents: JobEventsService;
  readonly queue: JobQueue;
  readonly workers: WorkerPool | null;
  readonly analytics: Analytics;
  /** The hourly limit of analytics reads per project. */
  readonly analyticsReads: AnalyticsReadLimit;
  readonly webhooks: WebhookOutbox;
  /** Jobs started by code changes: settings and deliveries, and the webhook receiver. */
  readonly triggers: TriggersService;
  readonly metrics: ServiceMetrics;
  /** Suggestions drawn from traffic, and the jobs started from them. */
  readonly suggestions: SuggestionsService;
  /** The optional weekly automatic broken-paths jobs (started in processes with agent workers). */
  readonly weekly: WeeklyAutoFix;
  /** The effect of a merged job on the pages it touched. */
  readonly impact: JobImpactService;
  /** Whether the store is reachable and migrated. */
  storeReady(): Promise<boolean>;
  close(): Promise<void>;
}

export function createLogger(config: Config): Logger {
  return pino(
    {
      level: config.logLevel,
      redact: { paths: ['req.headers.authorization', 'headers.authorization', '*.apiKey', '*.token', '*.secret', '*.setupToken'], censor: '[redacted]' },
    },
    logDestination(),
  );
}

/** Warns when others may read the data directory (made before Folio created it 0700). */
function checkDataDirMode(config: Config, log: Logger): void {
  const mode = statSync(config.dataDir).mode & 0o777;
  if (mode & 0o007) {
    log.warn(
      { dataDir: config.dataDir, mode: mode.toString(8) },
      'the data directory is readable by other users of this machine; it holds the databases and repository mirrors: run chmod 700 on it',
    );
  }
}

export async function createServices(config: Config, opts: ServicesOptions = {}): Promise<Services> {
  const log = opts.log ?? createLogger(config);
  checkDataDirMode(config, log);
  const store = await openStore(config);
  const projects = new ProjectsService(store.db, config);
  // A revocation reaches the verified-key caches of every other process at once (PostgreSQL NOTIFY).
  const apiKeys = new ApiKeyStore(store.db, store.dialect, { notifyRevoked: () => store.dialect.notify('folio_keys') });
  const keys = new KeysService(apiKeys, projects);
  const { lifecycle, jobs, pullRequests } = createJobs(config, log, store, projects);
  const webhooks = new WebhookOutbox({ db: store.db, dialect: store.dialect, config, projects: projects.store, log });
  // A transition committed here queued a delivery in the same transaction: send it now. (Not on every
  // status change: a project without a webhook URL queues none, and a needless claim costs each create.)
  lifecycle.onWebhook(() => webhooks.wake());
  webhooks.start();
  jobs.onStatusChange((job) => {
    if (job.error?.code === 'worker_lost') log.warn({ jobId: job.id }, 'job failed: worker lost too often');
  });
  const queue = new JobQueue(lifecycle, store.db);

  const workerCount = opts.workers ?? config.workers;
  let workers: WorkerPool | null = null;
  const cleanups: (() => Promise<void>)[] = [];
  cleanups.push(await store.dialect.listen('folio_keys', () => apiKeys.forgetVerified()));
  const triggerStore = new TriggerStore(store.db, createSecretBox(config.secret));
  const triggers = createTriggers({ config, log, store, projects, jobs, triggerStore, answersHere: workerCount > 0 }, cleanups);
  cleanups.push(() => triggers.receiver.saveRefusals());
  // One pool per process: its mirror locks cover the agent's fetches and the suggestions' reads alike.
  const worktrees = new WorktreePool({ dataDir: config.dataDir, size: config.agent.worktreePool });
  cleanups.push(() => worktrees.drain());
  if (workerCount > 0) workers = await startWorkers(workerCount, { config, log, store, projects: projects.store, queue, jobs, worktrees, jobHandler: opts.jobHandler }, cleanups);

  const analytics = await createAnalytics({ config, log, dialect: store.dialect, siteOrigins: async (id) => (await projects.get(id))?.siteOrigins });

  const { suggestions, weekly } = createSuggestions({ config, log, store, analytics, jobs, projects, worktrees, workers, pullRequests }, cleanups);
  const impact = new JobImpactService({ db: store.db, config, jobs, analytics, pullRequests, pool: worktrees, repositoryOf: (id) => projects.repository(id), log });

  const pruner = setInterval(() => {
    void pruneIdempotency(store.db).catch(() => {});
    void triggerStore.pruneDeliveries(Date.now() - config.triggers.deliveryRetentionDays * 86_400_000).catch(() => {});
  }, 3_600_000);
  pruner.unref();

  return {
    config,
    log,
    store,
    projects,
    keys,
    users: new UsersService(store.db, config.setupToken),
    jobs,
    jobEvents: new JobEventsService(store.db, jobs, config.streams),
    queue,
    workers,
    analytics,
    analyticsReads: new AnalyticsReadLimit(store.dialect, config.rateLimits.analyticsReadsPerHour),
    webhooks,
    triggers,
    metrics: serviceMetrics({ db: store.db, queue, workers, receiver: triggers.receiver }),
    suggestions,
    weekly,
    impact,
    storeReady: () => isReady(store.dialect),
    async close() {
      clearInterval(pruner);
      await workers?.stop();
      await webhooks.close();
      await analytics.close();
      for (const c of cleanups) await c();
      await store.close();
    },
  };
}

/** The jobs service over the one lifecycle, and the one refresher of every job's pull request merge state (jobs list, job impact, suggestions). */
function createJobs(config: Config, log: Logger, store: Store, projects: ProjectsService): { lifecycle: JobLifecycle; jobs: JobsService; pullRequests: PullRequestStates } {
  const lifecycle = new JobLifecycle({ db: store.db, dialect: store.dialect, config });
  // The project's repository with its token opened: the pull-request checks ask its code host.
  const pullRequests = new PullRequestStates(store.db, config, (projectId) => projects.repository(projectId), log);
  const jobs = new JobsService({
    db: store.db,
    dialect: store.dialect,
    config,
    lifecycle,
    modelConfigError: (model) => modelConfigError(config.models, model),
    pullRequests,
  });
  return { lifecycle, jobs, pullRequests };
}

/**
 * Code-change triggers and review comments. Answers on pull requests for review comments are sent
 * where turns end: by processes with workers (`answersHere`).
 */
function createTriggers(
  deps: { config: Config; log: Logger; store: Store; projects: ProjectsService; jobs: JobsService; triggerStore: TriggerStore; answersHere: boolean },
  cleanups: (() => Promise<void>)[],
): TriggersService {
  const { config, log, store, projects, jobs, triggerStore } = deps;
  const replies = deps.answersHere ? new ReviewReplies({ db: store.db, projects: projects.store, config, log }) : null;
  if (replies) {
    replies.start();
    jobs.onStatusChange(() => replies.wake());
    cleanups.push(() => replies.stop());
  }
  const reviews = new ReviewComments({ store: triggerStore, projects: projects.store, jobs, config, log, queued: () => replies?.wake() });
  return new TriggersService(new TriggerReceiver({ store: triggerStore, jobs, config, log, reviews }), triggerStore, (id) => projects.require(id));
}

/** Suggestions from traffic; the weekly automatic jobs run where agents run (an API-only process starts none). */
function createSuggestions(
  deps: { config: Config; log: Logger; store: Store; analytics: Analytics; jobs: JobsService; projects: ProjectsService; worktrees: WorktreePool; workers: WorkerPool | null; pullRequests: PullRequestStates },
  cleanups: (() => Promise<void>)[],
): { suggestions: SuggestionsService; weekly: WeeklyAutoFix } {
  const { config, log, store, analytics, jobs, projects, worktrees } = deps;
  // The project's repository with its token opened: read by the site index.
  const repositoryOf = (projectId: string) => projects.repository(projectId);
  const suggestions = new SuggestionsService(
    { db: store.db, config, analytics, jobs, siteIndex: new SiteIndexReader(config, worktrees), repositoryOf, log },
    deps.pullRequests,
  );
  const weekly = new WeeklyAutoFix(store.db, suggestions, log);
  if (deps.workers) weekly.start();
  cleanups.push(async () => weekly.stop());
  return { suggestions, weekly };
}

/**
 * This process's agent workers: the pool, woken by new work here and (PostgreSQL NOTIFY) elsewhere,
 * stopping the run of a job archived anywhere. The agent's git workspaces are shared by the workers
 * and drained at shutdown (cleanups).
 */
async function startWorkers(
  count: number,
  deps: { config: Config; log: Logger; store: Store; projects: ProjectStore; queue: JobQueue; jobs: JobsService; worktrees: WorktreePool; jobHandler?: JobHandler },
  cleanups: (() => Promise<void>)[],
): Promise<WorkerPool> {
  const { config, log, store, projects, queue, jobs } = deps;
  let handler = deps.jobHandler;
  if (!handler) {
    handler = (await import('./jobs/agent-handler.ts')).createAgentHandler(config, log, { pool: deps.worktrees });
  }
  const pool = new WorkerPool({ config, projects, queue, handler, log });
  jobs.onWork(() => pool.wake());
  jobs.onArchive((jobId) => pool.abort(jobId, 'archived'));
  cleanups.push(await store.dialect.listen('folio_jobs', () => pool.wake()));
  // Another process archived a job: stop its run here at once rather than at the next heartbeat.
  cleanups.push(await store.dialect.listen('folio_archive', (jobId) => pool.abort(jobId, 'archived')));
  pool.start(count);
  return pool;
}
