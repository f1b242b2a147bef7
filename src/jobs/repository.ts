// A project's docs repository and code host, opened the one way: access.ts picks the token, git gets
// it with the user name that host expects, and the repository URL passes the operator's policy. The
// agent handler opens it to run a job; the suggestions read the base branch's pages through it.
import type { Config } from '../config.ts';
import { codeHostAccess, createCodeHost, type CodeHost, type CodeHostAccess } from '../codehost/index.ts';
import { CODE_HOSTS, type CodeHostKind } from '../codehost/kinds.ts';
import { Repo, type GitCredentials } from '../git/git.ts';
import type { WorktreePool } from '../git/worktree-pool.ts';

/** What opening a project's repository needs to know of the project. */
export interface RepositoryProject {
  codeHost: CodeHostKind;
  repositoryUrl: string;
  /** The project's own token, opened; null: the operator's token where access.ts allows it. */
  repoToken: string | null;
}

/** How this project reaches its code host (access.ts decides which token goes where). */
export function accessFor(config: Config, project: RepositoryProject): CodeHostAccess {
  return codeHostAccess(project.codeHost, project.repositoryUrl, project.repoToken, { operator: config.codeHosts, outbound: config.outbound });
}

/** git's credentials: the token access.ts chose, with the user name that host expects. */
function gitCredentials(access: CodeHostAccess): GitCredentials | null {
  return access.token ? { token: access.token, username: CODE_HOSTS[access.kind].gitUsername } : null;
}

/** The repository (git) and its code host (pull requests). Throws GitError for a URL the policy refuses. */
export function openRepository(config: Config, access: CodeHostAccess, repositoryUrl: string, pool: WorktreePool): { repo: Repo; host: CodeHost } {
  const repo = new Repo({
    dataDir: config.dataDir,
    repositoryUrl,
    policy: config.repositories,
    outbound: config.outbound,
    credentials: gitCredentials(access),
    author: { name: config.agent.gitAuthorName, email: config.agent.gitAuthorEmail },
    pool,
  });
  return { repo, host: createCodeHost(access) };
}
