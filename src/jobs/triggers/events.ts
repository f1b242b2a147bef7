// Webhook payloads from GitHub (and GitHub Enterprise Server) and GitLab, turned into one shape.
// Payloads are hostile even when signed: every field used is checked for its type and bounded, and
// nothing from them is used as a URL or a command (links are built from the configured repository).
import type { TriggerHost } from '../../store/schema.ts';
import { CodedError } from '../../errors.ts';

export type ChangeKind = 'pull_request_merged' | 'pull_request_opened' | 'pull_request_updated' | 'push';

export interface ChangeEvent {
  kind: ChangeKind;
  host: TriggerHost;
  /** Lower-cased path of the repository on its host (acme/api, group/sub/api). */
  fullPath: string;
  /** Pull request / merge request number (iid on GitLab); null for pushes. */
  number: number | null;
  title: string;
  description: string;
  author: string;
  labels: string[];
  /** Commits to compare (pushes, and new commits on a pull request); null when not given. */
  before: string | null;
  after: string | null;
  /** A merged pull request's merge commit (the head itself for a fast-forward merge); null otherwise or when not given. */
  mergeCommit: string | null;
  /** Files named by the payload itself (pushes), used when the API cannot be read. */
  payloadFiles: string[];
}

export type ParsedDelivery =
  | { type: 'change'; event: ChangeEvent }
  | { type: 'ping' }
  | { type: 'ignored'; reason: string };

/** A payload that is not what its event header says: answered 400. */
export class MalformedPayload extends CodedError {
  constructor(message: string) {
    super('invalid_payload', message);
  }
}

type Obj = Record<string, unknown>;
const SHA = /^[0-9a-f]{7,64}$/i;
const ZERO_SHA = /^0+$/;
const MAX_LABELS = 100;
const MAX_PAYLOAD_FILES = 3000;

function obj(v: unknown, where: string): Obj {
  if (v === null || typeof v !== 'object' || Array.isArray(v)) throw new MalformedPayload(`${where} is not an object.`);
  return v as Obj;
}
function str(o: Obj, key: string, where: string, opts: { optional?: boolean; max?: number } = {}): string {
  const v = o[key];
  if ((v === undefined || v === null) && opts.optional) return '';
  if (typeof v !== 'string') throw new MalformedPayload(`${where}.${key} is not a string.`);
  const max = opts.max ?? 100_000;
  // NUL is dropped at once: no store keeps it in text (PostgreSQL refuses it) and no name contains it.
  const clean = v.includes('\u0000') ? v.replaceAll('\u0000', '') : v;
  return clean.length > max ? clean.slice(0, max) : clean;
}
function int(o: Obj, key: string, where: string): number {
  const v = o[key];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 1) throw new MalformedPayload(`${where}.${key} is not a positive whole number.`);
  return v;
}
function sha(o: Obj, key: string, where: string, optional = false): string | null {
  const v = o[key];
  if ((v === undefined || v === null) && optional) return null;
  if (typeof v !== 'string' || !SHA.test(v)) throw new MalformedPayload(`${where}.${key} is not a commit id.`);
  return v.toLowerCase();
}
/** A commit id used only to tell changes apart: anything else is as if it were not given. */
function shaOrNull(o: Obj, key: string): string | null {
  const v = o[key];
  return typeof v === 'string' && SHA.test(v) && !ZERO_SHA.test(v) ? v.toLowerCase() : null;
}
function list(o: Obj, key: string, where: string): unknown[] {
  const v = o[key];
  if (v === undefined || v === null) return [];
  if (!Array.isArray(v)) throw new MalformedPayload(`${where}.${key} is not a list.`);
  return v;
}
function labelsOf(items: unknown[], field: 'name' | 'title'): string[] {
  const out: string[] = [];
  for (const item of items.slice(0, MAX_LABELS)) {
    if (item && typeof item === 'object' && typeof (item as Obj)[field] === 'string') out.push(((item as Obj)[field] as string).replaceAll('\u0000', '').slice(0, 200));
  }
  return out;
}
function filesOfCommits(commits: unknown[]): string[] {
  const files = new Set<string>();
  for (const c of commits) {
    if (!c || typeof c !== 'object') continue;
    for (const k of ['added', 'modified', 'removed']) {
      const v = (c as Obj)[k];
      if (!Array.isArray(v)) continue;
      for (const f of v) if (typeof f === 'string' && f.length <= 4096 && !f.includes('\u0000') && files.size < MAX_PAYLOAD_FILES) files.add(f);
    }
  }
  return [...files];
}
function commitLines(commits: unknown[]): string {
  return commits
    .slice(0, 50)
    .map((c) => (c && typeof c === 'object' && typeof (c as Obj).message === 'string' ? `- ${((c as Obj).message as string).replaceAll('\u0000', '').split('\n')[0].slice(0, 300)}` : ''))
    .filter(Boolean)
    .join('\n');
}
const branchOfRef = (ref: string) => (ref.startsWith('refs/heads/') ? ref.slice('refs/heads/'.length) : null);

/** GitHub: the `X-GitHub-Event` header and the parsed body. */
export function parseGitHub(event: string, body: unknown): ParsedDelivery {
  if (event === 'ping') return { type: 'ping' };
  if (event !== 'pull_request' && event !== 'push') return { type: 'ignored', reason: `GitHub event "${event.slice(0, 100)}" is not one Folio acts on (pull_request, push).` };
  const root = obj(body, 'payload');
  const repo = obj(root.repository, 'repository');
  const fullPath = str(repo, 'full_name', 'repository', { max: 500 }).toLowerCase();
  if (event === 'push') {
    const ref = str(root, 'ref', 'payload', { max: 1000 });
    const defaultBranch = str(repo, 'default_branch', 'repository', { optional: true, max: 500 }) || str(repo, 'master_branch', 'repository', { optional: true, max: 500 });
    const branch = branchOfRef(ref);
    if (root.deleted === true) return { type: 'ignored', reason: 'The push deleted a branch.' };
    if (!branch || branch !== defaultBranch) return { type: 'ignored', reason: `The push was to ${ref.slice(0, 200)}, not to the default branch.` };
    const commits = list(root, 'commits', 'payload');
    const head = root.head_commit && typeof root.head_commit === 'object' ? (root.head_commit as Obj) : null;
    const headMessage = head ? str(head, 'message', 'head_commit', { optional: true, max: 10_000 }) : '';
    const pusher = root.pusher && typeof root.pusher === 'object' ? str(root.pusher as Obj, 'name', 'pusher', { optional: true, max: 200 }) : '';
    const before = sha(root, 'before', 'payload');
    return {
      type: 'change',
      event: {
        kind: 'push',
        host: 'github',
        fullPath,
        number: null,
        title: headMessage.split('\n')[0] || `Push to ${branch}`,
        description: commitLines(commits),
        author: pusher,
        labels: [],
        before: before && !ZERO_SHA.test(before) ? before : null,
        after: sha(root, 'after', 'payload'),
        mergeCommit: null,
        payloadFiles: filesOfCommits(commits),
      },
    };
  }
  const action = str(root, 'action', 'payload', { max: 100 });
  const pr = obj(root.pull_request, 'pull_request');
  const number = int(pr, 'number', 'pull_request');
  let kind: ChangeKind;
  if (action === 'closed') {
    if (pr.merged !== true) return { type: 'ignored', reason: `Pull request #${number} was closed without being merged.` };
    kind = 'pull_request_merged';
  } else if (action === 'opened' || action === 'reopened' || action === 'ready_for_review') kind = 'pull_request_opened';
  else if (action === 'synchronize') kind = 'pull_request_updated';
  else return { type: 'ignored', reason: `Pull request action "${action}" starts nothing (closed and merged, opened, synchronize do).` };
  const user = pr.user && typeof pr.user === 'object' ? (pr.user as Obj) : {};
  const base = pr.base && typeof pr.base === 'object' ? (pr.base as Obj) : {};
  const head = pr.head && typeof pr.head === 'object' ? (pr.head as Obj) : {};
  return {
    type: 'change',
    event: {
      kind,
      host: 'github',
      fullPath,
      number,
      title: str(pr, 'title', 'pull_request', { max: 10_000 }),
      description: str(pr, 'body', 'pull_request', { optional: true, max: 100_000 }),
      author: str(user, 'login', 'pull_request.user', { optional: true, max: 200 }),
      labels: labelsOf(list(pr, 'labels', 'pull_request'), 'name'),
      before: kind === 'pull_request_updated' ? sha(root, 'before', 'payload', true) : sha(base, 'sha', 'pull_request.base', true),
      after: kind === 'pull_request_updated' ? sha(root, 'after', 'payload', true) : sha(head, 'sha', 'pull_request.head', true),
      mergeCommit: kind === 'pull_request_merged' ? shaOrNull(pr, 'merge_commit_sha') : null,
      payloadFiles: [],
    },
  };
}

/** GitLab: the `X-Gitlab-Event` header and the parsed body. */
export function parseGitLab(event: string, body: unknown): ParsedDelivery {
  if (event !== 'Merge Request Hook' && event !== 'Push Hook') {
    return { type: 'ignored', reason: `GitLab event "${event.slice(0, 100)}" is not one Folio acts on (Merge Request Hook, Push Hook).` };
  }
  const root = obj(body, 'payload');
  const project = obj(root.project, 'project');
  const fullPath = str(project, 'path_with_namespace', 'project', { max: 500 }).toLowerCase();
  if (event === 'Push Hook') {
    const ref = str(root, 'ref', 'payload', { max: 1000 });
    const branch = branchOfRef(ref);
    const defaultBranch = str(project, 'default_branch', 'project', { optional: true, max: 500 });
    const after = sha(root, 'after', 'payload');
    if (after && ZERO_SHA.test(after)) return { type: 'ignored', reason: 'The push deleted a branch.' };
    if (!branch || branch !== defaultBranch) return { type: 'ignored', reason: `The push was to ${ref.slice(0, 200)}, not to the default branch.` };
    const commits = list(root, 'commits', 'payload');
    const before = sha(root, 'before', 'payload');
    const last = commits.at(-1);
    const title = last && typeof last === 'object' && typeof (last as Obj).message === 'string' ? ((last as Obj).message as string).replaceAll('\u0000', '').split('\n')[0].slice(0, 1000) : '';
    return {
      type: 'change',
      event: {
        kind: 'push',
        host: 'gitlab',
        fullPath,
        number: null,
        title: title || `Push to ${branch}`,
        description: commitLines(commits),
        author: str(root, 'user_name', 'payload', { optional: true, max: 200 }),
        labels: [],
        before: before && !ZERO_SHA.test(before) ? before : null,
        after,
        mergeCommit: null,
        payloadFiles: filesOfCommits(commits),
      },
    };
  }
  const attrs = obj(root.object_attributes, 'object_attributes');
  const number = int(attrs, 'iid', 'object_attributes');
  const action = str(attrs, 'action', 'object_attributes', { optional: true, max: 100 });
  let kind: ChangeKind;
  if (action === 'merge') kind = 'pull_request_merged';
  else if (action === 'open' || action === 'reopen') kind = 'pull_request_opened';
  else if (action === 'update' && attrs.oldrev !== undefined && attrs.oldrev !== null) kind = 'pull_request_updated';
  else return { type: 'ignored', reason: `Merge request action "${action.slice(0, 100)}" starts nothing (merge, open, update with new commits do).` };
  const user = root.user && typeof root.user === 'object' ? (root.user as Obj) : {};
  const lastCommit = attrs.last_commit && typeof attrs.last_commit === 'object' ? (attrs.last_commit as Obj) : {};
  const labels = Array.isArray(root.labels) ? root.labels : list(attrs, 'labels', 'object_attributes');
  return {
    type: 'change',
    event: {
      kind,
      host: 'gitlab',
      fullPath,
      number,
      title: str(attrs, 'title', 'object_attributes', { max: 10_000 }),
      description: str(attrs, 'description', 'object_attributes', { optional: true, max: 100_000 }),
      author: str(user, 'username', 'user', { optional: true, max: 200 }),
      labels: labelsOf(labels, 'title'),
      before: kind === 'pull_request_updated' ? sha(attrs, 'oldrev', 'object_attributes', true) : null,
      after: sha(lastCommit, 'id', 'object_attributes.last_commit', true),
      mergeCommit: kind === 'pull_request_merged' ? shaOrNull(attrs, 'merge_commit_sha') : null,
      payloadFiles: [],
    },
  };
}

/**
 * What a change means, as a key unique per project: a replay of the same code change under a new
 * delivery id has the same one. A push: its repository and range (before..after). A merged pull
 * request: its number and merge commit (its head when the payload names no merge commit). An opened
 * pull request or new commits on one: its number and head — a reopening at the same head is the same
 * change. Null when the payload lacks the commit that identifies the change: only its delivery id
 * deduplicates it then.
 */
export function meaningKeyOf(e: ChangeEvent): string | null {
  const repository = `${e.host}:${e.fullPath}`;
  if (e.kind === 'push') return e.after ? `${repository}:push:${e.before ?? ''}..${e.after}` : null;
  const merged = e.mergeCommit ?? e.after;
  if (e.kind === 'pull_request_merged') return merged ? `${repository}#${e.number}:merged:${merged}` : null;
  return e.after ? `${repository}#${e.number}:head:${e.after}` : null;
}

/** The same meaning in words, for a duplicate's reason. */
export function meaningText(e: ChangeEvent): string {
  const what = e.host === 'github' ? `pull request #${e.number}` : `merge request !${e.number}`;
  const short = (commit: string | null) => (commit ?? '').slice(0, 12);
  if (e.kind === 'push') return `the push ${e.before ? `${short(e.before)}..` : ''}${short(e.after)}`;
  if (e.kind === 'pull_request_merged') return `${what} merged as ${short(e.mergeCommit ?? e.after)}`;
  return `${what} at ${short(e.after)}`;
}
