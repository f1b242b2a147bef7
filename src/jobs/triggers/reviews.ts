// Review comments on Folio's pull requests become follow-up turns of the job that opened them
// (docs/triggers.md, "Review comments"). For a verified review delivery: only the project's docs
// repository, only a pull request a job opened (its stored link and branch), never Folio's own or a
// bot's comments, only reviewers allowed to change the repository, only what the project's setting
// lets act (a review requesting changes or a comment naming the agent; or every comment). A review or
// comment acts once (its meaning claimed under the project's lock with the follow-up); the answer on
// the pull request is queued with it and sent when the turn ends (review-replies.ts).
import type { Logger } from 'pino';
import type { Config } from '../../config.ts';
import { CodedError } from '../../errors.ts';
import { CodeHostError, parseRepositoryUrl, triggerAdapter, type CodeHostAccess } from '../../codehost/index.ts';
import { mentions, type ReplyTarget, type ReviewComment, type ReviewEvent } from '../../codehost/reviews.ts';
import type { ProjectStore, ProjectRow } from '../../store/projects.ts';
import type { TriggerStore } from '../../store/triggers.ts';
import { jobOfPullRequest, queueReply } from '../../store/review-replies.ts';
import type { JobsService } from '../service.ts';
import { accessFor } from '../repository.ts';
import { reviewPrompt, withMarker } from './review-prompt.ts';
import { refusedByJobs, type Answer } from './receiver.ts';
import type { DeliveryRecord } from '../../store/triggers.ts';

export interface ReviewCommentsDeps {
  store: TriggerStore;
  projects: ProjectStore;
  jobs: JobsService;
  config: Config;
  log: Logger;
  /** Told when an answer was queued (the replies are sent at once where they are sent). */
  queued?: () => void;
}

type Seen = { repository: string; changeUrl: string };
/** The delivery as the receiver recorded it so far. */
export type DeliveryBase = Pick<DeliveryRecord, 'projectId' | 'host' | 'deliveryId' | 'event'>;

/** Where the answer goes: one line comment's thread; the pull request for several comments. */
function targetOf(e: ReviewEvent, comments: ReviewComment[]): ReplyTarget {
  if (comments.length > 1) return { kind: 'pull_request' };
  if (comments.length === 1 && comments[0].thread !== undefined && comments[0].path) return { kind: 'thread', commentId: comments[0].thread };
  return e.target;
}

const PR_STATE_TEXT = { merged: 'merged', closed: 'closed' } as const;

export class ReviewComments {
  private readonly deps: ReviewCommentsDeps;
  constructor(deps: ReviewCommentsDeps) {
    this.deps = deps;
  }

  /** Whether the delivery comes from the project's docs repository on its code host. */
  #docsRepository(project: ProjectRow, e: ReviewEvent): boolean {
    if (project.code_host !== e.host) return false;
    try {
      return parseRepositoryUrl(project.repository_url).fullPath.toLowerCase() === e.fullPath;
    } catch {
      return false;
    }
  }

  async act(base: DeliveryBase, e: ReviewEvent, answer: Answer) {
    const { projectId } = base;
    const deliveryKey = `${base.host}:${base.deliveryId}`;
    const project = await this.deps.projects.get(projectId);
    if (!project || !this.#docsRepository(project, e)) return answer({ outcome: 'ignored', reason: `Repository ${e.fullPath} is not this project's docs repository; review comments act only on Folio's pull requests there.` });
    const seen: Seen = { repository: project.repository_url, changeUrl: triggerAdapter(e.host).reviewUrl(project.repository_url.replace(/\.git$/, ''), e) };
    if (e.fromFolioOrBot) return answer({ ...seen, outcome: 'ignored', reason: "Folio's own comment (or a bot's) never steers a job." });
    const suffix = e.host === 'github' ? `/pull/${e.number}` : `/merge_requests/${e.number}`;
    const job = await jobOfPullRequest(this.deps.store.db, projectId, suffix, e.branch);
    const name = triggerAdapter(e.host).changeName(e.number);
    if (!job) return answer({ ...seen, outcome: 'ignored', reason: `${name} is not one Folio opened for a job.` });
    const meaningKey = `review:${e.host}:${e.fullPath}#${e.number}:${e.key}`;
    const earlier = await this.#handledBefore(projectId, deliveryKey, meaningKey);
    if (earlier) return answer({ ...seen, outcome: 'duplicate', reason: earlier, jobId: job.id });

    const access = accessFor(this.deps.config, { codeHost: project.code_host, repositoryUrl: project.repository_url, repoToken: this.deps.projects.secrets(project).repoToken });
    const signal = AbortSignal.timeout(this.deps.config.triggers.apiTimeoutMs);
    let refused: string | null;
    try {
      refused = await triggerAdapter(e.host).maySteer(access, e, signal);
    } catch (err) {
      const why = err instanceof CodeHostError ? err.message : 'the code host could not be reached';
      return answer({ ...seen, outcome: 'failed', reason: `Whether @${e.reviewer} may change the repository could not be checked: ${why}. Redeliver when the code host answers.`, jobId: job.id }, { code: 'code_host_error' });
    }
    if (refused) return answer({ ...seen, outcome: 'ignored', reason: refused, jobId: job.id });

    const comments = await this.#comments(access, e, signal);
    const mention = project.review_mention || '@folio';
    const acts = e.requestsChanges || project.review_comments === 'every' || [e.body, ...comments.map((c) => c.body)].some((t) => mentions(t, mention));
    if (!acts) return answer({ ...seen, outcome: 'ignored', reason: `The comment neither requests changes nor names ${mention}; this project acts on those only.`, jobId: job.id });

    const reply = { project_id: projectId, job_id: job.id, host: e.host, repository_url: project.repository_url, pr_number: e.number, target: JSON.stringify(targetOf(e, comments)) };
    const origin = { kind: 'review' as const, reviewer: e.reviewer, url: seen.changeUrl };
    let result;
    try {
      result = await this.#follow(base, job.id, e, { deliveryKey, meaningKey, reply, seen, prompt: reviewPrompt(e, comments, seen.changeUrl), origin, name });
    } catch (err) {
      const refusal = refusedByJobs(err);
      if (refusal) return answer({ ...seen, ...refusal.record, jobId: job.id }, refusal.failure);
      throw err;
    }
    this.deps.queued?.();
    if (result.duplicate) return answer({ ...seen, outcome: 'duplicate', reason: result.reason, jobId: job.id });
    return answer({ ...seen, outcome: result.outcome, reason: result.reason, jobId: job.id });
  }

  /** Every comment of the review; the delivery's own when the API cannot be read (it still acts on what it has). */
  async #comments(access: CodeHostAccess, e: ReviewEvent, signal: AbortSignal): Promise<ReviewComment[]> {
    try {
      return await triggerAdapter(e.host).reviewComments(access, e, signal);
    } catch (err) {
      this.deps.log.warn({ err: (err as Error).message, host: e.host, number: e.number }, 'review comments could not be read; acting on the delivery');
      return e.comments;
    }
  }

  async #handledBefore(projectId: string, deliveryKey: string, meaningKey: string, db = this.deps.store.db): Promise<string | null> {
    const { store } = this.deps;
    if (await store.acted(db, projectId, [deliveryKey])) return 'This delivery was handled before; nothing was done again.';
    if (await store.meaningHandled(db, projectId, meaningKey)) return 'This review comment was handled before, under another delivery id; nothing was done again.';
    return null;
  }

  /**
   * Under the project's lock: unless a copy of this comment acted first, queues the follow-up with its
   * origin (or, on a closed or merged pull request or an archived job, only an answer saying so), the
   * answer, and the delivery's record.
   */
  async #follow(base: DeliveryBase, jobId: string, e: ReviewEvent, r: { deliveryKey: string; meaningKey: string; reply: Omit<Parameters<typeof queueReply>[1], 'seq' | 'text'>; seen: Seen; prompt: string; origin: { kind: 'review'; reviewer: string; url: string }; name: string }) {
    const { store, jobs } = this.deps;
    const { projectId } = base;
    return jobs.transact(projectId, async (trx, ops) => {
      const prior = await this.#handledBefore(projectId, r.deliveryKey, r.meaningKey, trx);
      if (prior || !(await store.claimMeaning(trx, projectId, r.meaningKey))) return { duplicate: true as const, reason: prior ?? 'This review comment was handled before; nothing was done again.' };
      await store.settleMeaning(trx, projectId, r.meaningKey, jobId);
      const stopped = e.prState !== 'open' ? `${r.name} is ${PR_STATE_TEXT[e.prState]}` : null;
      let seq: number | null = null;
      if (!stopped) seq = await ops.followUp(jobId, r.prompt, r.origin).then((j) => j.seq, (err: unknown) => {
        if (err instanceof CodedError && err.code === 'job_archived') return null;
        throw err;
      });
      const why = stopped ?? (seq === null ? `Job ${jobId} is archived` : null);
      await queueReply(trx, { ...r.reply, seq, text: why ? withMarker(`${why}; Folio starts nothing for comments on it.`) : null });
      if (why) return { duplicate: false as const, outcome: 'ignored' as const, reason: `${why}: answered on the pull request, nothing started.` };
      const reason = `Sent the review by @${e.reviewer} to job ${jobId} as a follow-up.`;
      // Recorded with the follow-up (the receiver records the other outcomes): a redelivery finds it.
      await store.recordDelivery(trx, { ...base, outcome: 'followed_up', statusCode: 200, reason, ...r.seen, jobId, dedupeKey: r.deliveryKey });
      return { duplicate: false as const, outcome: 'followed_up' as const, reason };
    });
  }
}
