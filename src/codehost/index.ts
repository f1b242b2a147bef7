// The registry of code hosts: one line per host, naming its adapter (pull requests, and triggers for
// hosts that send webhooks). Picks the implementation for a repository or a delivery, and builds a
// host's CodeHost on its pull-request calls: finding, the upsert and the link check are the same for all.
import { githubPullRequests } from './github/pull-requests.ts';
import { githubTriggers } from './github/triggers.ts';
import { gitlabPullRequests } from './gitlab/pull-requests.ts';
import { gitlabTriggers } from './gitlab/triggers.ts';
import type { ApiConnection, CodeHost, PullRequestApi, PullRequestInput } from './types.ts';
import type { CodeHostKind } from './kinds.ts';
import type { TriggerHost } from '../contracts/common.ts';
import type { ChangedFile, ChangeRef, ChangeSource, TriggerAdapter } from './triggers.ts';
import { checkedLink, LinkRefusedError, type CodeHostAccess } from './access.ts';
import type { PullRequestRef } from './types.ts';

export type { CodeHost, PullRequestInput, PullRequestRef } from './types.ts';
export { CodeHostError, parseRepositoryUrl } from './types.ts';
export { codeHostAccess, type CodeHostAccess } from './access.ts';
export type { ChangedFile, ChangeEvent, ChangeRef, TriggerAdapter } from './triggers.ts';

interface Adapter {
  /** Its pull requests; null for a host that has none (the branch is pushed, nothing opened). */
  pullRequests: ((conn: ApiConnection) => PullRequestApi) | null;
  /** For the hosts that can start jobs by webhook (contracts/common.ts, TriggerHost). */
  triggers?: TriggerAdapter;
}

/** One adapter per kind (kinds.ts): a new kind without one does not compile. */
const ADAPTERS = {
  github: { pullRequests: githubPullRequests, triggers: githubTriggers },
  gitlab: { pullRequests: gitlabPullRequests, triggers: gitlabTriggers },
  none: { pullRequests: null },
} as const satisfies Record<CodeHostKind, Adapter> & Record<TriggerHost, Required<Adapter>>;

/** The trigger side of a host that sends webhooks. */
export function triggerAdapter(host: TriggerHost): TriggerAdapter {
  return ADAPTERS[host].triggers;
}

/** The most files of one change Folio reads. */
const MAX_CHANGED_FILES = 300;

/** The files a pull request or a range of commits changed, at most 300, within `timeoutMs`. */
export async function readChange(host: TriggerHost, src: ChangeSource & { timeoutMs: number }, ref: ChangeRef, signal?: AbortSignal): Promise<ChangedFile[]> {
  const timeout = AbortSignal.timeout(src.timeoutMs);
  const files = await triggerAdapter(host).readChanges(src, ref, signal ? AbortSignal.any([signal, timeout]) : timeout);
  return files.slice(0, MAX_CHANGED_FILES);
}

/**
 * The code host of a repository, reached as `access` says (access.ts: which token, which API, which
 * fetch). A pull request link it answers with reaches the job only when it is on the host's web
 * origin; otherwise the ref carries no link and says why.
 */
export function createCodeHost(access: CodeHostAccess): CodeHost {
  const factory: Adapter['pullRequests'] = ADAPTERS[access.kind].pullRequests;
  if (!factory) return { kind: access.kind, findOpen: async () => null, upsert: async () => null, pullRequestState: async () => null };
  const api = factory(access);
  const linked = (pr: { url: string; number: number }, created: boolean): PullRequestRef => {
    try {
      return { url: checkedLink(access, pr.url), number: pr.number, created };
    } catch (err) {
      if (err instanceof LinkRefusedError) return { url: null, linkRefused: err.message, number: pr.number, created };
      throw err;
    }
  };
  const findOpen = async (branch: string, baseBranch: string, signal?: AbortSignal) => {
    const pr = await api.find(branch, baseBranch, 'open', signal);
    return pr && linked(pr, false);
  };
  /** Reuses the branch's open pull request (its description updated) or opens one; a race with another run reuses the winner's. */
  const upsert = async (input: PullRequestInput, signal?: AbortSignal) => {
    const existing = await findOpen(input.branch, input.baseBranch, signal);
    if (existing) {
      await api.describe(existing.number, input.body, signal);
      return existing;
    }
    try {
      return linked(await api.open(input, signal), true);
    } catch (err) {
      const again = api.alreadyOpen(err) ? await findOpen(input.branch, input.baseBranch, signal) : null;
      if (again) return again;
      throw err;
    }
  };
  return {
    kind: access.kind,
    findOpen,
    upsert,
    async pullRequestState(branch, baseBranch, signal) {
      const pr = await api.find(branch, baseBranch, 'any', signal);
      return pr && { state: pr.state, mergedAt: pr.mergedAt };
    },
  };
}
