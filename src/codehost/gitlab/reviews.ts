// GitLab's comments on merge requests: `Note Hook` deliveries read into a ReviewEvent (one note, its
// file and lines for a diff note, its discussion); who may steer a job (access level Developer or above,
// asked of the API and cached briefly); answers in the note's discussion or on the merge request. All
// on the one GitLab client (client.ts).
import { LRUCache } from 'lru-cache';
import { gitlabClient } from './client.ts';
import { CodeHostError, type ApiConnection } from '../types.ts';
import type { ParsedDelivery } from '../triggers.ts';
import { int, obj, str, type Obj } from '../payload.ts';
import { commentPath, commentText, FOLIO_MARKER, hunkAt, lineOf, type ReplyTarget, type ReviewComment, type ReviewEvent } from '../reviews.ts';

/** Developer: the least access level that may push, so the least that may steer a job. */
const DEVELOPER = 30;
const DISCUSSION_ID = /^[0-9a-f]{8,64}$/i;
/** Access levels by API, project and user for a minute: a review's notes come in a burst. */
const levels = new LRUCache<string, { level: number | null }>({ max: 5000, ttl: 60_000 });

const objOrEmpty = (v: unknown): Obj => (v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {});

/** A diff note's file and lines; nothing for a note on the whole merge request. */
function positionOf(attrs: Obj): Pick<ReviewComment, 'path' | 'startLine' | 'line'> {
  const p = objOrEmpty(attrs.position);
  const path = commentPath(p.new_path ?? p.old_path, 'object_attributes.position.new_path');
  const start = objOrEmpty(objOrEmpty(p.line_range).start);
  return { path, line: lineOf(p.new_line) ?? lineOf(p.old_line), startLine: lineOf(start.new_line) ?? lineOf(start.old_line) };
}

/** The `Note Hook` payload: a note on a merge request. */
export function parseGitLabNote(body: unknown): ParsedDelivery {
  const root = obj(body, 'payload');
  const fullPath = str(obj(root.project, 'project'), 'path_with_namespace', 'project', { max: 500 }).toLowerCase();
  const attrs = obj(root.object_attributes, 'object_attributes');
  if (attrs.noteable_type !== 'MergeRequest') return { type: 'ignored', reason: 'The note is not on a merge request.' };
  if (attrs.system === true) return { type: 'ignored', reason: 'A system note (written by GitLab) starts nothing.' };
  const action = str(attrs, 'action', 'object_attributes', { optional: true, max: 100 });
  if (action && action !== 'create') return { type: 'ignored', reason: `Note action "${action.slice(0, 100)}" starts nothing (create does).` };
  const id = int(attrs, 'id', 'object_attributes');
  const text = commentText(attrs, 'note');
  const mr = obj(root.merge_request, 'merge_request');
  const state = str(mr, 'state', 'merge_request', { optional: true, max: 50 });
  const user = obj(root.user, 'user');
  const discussion = str(attrs, 'discussion_id', 'object_attributes', { optional: true, max: 100 });
  const threaded = (attrs.type === 'DiffNote' || attrs.type === 'DiscussionNote') && DISCUSSION_ID.test(discussion);
  const target: ReplyTarget = threaded ? { kind: 'discussion', discussionId: discussion } : { kind: 'pull_request' };
  const comment: ReviewComment = { id, body: text, ...positionOf(attrs), diffHunk: null };
  const event: ReviewEvent = {
    host: 'gitlab',
    fullPath,
    number: int(mr, 'iid', 'merge_request'),
    branch: str(mr, 'source_branch', 'merge_request', { optional: true, max: 1000 }) || null,
    prState: state === 'merged' ? 'merged' : state === 'closed' || state === 'locked' ? 'closed' : 'open',
    key: `note:${id}`,
    reviewId: null,
    reviewer: str(user, 'username', 'user', { max: 200 }),
    reviewerId: int(user, 'id', 'user'),
    association: null,
    fromFolioOrBot: user.bot === true || text.includes(FOLIO_MARKER),
    requestsChanges: false,
    body: '',
    comments: [comment],
    anchor: `note_${id}`,
    target,
  };
  return { type: 'review', event };
}

/** The user's access level on the project (members/all: inherited too); null when not a member. */
async function accessLevel(conn: ApiConnection, userId: number, signal: AbortSignal): Promise<number | null> {
  const key = `${conn.apiUrl ?? ''} ${conn.repositoryUrl} ${userId}`;
  const cached = levels.get(key);
  if (cached) return cached.level;
  let level: number | null;
  try {
    const member = await gitlabClient(conn).request<Obj>(`/members/all/${userId}`, 'reading the member', { signal });
    level = typeof member?.access_level === 'number' ? member.access_level : null;
  } catch (err) {
    if (!(err instanceof CodeHostError && err.status === 404)) throw err;
    level = null;
  }
  levels.set(key, { level });
  return level;
}

export async function gitlabMaySteer(conn: ApiConnection, e: ReviewEvent, signal: AbortSignal): Promise<string | null> {
  if (e.reviewerId === null) return 'The note names no user.';
  const level = await accessLevel(conn, e.reviewerId, signal);
  if (level !== null && level >= DEVELOPER) return null;
  return `@${e.reviewer} may not change the repository (${level === null ? 'not a member' : `access level ${level}`}); only Developer (30) or above steer a job.`;
}

/** The note with the diff hunk it sits on, read from the merge request's changes (GitLab's note events carry none). */
export async function gitlabReviewComments(conn: ApiConnection, e: ReviewEvent, signal: AbortSignal): Promise<ReviewComment[]> {
  const [note] = e.comments;
  if (!note?.path || note.line === null) return e.comments;
  const answer = await gitlabClient(conn).request<Obj>(`/merge_requests/${e.number}/changes`, 'reading the merge request changes', { signal });
  const files = Array.isArray(answer?.changes) ? (answer.changes as unknown[]) : [];
  const file = files.find((f): f is Obj => !!f && typeof f === 'object' && (f as Obj).new_path === note.path);
  const diff = typeof file?.diff === 'string' ? file.diff : null;
  return [{ ...note, diffHunk: diff ? hunkAt(diff, note.line) : null }];
}

export async function gitlabReply(conn: ApiConnection, number: number, target: ReplyTarget, body: string, signal: AbortSignal): Promise<void> {
  const path = target.kind === 'discussion' ? `/merge_requests/${number}/discussions/${encodeURIComponent(target.discussionId)}/notes` : `/merge_requests/${number}/notes`;
  await gitlabClient(conn).request(path, 'answering on the merge request', { method: 'POST', body: { body }, signal });
}
