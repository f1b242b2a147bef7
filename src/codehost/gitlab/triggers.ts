// GitLab (gitlab.com and self-managed) as a source of triggers: deliveries carrying the secret itself
// in X-Gitlab-Token, Merge Request and Push hooks, merge requests by iid (!12), and the files of a
// change from the REST API v4 (merge_requests/{iid}/changes, repository/compare).
import { gitlabClient } from './client.ts';
import { CodeHostError, type ApiConnection } from '../types.ts';
import { sameSecret } from '../../util/same-secret.ts';
import { headerOf, MAX_PATCH, type ChangedFile, type ChangeKind, type ChangeRef, type ParsedDelivery, type TriggerAdapter } from '../triggers.ts';
import { gitlabMaySteer, gitlabReply, gitlabReviewComments, parseGitLabNote } from './reviews.ts';
import { boundedText as text, branchOfRef, pushChange, int, labelsOf, list, obj, sha, shaOrNull, str, ZERO_SHA, type Obj } from '../payload.ts';

/** `X-Gitlab-Token` carries the secret itself. */
export function verifyGitLab(secret: string, header: string | undefined): boolean {
  return header !== undefined && sameSecret(header, secret);
}

/** The `X-Gitlab-Event` header and the parsed body. */
function parseGitLab(event: string, body: unknown): ParsedDelivery {
  if (event === 'Note Hook') return parseGitLabNote(body);
  if (event !== 'Merge Request Hook' && event !== 'Push Hook') {
    return { type: 'ignored', reason: `GitLab event "${event.slice(0, 100)}" is not one Folio acts on (Merge Request Hook, Push Hook, Note Hook).` };
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
    const author = str(root, 'user_name', 'payload', { optional: true, max: 200 });
    return pushChange('gitlab', { fullPath, title: title || `Push to ${branch}`, author, before, after, commits });
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

function gitlabFile(f: unknown): ChangedFile | null {
  if (!f || typeof f !== 'object') return null;
  const o = f as Record<string, unknown>;
  const path = text(o.new_path, 4096);
  if (!path) return null;
  const status = o.new_file === true ? 'added' : o.deleted_file === true ? 'removed' : o.renamed_file === true ? 'renamed' : 'modified';
  const diff = text(o.diff, MAX_PATCH);
  return { path, previousPath: status === 'renamed' ? text(o.old_path, 4096) : null, status, patch: diff || null };
}

async function readChanges(conn: ApiConnection, ref: ChangeRef, signal: AbortSignal): Promise<ChangedFile[]> {
  const api = gitlabClient(conn);
  const answer = 'pull' in ref
    ? await api.request<Record<string, unknown>>(`/merge_requests/${ref.pull}/changes`, 'reading the change', { signal })
    : await api.request<Record<string, unknown>>('/repository/compare', 'reading the change', { query: { from: ref.base, to: ref.head }, signal });
  const list = answer && typeof answer === 'object' ? answer['pull' in ref ? 'changes' : 'diffs'] : undefined;
  if (!Array.isArray(list)) throw new CodeHostError('GitLab answered the change without a list of files.');
  return list.map(gitlabFile).filter((f): f is ChangedFile => f !== null);
}

export const gitlabTriggers: TriggerAdapter = {
  host: 'gitlab',
  name: 'GitLab',
  description:
    'Verified by `X-Gitlab-Token` (the project\'s trigger secret). Acts on `Merge Request Hook` (merge; open and new commits when enabled) and `Push Hook` to the default branch, and on `Note Hook` comments on Folio\'s own merge requests; a redelivery (`Idempotency-Key` / `X-Gitlab-Event-UUID`) or a replay of the same change under a new id does nothing.',
  eventHeader: { name: 'x-gitlab-event', spelled: 'X-Gitlab-Event' },
  deliveryIdHeaders: ['idempotency-key', 'x-gitlab-event-uuid'],
  signsBody: false,
  signatureHeader: 'X-Gitlab-Token',
  signatureRefused: "The X-Gitlab-Token header is missing or is not this project's secret.",
  signatureHeaderOk: (secret, headers) => verifyGitLab(secret, headerOf(headers, 'x-gitlab-token')),
  verify: (secret, _body, headers) => verifyGitLab(secret, headerOf(headers, 'x-gitlab-token')),
  parse: parseGitLab,
  changeName: (number) => `merge request !${number}`,
  changeUrl(repositoryUrl, e) {
    if (e.number !== null) return `${repositoryUrl}/-/merge_requests/${e.number}`;
    if (e.before && e.after) return `${repositoryUrl}/-/compare/${e.before}...${e.after}`;
    return e.after ? `${repositoryUrl}/-/commit/${e.after}` : repositoryUrl;
  },
  repositoryPathProblem: () => null,
  readChanges,
  reviewUrl: (repositoryUrl, e) => `${repositoryUrl}/-/merge_requests/${e.number}#${e.anchor}`,
  maySteer: gitlabMaySteer,
  reviewComments: gitlabReviewComments,
  reply: gitlabReply,
};
