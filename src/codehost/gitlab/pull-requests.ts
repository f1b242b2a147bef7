// GitLab merge requests (gitlab.com and self-managed) over the REST API v4.
import { CodeHostError, hostSaid, hostTime, parseRepositoryUrl, refusedCall, type CodeHost, type PullRequestInput, type PullRequestRef, type PullRequestState } from '../types.ts';
import { refusalOf } from '../../net/guarded-fetch.ts';

export interface GitLabOptions {
  repositoryUrl: string;
  token: string | null;
  apiUrl?: string | null;
  fetch: typeof globalThis.fetch;
}

export function gitlabApiBase(repositoryUrl: string, override?: string | null): string {
  if (override) return override.replace(/\/+$/, '');
  return `${parseRepositoryUrl(repositoryUrl).origin}/api/v4`;
}

interface MergeRequest {
  iid: number;
  web_url: string;
  source_branch: string;
  state?: string;
  merged_at?: string | null;
}

type ApiCall = <T>(method: string, url: string, body: unknown, what: string, signal?: AbortSignal) => Promise<T>;

/** One GitLab API call: the token in PRIVATE-TOKEN, refusals and error answers as CodeHostErrors. */
function apiCaller(opts: GitLabOptions): ApiCall {
  return async function call<T>(method: string, url: string, body: unknown, what: string, signal?: AbortSignal): Promise<T> {
    let res: Response;
    try {
      res = await opts.fetch(url, {
        method,
        headers: {
          accept: 'application/json',
          'user-agent': 'folio-agent',
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
          ...(opts.token ? { 'PRIVATE-TOKEN': opts.token } : {}),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal,
      });
    } catch (err) {
      if ((err as Error).name === 'AbortError') throw err;
      const refused = refusalOf(err);
      if (refused) throw refusedCall(refused);
      throw new CodeHostError(`GitLab ${what} failed: ${hostSaid((err as Error).message)}`);
    }
    const text = await res.text();
    if (!res.ok) {
      let detail = text.slice(0, 500);
      try {
        const j = JSON.parse(text) as { message?: unknown; error?: unknown };
        detail = JSON.stringify(j.message ?? j.error ?? j);
      } catch {
        // not JSON
      }
      throw new CodeHostError(`GitLab ${what} failed (HTTP ${res.status}): ${hostSaid(detail)}`, res.status);
    }
    return JSON.parse(text) as T;
  };
}

export function createGitLab(opts: GitLabOptions): CodeHost {
  const { fullPath } = parseRepositoryUrl(opts.repositoryUrl);
  const base = `${gitlabApiBase(opts.repositoryUrl, opts.apiUrl)}/projects/${encodeURIComponent(fullPath)}`;

  const call = apiCaller(opts);

  async function findOpen(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestRef | null> {
    const q = new URLSearchParams({ state: 'opened', source_branch: branch, target_branch: baseBranch });
    const list = await call<MergeRequest[]>('GET', `${base}/merge_requests?${q}`, undefined, 'listing merge requests', signal);
    const mr = list.find((m) => m.source_branch === branch);
    return mr ? { url: mr.web_url, number: mr.iid, created: false } : null;
  }

  async function pullRequestState(branch: string, baseBranch: string, signal?: AbortSignal): Promise<PullRequestState | null> {
    const q = new URLSearchParams({ state: 'all', source_branch: branch, target_branch: baseBranch });
    const list = await call<MergeRequest[]>('GET', `${base}/merge_requests?${q}`, undefined, 'reading the merge request', signal);
    const mr = list.find((m) => m.source_branch === branch);
    if (!mr) return null;
    const mergedAt = hostTime(mr.merged_at);
    return { state: mr.state === 'merged' ? 'merged' : mr.state === 'closed' ? 'closed' : 'open', mergedAt: mr.state === 'merged' ? mergedAt : null };
  }

  return {
    kind: 'gitlab',
    findOpen,
    pullRequestState,
    async upsert(input: PullRequestInput, signal?: AbortSignal) {
      const existing = await findOpen(input.branch, input.baseBranch, signal);
      if (existing) {
        await call('PUT', `${base}/merge_requests/${existing.number}`, { description: input.body }, 'updating the merge request', signal);
        return existing;
      }
      try {
        const mr = await call<MergeRequest>(
          'POST',
          `${base}/merge_requests`,
          {
            source_branch: input.branch,
            target_branch: input.baseBranch,
            title: input.draft ? `Draft: ${input.title}` : input.title,
            description: input.body,
            remove_source_branch: true,
          },
          'opening the merge request',
          signal,
        );
        return { url: mr.web_url, number: mr.iid, created: true };
      } catch (err) {
        // 409: "Another open merge request already exists for this source branch".
        if (err instanceof CodeHostError && err.status === 409) {
          const again = await findOpen(input.branch, input.baseBranch, signal);
          if (again) return again;
        }
        throw err;
      }
    },
  };
}
