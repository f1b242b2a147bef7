// GitHub and GitHub Enterprise Server pull requests, on the one GitHub client (client.ts).
import { hostTime, type ApiConnection, type PullRequestApi } from '../types.ts';
import { githubClient } from './client.ts';

export function githubPullRequests(conn: ApiConnection): PullRequestApi {
  const { call, repository } = githubClient(conn);
  return {
    find: (branch, baseBranch, which, signal) =>
      call(which === 'open' ? 'listing pull requests' : 'reading the pull request', async (octokit) => {
        const state = which === 'open' ? 'open' : 'all';
        const { data } = await octokit.rest.pulls.list({ ...repository, state, head: `${repository.owner}:${branch}`, base: baseBranch, per_page: 10, request: { signal } });
        const pr = data.find((p) => p.head.ref === branch);
        if (!pr) return null;
        const mergedAt = hostTime(pr.merged_at);
        return { url: pr.html_url, number: pr.number, state: mergedAt !== null ? 'merged' : pr.state === 'closed' ? 'closed' : 'open', mergedAt };
      }),
    describe: (number, body, signal) =>
      call('updating the pull request', async (octokit) => void (await octokit.rest.pulls.update({ ...repository, pull_number: number, body, request: { signal } }))),
    open: (input, signal) =>
      call('opening the pull request', async (octokit) => {
        const { data } = await octokit.rest.pulls.create({ ...repository, head: input.branch, base: input.baseBranch, title: input.title, body: input.body, draft: input.draft, request: { signal } });
        return { url: data.html_url, number: data.number };
      }),
    // GitHub answers 422 "A pull request already exists".
    alreadyOpen: (err) => (err as { status?: number | null }).status === 422,
  };
}
