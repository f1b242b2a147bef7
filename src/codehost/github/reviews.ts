// GitHub's review comments on pull requests: `pull_request_review` (submitted), `pull_request_review_comment`
// (created) and `issue_comment` (created, on a pull request) read into a ReviewEvent; a review's comments
// read from the API (GitHub delivers them one by one); who may steer a job (author_association); answers
// in a review comment's thread or on the pull request. All on the one GitHub client (client.ts).
import { githubClient } from './client.ts';
import { CodeHostError, type ApiConnection } from '../types.ts';
import type { ParsedDelivery } from '../triggers.ts';
import { int, obj, str, type Obj } from '../payload.ts';
import { commentPath, commentText, FOLIO_MARKER, hunkOf, lineOf, MAX_REVIEW_COMMENTS, type ReplyTarget, type ReviewComment, type ReviewEvent } from '../reviews.ts';

export const GITHUB_REVIEW_EVENTS: readonly string[] = ['pull_request_review', 'pull_request_review_comment', 'issue_comment'];
/** The associations of people allowed to change the repository. */
const MAY_STEER = ['OWNER', 'MEMBER', 'COLLABORATOR'];

type Common = Pick<ReviewEvent, 'host' | 'fullPath' | 'number' | 'branch' | 'prState'>;

/** Who wrote it, and whether it is Folio's own answer or a bot's. */
function authorOf(o: Obj, where: string, body: string): Pick<ReviewEvent, 'reviewer' | 'reviewerId' | 'association' | 'fromFolioOrBot'> {
  const user = o.user && typeof o.user === 'object' ? (o.user as Obj) : {};
  return {
    reviewer: str(user, 'login', `${where}.user`, { optional: true, max: 200 }),
    reviewerId: null,
    association: str(o, 'author_association', where, { optional: true, max: 50 }).toUpperCase() || null,
    fromFolioOrBot: user.type === 'Bot' || body.includes(FOLIO_MARKER),
  };
}

/** A review comment of a payload or of the API's answer. */
export function githubComment(c: Obj, where: string): ReviewComment & { thread: number } {
  const id = int(c, 'id', where);
  const replyTo = typeof c.in_reply_to_id === 'number' && Number.isSafeInteger(c.in_reply_to_id) && c.in_reply_to_id > 0 ? c.in_reply_to_id : null;
  return {
    id,
    body: commentText(c, 'body'),
    path: commentPath(c.path, `${where}.path`),
    startLine: lineOf(c.start_line),
    line: lineOf(c.line) ?? lineOf(c.original_line),
    diffHunk: hunkOf(c.diff_hunk),
    // Replies go to the thread's first comment: GitHub takes no reply to a reply.
    thread: replyTo ?? id,
  };
}

function issueComment(root: Obj, fullPath: string, action: string): ParsedDelivery {
  if (action !== 'created') return { type: 'ignored', reason: `Comment action "${action.slice(0, 100)}" starts nothing (created does).` };
  const issue = obj(root.issue, 'issue');
  if (!issue.pull_request || typeof issue.pull_request !== 'object') return { type: 'ignored', reason: 'The comment is on an issue, not on a pull request.' };
  const number = int(issue, 'number', 'issue');
  const comment = obj(root.comment, 'comment');
  const id = int(comment, 'id', 'comment');
  const body = commentText(comment, 'body');
  const merged = typeof (issue.pull_request as Obj).merged_at === 'string';
  const common: Common = { host: 'github', fullPath, number, branch: null, prState: merged ? 'merged' : issue.state === 'closed' ? 'closed' : 'open' };
  const only: ReviewComment = { id, body, path: null, startLine: null, line: null, diffHunk: null };
  const event: ReviewEvent = { ...common, ...authorOf(comment, 'comment', body), key: `comment:${id}`, reviewId: null, requestsChanges: false, body, comments: [only], anchor: `issuecomment-${id}`, target: { kind: 'pull_request' } };
  return { type: 'review', event };
}

/** The `X-GitHub-Event` of a review comment and its parsed body. */
export function parseGitHubReview(event: string, body: unknown): ParsedDelivery {
  const root = obj(body, 'payload');
  const fullPath = str(obj(root.repository, 'repository'), 'full_name', 'repository', { max: 500 }).toLowerCase();
  const action = str(root, 'action', 'payload', { max: 100 });
  if (event === 'issue_comment') return issueComment(root, fullPath, action);
  const pr = obj(root.pull_request, 'pull_request');
  const number = int(pr, 'number', 'pull_request');
  const head = pr.head && typeof pr.head === 'object' ? (pr.head as Obj) : {};
  const merged = pr.merged === true || typeof pr.merged_at === 'string';
  const common: Common = { host: 'github', fullPath, number, branch: str(head, 'ref', 'pull_request.head', { optional: true, max: 1000 }) || null, prState: merged ? 'merged' : pr.state === 'closed' ? 'closed' : 'open' };
  if (event === 'pull_request_review') {
    if (action !== 'submitted') return { type: 'ignored', reason: `Review action "${action.slice(0, 100)}" starts nothing (submitted does).` };
    const review = obj(root.review, 'review');
    const id = int(review, 'id', 'review');
    const text = commentText(review, 'body');
    const state = str(review, 'state', 'review', { optional: true, max: 50 }).toLowerCase();
    const e: ReviewEvent = { ...common, ...authorOf(review, 'review', text), key: `review:${id}`, reviewId: id, requestsChanges: state === 'changes_requested', body: text, comments: [], anchor: `pullrequestreview-${id}`, target: { kind: 'pull_request' } };
    return { type: 'review', event: e };
  }
  if (action !== 'created') return { type: 'ignored', reason: `Review comment action "${action.slice(0, 100)}" starts nothing (created does).` };
  const raw = obj(root.comment, 'comment');
  const comment = githubComment(raw, 'comment');
  const reviewId = typeof raw.pull_request_review_id === 'number' && Number.isSafeInteger(raw.pull_request_review_id) && raw.pull_request_review_id > 0 ? raw.pull_request_review_id : null;
  const e: ReviewEvent = {
    ...common,
    ...authorOf(raw, 'comment', comment.body),
    // A comment of a review acts with its review, once.
    key: reviewId ? `review:${reviewId}` : `comment:${comment.id}`,
    reviewId,
    requestsChanges: false,
    body: '',
    comments: [comment],
    anchor: `discussion_r${comment.id}`,
    target: { kind: 'thread', commentId: comment.thread },
  };
  return { type: 'review', event: e };
}

export async function githubMaySteer(_conn: ApiConnection, e: ReviewEvent): Promise<string | null> {
  if (e.association && MAY_STEER.includes(e.association)) return null;
  return `@${e.reviewer} may not change the repository (author association ${e.association ?? 'unknown'}); only ${MAY_STEER.join(', ')} comments steer a job.`;
}

/** A review's comments from the API (at most 50); the payload's own for a lone comment. */
export async function githubReviewComments(conn: ApiConnection, e: ReviewEvent, signal: AbortSignal): Promise<ReviewComment[]> {
  if (e.reviewId === null) return e.comments;
  const { call, repository } = githubClient(conn);
  return call('reading the review comments', async (octokit) => {
    const { data } = await octokit.rest.pulls.listCommentsForReview({ ...repository, pull_number: e.number, review_id: e.reviewId!, per_page: MAX_REVIEW_COMMENTS, request: { signal } });
    if (!Array.isArray(data)) throw new CodeHostError('GitHub answered the review comments with something that is not a list.');
    return data.slice(0, MAX_REVIEW_COMMENTS).map((c, i) => githubComment(c as unknown as Obj, `review comment ${i + 1}`));
  });
}

export async function githubReply(conn: ApiConnection, number: number, target: ReplyTarget, body: string, signal: AbortSignal): Promise<void> {
  const { call, repository } = githubClient(conn);
  await call('answering on the pull request', async (octokit) => {
    if (target.kind === 'thread') await octokit.rest.pulls.createReplyForReviewComment({ ...repository, pull_number: number, comment_id: target.commentId, body, request: { signal } });
    else await octokit.rest.issues.createComment({ ...repository, issue_number: number, body, request: { signal } });
  });
}
