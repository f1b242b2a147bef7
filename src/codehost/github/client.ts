// The one way Folio calls GitHub's API for a repository: one Octokit per connection (the API base,
// the token and the fetch access.ts chose, nothing logged), the repository's owner and name, and
// GitHub's failures as CodeHostErrors. Pull requests and trigger change listings use it; so does
// anything added later (review comments, comments on pull requests).
import { Octokit } from '@octokit/rest';
import { CodeHostError, hostSaid, parseRepositoryUrl, refusedCall, type ApiConnection } from '../types.ts';
import { refusalOf } from '../../net/guarded-fetch.ts';

/** api.github.com for github.com, `{origin}/api/v3` for GitHub Enterprise Server; an explicit API URL overrides both. */
export function githubApiBase(repositoryUrl: string, override?: string | null): string {
  if (override) return override.replace(/\/+$/, '');
  const { origin } = parseRepositoryUrl(repositoryUrl);
  const host = new URL(origin).hostname;
  return host === 'github.com' || host === 'www.github.com' ? 'https://api.github.com' : `${origin}/api/v3`;
}

export interface GitHubClient {
  readonly octokit: Octokit;
  /** The repository's owner and name, as Octokit's calls take them. */
  readonly repository: { owner: string; repo: string };
  /** Runs calls on the API; a failure (a refused address, an error answer) becomes a CodeHostError saying `what` failed. */
  call<T>(what: string, fn: (octokit: Octokit) => Promise<T>): Promise<T>;
}

export function githubClient(conn: ApiConnection): GitHubClient {
  const parts = parseRepositoryUrl(conn.repositoryUrl).fullPath.split('/');
  const octokit = new Octokit({
    baseUrl: githubApiBase(conn.repositoryUrl, conn.apiUrl),
    ...(conn.token ? { auth: conn.token } : {}),
    userAgent: 'folio',
    request: { fetch: conn.fetch },
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
  return {
    octokit,
    repository: { owner: parts[parts.length - 2], repo: parts[parts.length - 1] },
    async call(what, fn) {
      try {
        return await fn(octokit);
      } catch (err) {
        if (err instanceof CodeHostError) throw err;
        const refused = refusalOf(err);
        if (refused) throw refusedCall(refused);
        const e = err as { status?: number; message?: string; response?: { data?: { message?: string } } };
        const detail = e.response?.data?.message ?? e.message ?? String(err);
        throw new CodeHostError(`GitHub ${what} failed${e.status ? ` (HTTP ${e.status})` : ''}: ${hostSaid(String(detail))}`, e.status ?? null);
      }
    },
  };
}
