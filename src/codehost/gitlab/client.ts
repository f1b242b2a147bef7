// The one way Folio calls GitLab's REST API v4 for a repository: the project's base URL, the token in
// PRIVATE-TOKEN, the fetch access.ts chose, answers read up to a size, and GitLab's failures as
// CodeHostErrors. Merge requests and trigger change listings use it; so does anything added later
// (notes on merge requests, a member's access level).
import { CodeHostError, hostSaid, parseRepositoryUrl, refusedCall, type ApiConnection } from '../types.ts';
import { refusalOf } from '../../net/guarded-fetch.ts';

/** The most of one answer read: a change's diffs can be large, no more is trusted. */
const MAX_RESPONSE_BYTES = 20 * 1024 * 1024;

/** `{origin}/api/v4` of the repository's host, unless the operator's API URL overrides it. */
export function gitlabApiBase(repositoryUrl: string, override?: string | null): string {
  if (override) return override.replace(/\/+$/, '');
  return `${parseRepositoryUrl(repositoryUrl).origin}/api/v4`;
}

export interface GitLabRequest {
  method?: 'GET' | 'POST' | 'PUT';
  query?: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

export interface GitLabClient {
  /** A call on the repository's project (`path` under `/projects/:id`, e.g. `/merge_requests`); `what` names it in errors. */
  request<T>(path: string, what: string, req?: GitLabRequest): Promise<T>;
}

export function gitlabClient(conn: ApiConnection): GitLabClient {
  const project = `${gitlabApiBase(conn.repositoryUrl, conn.apiUrl)}/projects/${encodeURIComponent(parseRepositoryUrl(conn.repositoryUrl).fullPath)}`;
  return {
    async request<T>(path: string, what: string, req: GitLabRequest = {}): Promise<T> {
      const url = `${project}${path}${req.query ? `?${new URLSearchParams(req.query)}` : ''}`;
      let res: Response;
      try {
        res = await conn.fetch(url, {
          method: req.method ?? 'GET',
          headers: {
            accept: 'application/json',
            'user-agent': 'folio',
            ...(req.body !== undefined ? { 'content-type': 'application/json' } : {}),
            ...(conn.token ? { 'PRIVATE-TOKEN': conn.token } : {}),
          },
          body: req.body === undefined ? undefined : JSON.stringify(req.body),
          signal: req.signal,
        });
      } catch (err) {
        if ((err as Error).name === 'AbortError' || (err as Error).name === 'TimeoutError') throw err;
        const refused = refusalOf(err);
        if (refused) throw refusedCall(refused);
        throw new CodeHostError(`GitLab ${what} failed: ${hostSaid((err as Error).message)}`);
      }
      if (Number(res.headers.get('content-length') ?? 0) > MAX_RESPONSE_BYTES) {
        await res.body?.cancel();
        throw new CodeHostError(`GitLab ${what} failed: the answer is larger than Folio reads.`, res.status);
      }
      const text = await res.text();
      if (!res.ok) throw new CodeHostError(`GitLab ${what} failed (HTTP ${res.status}): ${hostSaid(messageOf(text))}`, res.status);
      try {
        return JSON.parse(text) as T;
      } catch {
        throw new CodeHostError(`GitLab ${what} failed: the answer is not JSON.`, res.status);
      }
    },
  };
}

/** What an error answer says: its `message` or `error`, else its first 500 characters. */
function messageOf(text: string): string {
  try {
    const j = JSON.parse(text) as { message?: unknown; error?: unknown };
    return JSON.stringify(j.message ?? j.error ?? j);
  } catch {
    return text.slice(0, 500);
  }
}
