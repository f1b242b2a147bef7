// Picks the code host implementation for a project.
import { createGitHub } from './github.ts';
import { createGitLab } from './gitlab.ts';
import { createPushOnly } from './push-only.ts';
import type { CodeHost } from './types.ts';
import type { CodeHostKind } from './kinds.ts';
import type { OutboundPolicy, Resolve } from '../net/address-policy.ts';
import { createGuardedFetch } from '../net/guarded-fetch.ts';

export type { CodeHost, PullRequestInput, PullRequestRef } from './types.ts';
export { CodeHostError, parseRepositoryUrl } from './types.ts';

export interface CodeHostOptions {
  kind: CodeHostKind;
  repositoryUrl: string;
  token: string | null;
  githubApiUrl: string | null;
  gitlabApiUrl: string | null;
  /** Networks besides public ones the API derived from the repository URL may be in (config.outbound). */
  outbound: OutboundPolicy;
  /** Name resolution for the outbound check (tests). */
  resolve?: Resolve;
}

/**
 * How to call a code host's API: as it is when the operator set the API URL, else (the API derived
 * from a repository URL a user set) through the outbound address check.
 */
export function codeHostFetch(apiUrl: string | null, outbound: OutboundPolicy, resolve?: Resolve): typeof globalThis.fetch {
  return apiUrl ? globalThis.fetch : createGuardedFetch(outbound, { resolve });
}

/**
 * The code host of a project. Its API is derived from the repository URL, which a user set, so calls
 * go through the outbound address check; an API URL the operator configured (GITHUB_API_URL,
 * GITLAB_API_URL) is trusted as it is.
 */
export function createCodeHost(o: CodeHostOptions): CodeHost {
  const apiUrl = o.kind === 'github' ? o.githubApiUrl : o.gitlabApiUrl;
  const fetch = codeHostFetch(apiUrl, o.outbound, o.resolve);
  switch (o.kind) {
    case 'github':
      return createGitHub({ repositoryUrl: o.repositoryUrl, token: o.token, apiUrl, fetch });
    case 'gitlab':
      return createGitLab({ repositoryUrl: o.repositoryUrl, token: o.token, apiUrl, fetch });
    default:
      return createPushOnly();
  }
}
