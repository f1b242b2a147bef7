// Which credential goes where, and how Folio reaches a repository's code host: the one owner of that
// policy. Every caller that talks to a code host for a repository (the agent's git and pull
// requests, trigger change listings, anything added later) asks `codeHostAccess` and uses only what
// it returns.
// - The operator's token (GITHUB_TOKEN, GITLAB_TOKEN) is bound to the host it was issued for: the
//   host of GITHUB_API_URL / GITLAB_API_URL when set, else github.com / gitlab.com. A repository on
//   any other host never receives it, whatever kind of host a user says it is.
// - A project's (or watched repository's) own token goes to its repository's host only: git there,
//   and the API derived from the repository URL, or the operator's API URL when that is the same host.
// - The operator's API URL is trusted as it is; an API derived from a URL a user typed is called
//   through the outbound address policy. No API call follows a redirect (the token would go along).
// - Links a code host answers with (a pull request's page) are shown to clients only when they are
//   http(s) URLs on the host's own web origin.
import { CODE_HOSTS, repositoryHost, type CodeHostKind } from './kinds.ts';
import { parseRepositoryUrl } from './types.ts';
import { CodedError } from '../errors.ts';
import type { OutboundPolicy, Resolve } from '../net/address-policy.ts';
import { createGuardedFetch } from '../net/guarded-fetch.ts';

/** The operator's settings per code host (config.codeHosts). */
export type OperatorCodeHosts = Readonly<Record<CodeHostKind, { readonly token: string | null; readonly apiUrl: string | null }>>;

export interface CodeHostAccess {
  readonly kind: CodeHostKind;
  readonly repositoryUrl: string;
  /** The token for git and the API: the repository's own, else the operator's on its host; null for none. */
  readonly token: string | null;
  /** The operator's API URL when the repository is on the operator's host; null to derive it from the repository URL. */
  readonly apiUrl: string | null;
  /** How to call the API: as it is for the operator's API URL, through the outbound address policy otherwise. */
  readonly fetch: typeof globalThis.fetch;
  /** Why the operator's token was not sent (a sentence), when there is one and the repository is elsewhere. */
  readonly withheld: string | null;
  /** The origins (`https://host[:port]`) that links from this code host may point at. */
  readonly webOrigins: readonly string[];
}

export interface AccessOptions {
  operator: OperatorCodeHosts;
  outbound: OutboundPolicy;
  /** Name resolution for the outbound check (tests). */
  resolve?: Resolve;
}

/** The hosts the operator's token of `kind` is for, and its web origin; null when the kind has no operator token. */
function operatorHome(kind: CodeHostKind, apiUrl: string | null): { hosts: string[]; webOrigin: string } | null {
  const env = CODE_HOSTS[kind].env;
  if (!env) return null;
  if (!apiUrl) return { hosts: [env.webHost, env.apiHost], webOrigin: `https://${env.webHost}` };
  const api = new URL(apiUrl);
  const host = api.hostname.toLowerCase();
  // GITHUB_API_URL=https://api.github.com names github.com's API: the token is for github.com too.
  if (host === env.apiHost) return { hosts: [env.webHost, env.apiHost], webOrigin: `https://${env.webHost}` };
  return { hosts: [host], webOrigin: api.origin };
}

function originOf(repositoryUrl: string): string | null {
  try {
    return parseRepositoryUrl(repositoryUrl).origin.toLowerCase();
  } catch {
    return null;
  }
}

/**
 * How to reach the code host of a repository: which token, which API and which links to believe.
 * `ownToken` is the project's (or watched repository's) own token, or null.
 */
export function codeHostAccess(kind: CodeHostKind, repositoryUrl: string, ownToken: string | null, o: AccessOptions): CodeHostAccess {
  const operator = o.operator[kind];
  const home = operatorHome(kind, operator.apiUrl);
  const host = repositoryHost(repositoryUrl);
  const onOperatorHost = home !== null && host !== null && home.hosts.includes(host);
  const apiUrl = onOperatorHost ? operator.apiUrl : null;
  const token = ownToken ?? (onOperatorHost ? operator.token : null);
  const envName = CODE_HOSTS[kind].env?.token;
  const withheld =
    token === null && operator.token && home && envName
      ? `The repository is on ${host ?? 'a local path'}, and the operator's ${envName} is only sent to ${home.hosts[0]}; give the project its own repository token for that host.`
      : null;
  const origin = originOf(repositoryUrl);
  const webOrigins = [...new Set([origin, onOperatorHost ? home.webOrigin : null].filter((x): x is string => x !== null))];
  return {
    kind,
    repositoryUrl,
    token,
    apiUrl,
    fetch: withoutRedirects(apiUrl ? globalThis.fetch : createGuardedFetch(o.outbound, { resolve: o.resolve })),
    withheld,
    webOrigins,
  };
}

/**
 * A fetch that fails on a redirect instead of following it: fetch drops `Authorization` on a
 * cross-origin redirect but not GitLab's `PRIVATE-TOKEN`, so no credential may ride a redirect.
 */
function withoutRedirects(base: typeof globalThis.fetch): typeof globalThis.fetch {
  return (input, init) => base(input, { ...init, redirect: 'error' });
}

export class LinkRefusedError extends CodedError {
  constructor(message: string) {
    super('code_host_link_refused', message);
  }
}

/**
 * A link a code host answered with, as clients may see it: an http(s) URL on one of the host's web
 * origins. Throws LinkRefusedError with a sentence otherwise (`javascript:`, another origin, credentials).
 */
export function checkedLink(access: Pick<CodeHostAccess, 'webOrigins'>, link: unknown): string {
  let url: URL | null = null;
  try {
    if (typeof link === 'string' && link.length <= 2048) url = new URL(link);
  } catch {
    url = null;
  }
  const ok =
    url !== null &&
    (url.protocol === 'https:' || url.protocol === 'http:') &&
    url.username === '' &&
    url.password === '' &&
    access.webOrigins.includes(url.origin.toLowerCase());
  if (!ok) {
    throw new LinkRefusedError(
      // The link itself is not repeated: it is the code host's text, and may be a script.
      `The code host answered with a link that is not on its own web address (${access.webOrigins.join(', ') || 'none known'}); no link is recorded.`,
    );
  }
  return url!.href;
}
