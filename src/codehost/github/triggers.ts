// GitHub (and GitHub Enterprise Server) as a source of triggers: deliveries signed with
// X-Hub-Signature-256 (an HMAC of the whole body), pull_request and push events, pull requests by
// number, and the files of a change from the REST API (pulls/{n}/files, compare).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { githubClient } from './client.ts';
import { CodeHostError, type ApiConnection } from '../types.ts';
import { headerOf, MAX_PATCH, type ChangedFile, type ChangeKind, type ChangeRef, type ParsedDelivery, type TriggerAdapter } from '../triggers.ts';
import { GITHUB_REVIEW_EVENTS, githubMaySteer, githubReply, githubReviewComments, parseGitHubReview } from './reviews.ts';
import { boundedText as text, branchOfRef, pushChange, int, labelsOf, list, obj, sha, shaOrNull, str, type Obj } from '../payload.ts';

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const MAX_FILES = 300;

/** `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body>`, compared in constant time. */
export function verifyGitHub(secret: string, rawBody: Buffer, header: string | undefined): boolean {
  const m = header === undefined ? null : SIGNATURE.exec(header.trim());
  if (!m) return false;
  const expected = createHmac('sha256', secret).update(rawBody).digest();
  return timingSafeEqual(expected, Buffer.from(m[1], 'hex'));
}

/** The `X-GitHub-Event` header and the parsed body. */
function parseGitHub(event: string, body: unknown): ParsedDelivery {
  if (event === 'ping') return { type: 'ping' };
  if (GITHUB_REVIEW_EVENTS.includes(event)) return parseGitHubReview(event, body);
  if (event !== 'pull_request' && event !== 'push') return { type: 'ignored', reason: `GitHub event "${event.slice(0, 100)}" is not one Folio acts on (pull_request, push, and review comments).` };
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
    return pushChange('github', { fullPath, title: headMessage.split('\n')[0] || `Push to ${branch}`, author: pusher, before, after: sha(root, 'after', 'payload'), commits });
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

function githubFile(f: unknown): ChangedFile | null {
  if (!f || typeof f !== 'object') return null;
  const o = f as Record<string, unknown>;
  const path = text(o.filename, 4096);
  if (!path) return null;
  const status = o.status === 'added' ? 'added' : o.status === 'removed' ? 'removed' : o.status === 'renamed' ? 'renamed' : 'modified';
  return { path, previousPath: text(o.previous_filename, 4096), status, patch: text(o.patch, MAX_PATCH) };
}

async function readChanges(conn: ApiConnection, ref: ChangeRef, signal: AbortSignal): Promise<ChangedFile[]> {
  const { call, repository } = githubClient(conn);
  return call('reading the change', async (octokit) => {
    if ('pull' in ref) {
      const files: ChangedFile[] = [];
      for (let page = 1; page <= MAX_FILES / 100; page++) {
        const { data } = await octokit.rest.pulls.listFiles({ ...repository, pull_number: ref.pull, per_page: 100, page, request: { signal } });
        if (!Array.isArray(data)) throw new CodeHostError('GitHub answered the pull request files with something that is not a list.');
        for (const f of data) {
          const file = githubFile(f);
          if (file) files.push(file);
        }
        if (data.length < 100) break;
      }
      return files;
    }
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({ ...repository, basehead: `${ref.base}...${ref.head}`, request: { signal } });
    const list = (data as { files?: unknown }).files;
    if (list !== undefined && !Array.isArray(list)) throw new CodeHostError('GitHub answered the comparison with files that are not a list.');
    return (list ?? []).map(githubFile).filter((f): f is ChangedFile => f !== null);
  });
}

export const githubTriggers: TriggerAdapter = {
  host: 'github',
  name: 'GitHub (and GitHub Enterprise Server)',
  description:
    'Verified by `X-Hub-Signature-256` (HMAC-SHA256 of the raw body with the project\'s trigger secret). Acts on `pull_request` (merged; opened and new commits when enabled) and `push` to the default branch, and on review comments on Folio\'s own pull requests (`pull_request_review`, `pull_request_review_comment`, `issue_comment`); a redelivery (`X-GitHub-Delivery`) or a replay of the same change under a new id does nothing. Bodies over `FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT` (read before the signature can be checked) get 413.',
  eventHeader: { name: 'x-github-event', spelled: 'X-GitHub-Event' },
  deliveryIdHeaders: ['x-github-delivery'],
  signsBody: true,
  signatureHeader: 'X-Hub-Signature-256',
  signatureRefused: "The X-Hub-Signature-256 header is missing or is not the HMAC-SHA256 of the body with this project's secret.",
  signatureHeaderOk: (_secret, headers) => SIGNATURE.test(headerOf(headers, 'x-hub-signature-256')?.trim() ?? ''),
  verify: (secret, body, headers) => verifyGitHub(secret, body, headerOf(headers, 'x-hub-signature-256')),
  parse: parseGitHub,
  changeName: (number) => `pull request #${number}`,
  changeUrl(repositoryUrl, e) {
    if (e.number !== null) return `${repositoryUrl}/pull/${e.number}`;
    if (e.before && e.after) return `${repositoryUrl}/compare/${e.before}...${e.after}`;
    return e.after ? `${repositoryUrl}/commit/${e.after}` : repositoryUrl;
  },
  repositoryPathProblem: (fullPath) => (fullPath.split('/').length === 2 ? null : 'a GitHub repository address is https://host/owner/name.'),
  readChanges,
  reviewUrl: (repositoryUrl, e) => `${repositoryUrl}/pull/${e.number}#${e.anchor}`,
  maySteer: githubMaySteer,
  reviewComments: githubReviewComments,
  reply: githubReply,
};
