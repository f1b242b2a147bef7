// The optional weekly automatic job: for each project with a threshold set
// (`autoFixMinVisitors`), once per ISO week, start the broken-paths suggestion's job when a
// not-found path has that many server-derived identities (address and user agent, never a
// visitorId a client chose: no person looks before this job starts). Each process with agent
// workers checks hourly; the week is claimed by a row whose primary key is (project, week), so
// across processes exactly one claims it.
// A process that dies between the claim and the start loses that week's run (never runs it twice).
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import { CodedError } from '../errors.ts';
import type { Database } from '../store/schema.ts';
import { autoFixProjects, claimAutoRun, finishAutoRun } from '../store/suggestions.ts';
import type { SuggestionsService } from './service.ts';

const CHECK_EVERY_MS = 3_600_000;
const FIRST_CHECK_MS = 60_000;

/** The ISO 8601 week of a moment (UTC), e.g. 2026-W48. */
export function isoWeek(ms: number): string {
  const d = new Date(ms);
  const day = (d.getUTCDay() + 6) % 7; // Monday 0
  // The week's Thursday decides its year.
  const thursday = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate() - day + 3);
  const year = new Date(thursday).getUTCFullYear();
  const week = 1 + Math.floor((thursday - Date.UTC(year, 0, 1)) / (7 * 86_400_000));
  return `${year}-W${String(week).padStart(2, '0')}`;
}

export interface WeeklyOutcome {
  projectId: string;
  week: string;
  /** started, nothing_to_fix, or refused:<code> (a rate limit, an unconfigured model…). */
  outcome: string;
  jobId: string | null;
}

export class WeeklyAutoFix {
  readonly #db: Kysely<Database>;
  readonly #suggestions: SuggestionsService;
  readonly #log: Logger;
  #timer: NodeJS.Timeout | null = null;

  constructor(db: Kysely<Database>, suggestions: SuggestionsService, log: Logger) {
    this.#db = db;
    this.#suggestions = suggestions;
    this.#log = log;
  }

  /** Runs every project's automatic job that is due this week and not claimed yet; returns what this process did. */
  async runDue(now = Date.now()): Promise<WeeklyOutcome[]> {
    const week = isoWeek(now);
    const out: WeeklyOutcome[] = [];
    for (const p of await autoFixProjects(this.#db)) {
      if (!(await claimAutoRun(this.#db, p.id, week, now))) continue;
      const done = await this.#runOne(p.id, p.min, now);
      await finishAutoRun(this.#db, p.id, week, done.outcome, done.jobId);
      out.push({ projectId: p.id, week, ...done });
    }
    return out;
  }

  async #runOne(projectId: string, minVisitors: number, now: number): Promise<{ outcome: string; jobId: string | null }> {
    try {
      const list = await this.#suggestions.list(projectId, { minVisitors }, now, 'derived');
      const broken = list.suggestions.find((s) => s.kind === 'broken_paths');
      if (!broken) return { outcome: 'nothing_to_fix', jobId: null };
      const job = await this.#suggestions.startListed(projectId, list, broken, { automatic: true, now });
      this.#log.info({ projectId, jobId: job.id, paths: broken.paths.length }, 'weekly automatic broken-paths job started');
      return { outcome: 'started', jobId: job.id };
    } catch (err) {
      const code = err instanceof CodedError ? err.code : 'error';
      this.#log.warn({ projectId, code }, 'weekly automatic broken-paths job not started');
      return { outcome: `refused:${code}`, jobId: null };
    }
  }

  start(): void {
    const tick = () => void this.runDue().catch((err) => this.#log.warn({ err }, 'weekly automatic jobs: check failed'));
    const first = setTimeout(() => {
      tick();
      this.#timer = setInterval(tick, CHECK_EVERY_MS);
      this.#timer.unref();
    }, FIRST_CHECK_MS);
    first.unref();
    this.#timer = first;
  }

  stop(): void {
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }
}
