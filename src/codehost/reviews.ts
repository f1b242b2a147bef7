// Review comments on a pull request as one shape for every host: who wrote them, where (file and
// lines, the diff hunk), whether the review asks for changes, and where an answer goes. Payloads are
// hostile even when signed: every field is checked and bounded here (payload.ts's readers), links
// are built from the configured repository, never taken from the payload.
import type { TriggerHost } from '../contracts/common.ts';
import { MalformedPayload } from './triggers.ts';
import { boundedText, type Obj } from './payload.ts';

/** The marker Folio puts in its own answers: a comment carrying it never acts. */
export const FOLIO_MARKER = '<!-- folio:review-reply -->';

/** The most comments of one review read, and the most of each one's text. */
export const MAX_REVIEW_COMMENTS = 50;
export const MAX_COMMENT_CHARS = 20_000;
const MAX_HUNK_CHARS = 5_000;

export interface ReviewComment {
  id: number;
  body: string;
  /** The file it sits on (a repository path), its line range and the diff hunk; null for a comment on the whole pull request. */
  path: string | null;
  startLine: number | null;
  line: number | null;
  diffHunk: string | null;
  /** GitHub: the first comment of its thread, where a reply to it goes. */
  thread?: number;
}

/** Where Folio's answer goes: the thread of a line comment, a GitLab discussion, or the pull request itself. */
export type ReplyTarget = { kind: 'thread'; commentId: number } | { kind: 'discussion'; discussionId: string } | { kind: 'pull_request' };

export interface ReviewEvent {
  host: TriggerHost;
  fullPath: string;
  /** The pull request (merge request iid). */
  number: number;
  /** Its source branch, when the payload names it. */
  branch: string | null;
  prState: 'open' | 'closed' | 'merged';
  /** What acts once, whatever the deliveries: `review:<id>` (all its comments), `comment:<id>`, `note:<id>`. */
  key: string;
  /** A GitHub review whose comments are read from the API (its deliveries come one by one). */
  reviewId: number | null;
  reviewer: string;
  /** GitLab's user id (its access level is asked of the API); null on GitHub. */
  reviewerId: number | null;
  /** GitHub's author_association; null on GitLab. */
  association: string | null;
  /** A bot account or Folio's own marker: never acts. */
  fromFolioOrBot: boolean;
  requestsChanges: boolean;
  /** The review's own text (or the lone comment's, which is then also in `comments`). */
  body: string;
  comments: ReviewComment[];
  /** The fragment of the pull request's page that shows it: `discussion_r12`, `note_34`. */
  anchor: string;
  target: ReplyTarget;
}

/** A comment's text: bounded, NUL dropped. */
export function commentText(o: Obj, key: string): string {
  return (boundedText(o[key], MAX_COMMENT_CHARS) ?? '').replaceAll('\u0000', '');
}

/** A repository path a comment names: relative, no `..`, no control characters; anything else is refused. */
export function commentPath(v: unknown, where: string): string | null {
  if (v === undefined || v === null || v === '') return null;
  // eslint-disable-next-line no-control-regex
  if (typeof v !== 'string' || v.length > 4096 || v.startsWith('/') || /[\u0000-\u001f\u007f]/.test(v) || v.split(/[\\/]/).includes('..')) {
    throw new MalformedPayload(`${where} is not a path inside the repository.`);
  }
  return v;
}

/** A line number, or null when absent or not a positive whole number. */
export function lineOf(v: unknown): number | null {
  return typeof v === 'number' && Number.isSafeInteger(v) && v > 0 ? v : null;
}

export function hunkOf(v: unknown): string | null {
  return boundedText(v, MAX_HUNK_CHARS)?.replaceAll('\u0000', '') || null;
}

/** Whether `text` names the agent: the mention as a word (not inside a longer name or an address). */
export function mentions(text: string, mention: string): boolean {
  const escaped = mention.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`(^|[^\\w@.-])${escaped}(?![\\w-])`, 'i').test(text);
}

/**
 * The hunk of a file's unified diff that shows `line` of the new side, up to that line (as GitHub's
 * `diff_hunk` is); null when no hunk holds it.
 */
export function hunkAt(patch: string, line: number): string | null {
  const lines = patch.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const head = /^@@ -\d+(?:,\d+)? \+(\d+)(?:,(\d+))? @@/.exec(lines[i]);
    if (!head) continue;
    const start = Number(head[1]);
    const count = head[2] === undefined ? 1 : Number(head[2]);
    if (line < start || line >= start + Math.max(count, 1)) continue;
    let at = start - 1;
    let end = i;
    for (let j = i + 1; j < lines.length && !lines[j].startsWith('@@') && at < line; j++) {
      if (!lines[j].startsWith('-')) at++;
      end = j;
    }
    return hunkOf(lines.slice(i, end + 1).join('\n'));
  }
  return null;
}
