// Picks the code host implementation for a repository.
import { createGitHub } from './github.ts';
import { createGitLab } from './gitlab.ts';
import { createPushOnly } from './push-only.ts';
import type { CodeHost } from './types.ts';
import type { CodeHostKind } from './kinds.ts';
import { checkedLink, LinkRefusedError, type CodeHostAccess } from './access.ts';
import type { PullRequestRef } from './types.ts';

export type { CodeHost, PullRequestInput, PullRequestRef } from './types.ts';
export { CodeHostError, parseRepositoryUrl } from './types.ts';
export { codeHostAccess, type CodeHostAccess } from './access.ts';

type Factory = (o: { repositoryUrl: string; token: string | null; apiUrl: string | null; fetch: typeof globalThis.fetch }) => CodeHost;

/** One implementation per kind (kinds.ts): a new kind without one does not compile. */
const FACTORIES: Record<CodeHostKind, Factory> = {
  github: createGitHub,
  gitlab: createGitLab,
  none: () => createPushOnly(),
};

/**
 * The code host of a repository, reached as `access` says (access.ts: which token, which API, which
 * fetch). A pull request link it answers with reaches the job only when it is on the host's web
 * origin; otherwise the ref carries no link and says why.
 */
export function createCodeHost(access: CodeHostAccess): CodeHost {
  const host = FACTORIES[access.kind]({ repositoryUrl: access.repositoryUrl, token: access.token, apiUrl: access.apiUrl, fetch: access.fetch });
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
  };
}
