// Picks the code host implementation for a project.
import { createGitHub } from './github.ts';
import { createGitLab } from './gitlab.ts';
import { createPushOnly } from './push-only.ts';
import type { CodeHost } from './types.ts';

export type { CodeHost, PullRequestInput, PullRequestRef } from './types.ts';
export { CodeHostError, parseRepositoryUrl } from './types.ts';

export interface CodeHostOptions {
  kind: 'github' | 'gitlab' | 'none';
  repositoryUrl: string;
  token: string | null;
  githubApiUrl: string | null;
  gitlabApiUrl: string | null;
}

export function createCodeHost(o: CodeHostOptions): CodeHost {
  switch (o.kind) {
    case 'github':
      return createGitHub({ repositoryUrl: o.repositoryUrl, token: o.token, apiUrl: o.githubApiUrl });
    case 'gitlab':
      return createGitLab({ repositoryUrl: o.repositoryUrl, token: o.token, apiUrl: o.gitlabApiUrl });
    default:
      return createPushOnly();
  }
}
