// What a code host is to triggers (jobs started by its webhooks), behind one interface: how it signs
// a delivery, what its events mean, how it names and links a change, and how its API lists what a
// change touched. Each host's adapter is in its own folder (github/triggers.ts, gitlab/triggers.ts)
// and is registered in index.ts; jobs/triggers/receiver.ts has no host branches.
import type { TriggerHost } from '../contracts/common.ts';
import { CodedError } from '../errors.ts';
import type { ApiConnection } from './types.ts';
import type { ReplyTarget, ReviewComment, ReviewEvent } from './reviews.ts';

export type { TriggerHost };

export type Headers = Record<string, string | string[] | undefined>;

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

export type ParsedDelivery = { type: 'change'; event: ChangeEvent } | { type: 'review'; event: ReviewEvent } | { type: 'ping' } | { type: 'ignored'; reason: string };

/** A payload that is not what its event header says: answered 400. */
export class MalformedPayload extends CodedError {
  constructor(message: string) {
    super('invalid_payload', message);
  }
}

export interface ChangedFile {
  path: string;
  /** The old path of a renamed file. */
  previousPath: string | null;
  status: 'added' | 'modified' | 'removed' | 'renamed';
  /** Unified diff hunks of the file, when the host gives them (not for binary or huge files). */
  patch: string | null;
}

/** Where a change is read from: which token and API to use are access.ts's to decide (pass a CodeHostAccess). */
export type ChangeSource = ApiConnection;

/** A pull request, or a range of commits. */
export type ChangeRef = { pull: number } | { base: string; head: string };

/** The most a host's answer may hold of one file's patch. */
export const MAX_PATCH = 100_000;

export interface TriggerAdapter {
  readonly host: TriggerHost;
  /** The host as the API reference names it: "GitLab", "GitHub (and GitHub Enterprise Server)". */
  readonly name: string;
  /** What its webhook route accepts and how it is verified (the API reference). */
  readonly description: string;
  /** The header naming the event (lower case), and as the host spells it, for messages. */
  readonly eventHeader: { name: string; spelled: string };
  /** Headers that carry the host's delivery id, in order of preference. */
  readonly deliveryIdHeaders: readonly string[];
  /**
   * True when the signature covers the body, so it can be checked only once the body is read (before
   * that, only its shape): Folio then reads less of such a body (FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT).
   */
  readonly signsBody: boolean;
  /** The header that carries the signature, as the host spells it. */
  readonly signatureHeader: string;
  /** Why a delivery's signature did not check out, in one sentence. */
  readonly signatureRefused: string;
  /** The signature as far as it can be checked before the body is read. */
  signatureHeaderOk(secret: string, headers: Headers): boolean;
  /** The signature of the whole delivery. */
  verify(secret: string, body: Buffer, headers: Headers): boolean;
  /** The delivery's payload, from its event header: checked, bounded, turned into one shape. */
  parse(event: string, payload: unknown): ParsedDelivery;
  /** A change by number in words: "pull request #12", "merge request !12". */
  changeName(number: number): string;
  /** The page of a change, built from the configured repository (never from the payload). */
  changeUrl(repositoryUrl: string, e: ChangeEvent): string;
  /** What a watched repository's path must look like on this host; null when `fullPath` is fine. */
  repositoryPathProblem(fullPath: string): string | null;
  /** The files a pull request or a range of commits changed (bounded; a host is not trusted either). */
  readChanges(source: ChangeSource, ref: ChangeRef, signal: AbortSignal): Promise<ChangedFile[]>;
  /** The page of a review comment, built from the configured repository. */
  reviewUrl(repositoryUrl: string, e: ReviewEvent): string;
  /** Why the reviewer may not steer a job (not allowed to change the repository); null when they may. */
  maySteer(source: ChangeSource, e: ReviewEvent, signal: AbortSignal): Promise<string | null>;
  /** Every comment of the review (GitHub reads a review's comments from its API); the payload's otherwise. */
  reviewComments(source: ChangeSource, e: ReviewEvent, signal: AbortSignal): Promise<ReviewComment[]>;
  /** Answers on the pull request, where `target` says. */
  reply(source: ChangeSource, number: number, target: ReplyTarget, body: string, signal: AbortSignal): Promise<void>;
}

/** A delivery header's first value. */
export function headerOf(headers: Headers, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}
