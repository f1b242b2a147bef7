// GitLab merge requests (gitlab.com and self-managed), on the one GitLab client (client.ts).
import { CodeHostError, hostTime, type ApiConnection, type PullRequestApi } from '../types.ts';
import { gitlabClient } from './client.ts';

interface MergeRequest {
  iid: number;
  web_url: string;
  source_branch: string;
  state?: string;
  merged_at?: string | null;
}

export function gitlabPullRequests(conn: ApiConnection): PullRequestApi {
  const api = gitlabClient(conn);
  return {
    async find(branch, baseBranch, which, signal) {
      const query = { state: which === 'open' ? 'opened' : 'all', source_branch: branch, target_branch: baseBranch };
      const list = await api.request<MergeRequest[]>('/merge_requests', which === 'open' ? 'listing merge requests' : 'reading the merge request', { query, signal });
      const mr = list.find((m) => m.source_branch === branch);
      if (!mr) return null;
      const merged = mr.state === 'merged';
      return { url: mr.web_url, number: mr.iid, state: merged ? 'merged' : mr.state === 'closed' ? 'closed' : 'open', mergedAt: merged ? hostTime(mr.merged_at) : null };
    },
    async describe(number, body, signal) {
      await api.request(`/merge_requests/${number}`, 'updating the merge request', { method: 'PUT', body: { description: body }, signal });
    },
    async open(input, signal) {
      const body = { source_branch: input.branch, target_branch: input.baseBranch, title: input.draft ? `Draft: ${input.title}` : input.title, description: input.body, remove_source_branch: true };
      const mr = await api.request<MergeRequest>('/merge_requests', 'opening the merge request', { method: 'POST', body, signal });
      return { url: mr.web_url, number: mr.iid };
    },
    // 409: "Another open merge request already exists for this source branch".
    alreadyOpen: (err) => err instanceof CodeHostError && err.status === 409,
  };
}
