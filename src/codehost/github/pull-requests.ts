// GitHub and GitHub Enterprise Server pull requests through Octokit. The API is api.github.com for
// github.com and `{origin}/api/v3` for GHES; an explicit API URL overrides both.
import { Octokit } from '@octokit/rest';
import { CodeHostError, hostSaid, hostTime, parseRepositoryUrl, refusedCall, type CodeHost, type PullRequestInput, type PullRequestRef, type PullRequestState } from '../types.ts';
import { refusalOf } from '../../net/guarded-fetch.ts';

export interface GitHubOptions {
  repositoryUrl: string;
  token: string | null;
  apiUrl?: string | null;
  fetch: typeof globalThis.fetch;
}

export function githubApiBase(repositoryUrl: string, override?: string | null): string {
  if (override) return override.replace(/\/+$/, '');
  const { origin } = parseRepositoryUrl(repositoryUrl);
  const host = new URL(origin).hostname;
  return host === 'github.com' || host === 'www.github.com' ? 'https://api.github.com' : `${origin}/api/v3`;
}

function wrap(err: unknown, what: string): CodeHostError {
  const refused = refusalOf(err);
  if (refused) return refusedCall(refused);
  const e = err as { status?: number; message?: string; response?: { data?: { message?: string } } };
  const detail = e.response?.data?.message ?? e.message ?? String(err);
  return new CodeHostError(`GitHub ${what} failed${e.status ? ` (HTTP ${e.status})` : ''}: ${hostSaid(String(detail))}`, e.status ?? null);
}

export function createGitHub(opts: GitHubOptions): CodeHost {
  const { fullPath } = parseRepositoryUrl(opts.repositoryUrl);
  const parts = fullPath.split('/');
  const owner = parts[parts.length - 2];
  const repo = parts[parts.length - 1];
  const octokit = new Octokit({
    baseUrl: githubApiBase(opts.repositoryUrl, opts.apiUrl),
    ...(opts.token ? { auth: opts.token } : {}),
    userAgent: 'folio-agent',
    request: { fetch: opts.fetch },
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });

  async function findOpen(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestRef | null> {
    try {
      const { data } = await octokit.rest.pulls.list({
        owner,
        repo,
        state: 'open',
        head: `${owner}:${branch}`,
        base: baseBranch,
        per_page: 10,
        request: { signal },
      });
      const pr = data.find((p) => p.head.ref === branch);
      return pr ? { url: pr.html_url, number: pr.number, created: false } : null;
    } catch (err) {
      throw wrap(err, 'listing pull requests');
    }
  }

  async function pullRequestState(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestState | null> {
    try {
      const { data } = await octokit.rest.pulls.list({ owner, repo, state: 'all', head: `${owner}:${branch}`, base: baseBranch, per_page: 10, request: { signal } });
      const pr = data.find((p) => p.head.ref === branch);
      if (!pr) return null;
      const mergedAt = hostTime(pr.merged_at);
      return { state: mergedAt !== null ? 'merged' : pr.state === 'closed' ? 'closed' : 'open', mergedAt };
    } catch (err) {
      throw wrap(err, 'reading the pull request');
    }
  }

  return {
    kind: 'github',
    findOpen,
    pullRequestState,
    async upsert(input: PullRequestInput, signal?: AbortSignal) {
      const existing = await findOpen(input.branch, input.baseBranch, signal);
      if (existing) {
        try {
          await octokit.rest.pulls.update({ owner, repo, pull_number: existing.number, body: input.body, request: { signal } });
        } catch (err) {
          throw wrap(err, 'updating the pull request');
        }
        return existing;
      }
      try {
        const { data } = await octokit.rest.pulls.create({
          owner,
          repo,
          head: input.branch,
          base: input.baseBranch,
          title: input.title,
          body: input.body,
          draft: input.draft,
          request: { signal },
        });
        return { url: data.html_url, number: data.number, created: true };
      } catch (err) {
        // Another run opened it in the meantime: GitHub answers 422 "A pull request already exists".
        if ((err as { status?: number }).status === 422) {
          const again = await findOpen(input.branch, input.baseBranch, signal);
          if (again) return again;
        }
        throw wrap(err, 'opening the pull request');
      }
    },
  };
}
