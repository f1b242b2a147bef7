// One small interface over code hosts: find or open the pull request of a job branch, and keep its
// description up to date. Each host implements the few calls of PullRequestApi on its one API client
// (github/client.ts, gitlab/client.ts); index.ts builds the CodeHost on it, the upsert once for all.
import type { CodeHostKind } from './kinds.ts';
import { CodedError } from '../errors.ts';

export interface PullRequestInput {
  /** The job branch (head). */
  branch: string;
  /** The branch the pull request merges into. */
  baseBranch: string;
  title: string;
  body: string;
  draft: boolean;
}

export interface PullRequestRef {
  /** Its page; null when the host answered with a link off its own web origin (see `linkRefused`). */
  url: string | null;
  /** Why the link the host gave was not recorded. */
  linkRefused?: string;
  number: number;
  /** True when this call opened it; false when an open one from the branch was reused. */
  created: boolean;
}

export interface CodeHost {
  readonly kind: CodeHostKind;
  /** The open pull request from `branch`, or null. */
  findOpen(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestRef | null>;
  /** Reuses the open pull request from the branch (updating its description) or opens one. Null for push-only. */
  upsert(input: PullRequestInput, signal?: AbortSignal): Promise<PullRequestRef | null>;
  /** The newest pull request from `branch` in any state; null when there is none (or the host has none). */
  pullRequestState(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestState | null>;
}

/** How a host's API is reached for a repository: the token, API URL and fetch access.ts chose. */
export interface ApiConnection {
  repositoryUrl: string;
  token: string | null;
  /** The operator's API URL; null derives it from the repository URL. */
  apiUrl: string | null;
  /** How to call the API (the outbound address check unless the operator set apiUrl). */
  fetch: typeof globalThis.fetch;
}

/** A pull request found on the host, with its state. */
export interface FoundPullRequest extends PullRequestState {
  url: string;
  number: number;
}

/** What each host with pull requests does on its API; the CodeHost (its upsert too) is built on it. */
export interface PullRequestApi {
  /** The newest pull request from `branch` into `baseBranch`: open ones only, or in any state. */
  find(branch: string, baseBranch: string, which: 'open' | 'any', signal?: AbortSignal): Promise<FoundPullRequest | null>;
  /** Replaces its description. */
  describe(number: number, body: string, signal?: AbortSignal): Promise<void>;
  /** Opens one (a draft when asked). */
  open(input: PullRequestInput, signal?: AbortSignal): Promise<{ url: string; number: number }>;
  /** Whether opening failed because one from the branch is open already (another run got there first). */
  alreadyOpen(err: unknown): boolean;
}

export interface PullRequestState {
  state: 'open' | 'merged' | 'closed';
  /** When it was merged (ms since the epoch); null unless merged. */
  mergedAt: number | null;
}

/** A timestamp from a code host's answer; null when absent or not a date. */
export function hostTime(value: unknown): number | null {
  if (typeof value !== 'string') return null;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : null;
}

export class CodeHostError extends CodedError {
  /** The code host's HTTP status, when it answered. */
  readonly status: number | null;
  constructor(message: string, status: number | null = null, code = 'code_host_error') {
    super(code, message);
    this.status = status;
  }
}

/**
 * What a code host said, fit to repeat in a job's error: one line, no control characters, at most
 * 300 characters (its responses are untrusted input like any other).
 */
export function hostSaid(text: string): string {
  const line = text.replace(/[\u0000-\u001f\u007f-\u009f\u2028\u2029]+/g, ' ').replace(/\s+/g, ' ').trim();
  return line.length > 300 ? `${line.slice(0, 300)}…` : line;
}

/** The error for a call the outbound address policy refused (the API host derived from the repository URL). */
export function refusedCall(refusal: Error): CodeHostError {
  return new CodeHostError(`The code host's API: ${refusal.message}`, null, 'code_host_address_refused');
}

export interface RepoLocation {
  /** `https://host[:port]` */
  origin: string;
  /** Path of the repository without leading slash or `.git`, e.g. `acme/docs` or `group/sub/docs`. */
  fullPath: string;
}

/** Parses https://host/owner/repo(.git) and git@host:owner/repo(.git). */
export function parseRepositoryUrl(url: string): RepoLocation {
  const scp = /^[\w.-]+@([^:/]+):(.+?)(?:\.git)?\/?$/.exec(url);
  if (scp) return { origin: `https://${scp[1]}`, fullPath: scp[2] };
  let u: URL;
  try {
    u = new URL(url);
  } catch {
    throw new CodeHostError(`The repository URL "${url}" is not a URL a code host can be derived from.`);
  }
  const fullPath = u.pathname.replace(/^\/+/, '').replace(/\/+$/, '').replace(/\.git$/, '');
  if (!fullPath.includes('/')) throw new CodeHostError(`The repository URL "${url}" does not name an owner and a repository.`);
  const origin = u.protocol === 'ssh:' ? `https://${u.hostname}` : `${u.protocol}//${u.host}`;
  return { origin, fullPath };
}
