// The registry of code hosts: one line per host, naming its adapter (pull requests, and triggers for
// hosts that send webhooks). Picks the implementation for a repository or a delivery.
import { createGitHub } from './github/pull-requests.ts';
import { githubTriggers } from './github/triggers.ts';
import { createGitLab } from './gitlab/pull-requests.ts';
import { gitlabTriggers } from './gitlab/triggers.ts';
import { createPushOnly } from './push-only.ts';
import type { CodeHost } from './types.ts';
import type { CodeHostKind } from './kinds.ts';
import type { TriggerHost } from '../contracts/common.ts';
import type { ChangedFile, ChangeRef, ChangeSource, TriggerAdapter } from './triggers.ts';
import { checkedLink, LinkRefusedError, type CodeHostAccess } from './access.ts';
import type { PullRequestRef } from './types.ts';

export type { CodeHost, PullRequestInput, PullRequestRef } from './types.ts';
export { CodeHostError, parseRepositoryUrl } from './types.ts';
export { codeHostAccess, type CodeHostAccess } from './access.ts';
export type { ChangedFile, ChangeEvent, ChangeRef, TriggerAdapter } from './triggers.ts';

type Factory = (o: { repositoryUrl: string; token: string | null; apiUrl: string | null; fetch: typeof globalThis.fetch }) => CodeHost;

interface Adapter {
  pullRequests: Factory;
  /** For the hosts that can start jobs by webhook (contracts/common.ts, TriggerHost). */
  triggers?: TriggerAdapter;
}

/** One adapter per kind (kinds.ts): a new kind without one does not compile. */
const ADAPTERS = {
  github: { pullRequests: createGitHub, triggers: githubTriggers },
  gitlab: { pullRequests: createGitLab, triggers: gitlabTriggers },
  none: { pullRequests: () => createPushOnly() },
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
  const host = ADAPTERS[access.kind].pullRequests({ repositoryUrl: access.repositoryUrl, token: access.token, apiUrl: access.apiUrl, fetch: access.fetch });
  const checked = (ref: PullRequestRef | null): PullRequestRef | null => {
    if (!ref || ref.url === null) return ref;
    try {
      return { ...ref, url: checkedLink(access, ref.url) };
    } catch (err) {
      if (err instanceof LinkRefusedError) return { ...ref, url: null, linkRefused: err.message };
      throw err;
    }
  };
  return {
    kind: host.kind,
    findOpen: async (branch, baseBranch, signal) => checked(await host.findOpen(branch, baseBranch, signal)),
    upsert: async (input, signal) => checked(await host.upsert(input, signal)),
    pullRequestState: (branch, baseBranch, signal) => host.pullRequestState(branch, baseBranch, signal),
  };
}
