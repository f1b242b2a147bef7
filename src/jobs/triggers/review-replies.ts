// Folio's answers on pull requests for review comments (reviews.ts queues them): sent once the turn
// they report has ended — what it changed and the commit, or why it did nothing — or at once when
// nothing was started. Rows in the store, each claimed by one process before it is sent, so processes
// sharing the store never answer twice, and an answer survives a restart. Runs where workers run
// (where turns end), on a short timer and when told.
import type { Kysely } from 'kysely';
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { CodeHostError, triggerAdapter } from '../../codehost/index.ts';
import type { ReplyTarget } from '../../codehost/reviews.ts';
import type { Database } from '../../store/schema.ts';
import type { ProjectStore } from '../../store/projects.ts';
import { claimReply, dueReplies, settleReply, turnReport, type ReplyRow } from '../../store/review-replies.ts';
import { accessFor } from '../repository.ts';
import { turnAnswer } from './review-prompt.ts';

const EVERY_MS = 2_000;
const BATCH = 20;
/** Tries per answer before it is given up (the code host refusing or away). */
const MAX_ATTEMPTS = 5;

export interface ReviewRepliesDeps {
  db: Kysely<Database>;
  projects: ProjectStore;
  config: Config;
  log: Logger;
}

export class ReviewReplies {
  private readonly deps: ReviewRepliesDeps;
  #timer: NodeJS.Timeout | null = null;
  #running: Promise<void> | null = null;
  #again = false;

  constructor(deps: ReviewRepliesDeps) {
    this.deps = deps;
  }

  start(): void {
    this.#timer ??= setInterval(() => this.wake(), EVERY_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
    await this.#running;
  }

  /** Sends what is due now; a wake during a round runs one more round after it. */
  wake(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = this.sendDue()
      .catch((err: unknown) => this.deps.log.warn({ err }, 'review answers could not be sent'))
      .finally(() => {
        this.#running = null;
        if (this.#again) {
          this.#again = false;
          this.wake();
        }
      });
  }

  /** One round: every due answer this process claims. */
  async sendDue(): Promise<void> {
    for (const row of await dueReplies(this.deps.db, BATCH)) {
      if (await claimReply(this.deps.db, row)) await this.#send(row);
    }
  }

  async #send(row: ReplyRow): Promise<void> {
    const { db, projects, config, log } = this.deps;
    try {
      const project = await projects.get(row.project_id);
      if (!project) return await settleReply(db, row.id, 'failed', 'The project is gone.');
      const text = row.text ?? turnAnswer(await turnReport(db, row.job_id, Number(row.seq)));
      const access = accessFor(config, { codeHost: project.code_host, repositoryUrl: row.repository_url, repoToken: projects.secrets(project).repoToken });
      const target = JSON.parse(row.target) as ReplyTarget;
      await triggerAdapter(row.host).reply(access, Number(row.pr_number), target, text, AbortSignal.timeout(config.triggers.apiTimeoutMs));
      await settleReply(db, row.id, 'sent', null);
    } catch (err) {
      const message = err instanceof CodeHostError ? err.message : (err as Error).message;
      const last = row.attempts + 1 >= MAX_ATTEMPTS;
      log.warn({ replyId: row.id, jobId: row.job_id, attempt: row.attempts + 1, err: message }, last ? 'review answer given up' : 'review answer failed; tried again later');
      await settleReply(db, row.id, last ? 'failed' : 'pending', message);
    }
  }
}
