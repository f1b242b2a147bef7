// A job's events as the API reads them: pages, and the batches and live notices of open streams,
// with the cap on open streams per caller and per project (one client cannot hold every connection
// or poll the store without end). The HTTP layer only writes what this service hands it.
import type { Kysely } from 'kysely';
import type { Database } from '../store/schema.ts';
import type { JobEvent } from '../contracts/jobs.ts';
import type { JobsService } from './service.ts';
import { listJobEvents } from './events.ts';
import { CodedError } from '../errors.ts';

/** How many events a stream reads from the store at a time. */
export const STREAM_BATCH = 500;

export class JobEventsService {
  private readonly db: Kysely<Database>;
  private readonly jobs: JobsService;
  private readonly limits: { perKey: number; perProject: number };
  private readonly openBy = new Map<string, number>();

  constructor(db: Kysely<Database>, jobs: JobsService, limits: { perKey: number; perProject: number }) {
    this.db = db;
    this.jobs = jobs;
    this.limits = limits;
  }

  /** A page of the job's events after `after` (job_not_found for another project's or an unknown job). */
  async page(projectId: string, jobId: string, after: number, limit: number): Promise<{ events: JobEvent[]; hasMore: boolean; nextAfter: number }> {
    await this.jobs.get(projectId, jobId);
    const events = await listJobEvents(this.db, jobId, after, limit + 1);
    const page = events.slice(0, limit);
    return { events: page, hasMore: events.length > limit, nextAfter: page.at(-1)?.id ?? after };
  }

  /** The next batch of a stream, from the store: exact order, and events other processes wrote too. */
  batch(jobId: string, after: number): Promise<JobEvent[]> {
    return listJobEvents(this.db, jobId, after, STREAM_BATCH);
  }

  /** Calls `fn` when this process records an event of the job; returns the unsubscribe. */
  onEvent(jobId: string, fn: () => void): () => void {
    return this.jobs.events.subscribe(jobId, fn);
  }

  /** Whether the job is still there (a stream ends when it is gone). */
  exists(projectId: string, jobId: string): Promise<boolean> {
    return this.jobs.exists(projectId, jobId);
  }

  /**
   * Counts a new stream of `caller` (an API key or an operator) on the job's project; throws
   * too_many_streams over either cap. Returns the release, safe to call more than once.
   */
  async open(caller: string, projectId: string, jobId: string): Promise<() => void> {
    await this.jobs.get(projectId, jobId);
    const project = `project:${projectId}`;
    const { perKey, perProject } = this.limits;
    const byCaller = this.openBy.get(caller) ?? 0;
    const byProject = this.openBy.get(project) ?? 0;
    if (byCaller >= perKey || byProject >= perProject) {
      const which = byCaller >= perKey ? `${perKey} per API key` : `${perProject} per project`;
      throw new CodedError('too_many_streams', `Too many live event streams are open (at most ${which}); close one or read the events as pages.`, {
        retryAfterSeconds: 5,
      });
    }
    this.openBy.set(caller, byCaller + 1);
    this.openBy.set(project, byProject + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      for (const key of [caller, project]) {
        const n = (this.openBy.get(key) ?? 1) - 1;
        if (n <= 0) this.openBy.delete(key);
        else this.openBy.set(key, n);
      }
    };
  }
}
