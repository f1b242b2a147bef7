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
  /** The operator's API base URL for this kind (config.codeHosts), or null to derive it from the repository URL. */
  apiUrl: string | null;
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

type Factory = (o: { repositoryUrl: string; token: string | null; apiUrl: string | null; fetch: typeof globalThis.fetch }) => CodeHost;

/** One implementation per kind (kinds.ts): a new kind without one does not compile. */
const FACTORIES: Record<CodeHostKind, Factory> = {
  github: createGitHub,
  gitlab: createGitLab,
  none: () => createPushOnly(),
};

/**
 * The code host of a project. Its API is derived from the repository URL, which a user set, so calls
 * go through the outbound address check; an API URL the operator configured (GITHUB_API_URL,
 * GITLAB_API_URL) is trusted as it is.
 */
export function createCodeHost(o: CodeHostOptions): CodeHost {
  return FACTORIES[o.kind]({ repositoryUrl: o.repositoryUrl, token: o.token, apiUrl: o.apiUrl, fetch: codeHostFetch(o.apiUrl, o.outbound, o.resolve) });
}
