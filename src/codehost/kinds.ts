// The details of each code host Folio knows; the list itself is contracts/common.ts's CodeHost. The
// store validates against it, the schemas and the CLI offer it, the dashboard labels it, config reads
// each host's token and API URL from the variables named here, git authenticates with its user name,
// and a project's host is inferred from its repository URL with it. Pure (no I/O), so every layer can
// import it. To add a code host: docs/ARCHITECTURE.md's "Add a code host" (its client, its
// PullRequestApi and TriggerAdapter on it, one registry line in index.ts).
import { CODE_HOST_KINDS, type CodeHostKind } from '../contracts/common.ts';

export interface CodeHostDeclaration {
  label: string;
  description: string;
  /** The user name git sends with a token over HTTPS. */
  gitUsername: string;
  /**
   * Environment variables of the operator's token and API base URL, and the hosts that token is for
   * when no API URL is set: the public service's web host and API host (access.ts binds the token there).
   */
  env: { token: string; apiUrl: string; webHost: string; apiHost: string } | null;
  /** What the host calls a proposed change; null when it has none. */
  changeName: string | null;
  /** For hosts whose webhooks start jobs: what its webhook form calls the URL and the secret (the dashboard's hints). */
  webhook: { urlField: string; secretField: string } | null;
}

export const CODE_HOSTS = {
  github: {
    label: 'GitHub',
    description: 'GitHub and GitHub Enterprise Server: pull requests',
    gitUsername: 'x-access-token',
    env: { token: 'GITHUB_TOKEN', apiUrl: 'GITHUB_API_URL', webHost: 'github.com', apiHost: 'api.github.com' },
    changeName: 'pull request',
    webhook: { urlField: 'Payload URL; content type application/json', secretField: 'Secret' },
  },
  gitlab: {
    label: 'GitLab',
    description: 'GitLab.com and self-managed GitLab: merge requests',
    gitUsername: 'oauth2',
    env: { token: 'GITLAB_TOKEN', apiUrl: 'GITLAB_API_URL', webHost: 'gitlab.com', apiHost: 'gitlab.com' },
    changeName: 'merge request',
    webhook: { urlField: 'URL', secretField: 'Secret token' },
  },
  none: { label: 'Push only', description: 'Push the branch, open no pull request', gitUsername: 'x-access-token', env: null, changeName: null, webhook: null },
} as const satisfies Record<CodeHostKind, CodeHostDeclaration>;

export { CODE_HOST_KINDS, type CodeHostKind };

export const isCodeHostKind = (value: unknown): value is CodeHostKind => typeof value === 'string' && Object.hasOwn(CODE_HOSTS, value);

/** Each kind of a job's trigger in words, given what the host calls a change. */
const TRIGGER_KINDS: Record<string, (change: string) => string> = {
  pull_request_merged: (change) => `Merged ${change}`,
  pull_request_opened: (change) => `Opened ${change}`,
  push: () => 'Push to the default branch',
};

/**
 * What started a job from a code change, in words, as the dashboard and the CLI show it: "Merged pull
 * request on GitHub", "Opened merge request on GitLab", "Push to the default branch on GitHub".
 */
export function triggerLabel(trigger: { kind: string; host: string }): string {
  const host = isCodeHostKind(trigger.host) ? CODE_HOSTS[trigger.host] : null;
  const what = Object.hasOwn(TRIGGER_KINDS, trigger.kind) ? TRIGGER_KINDS[trigger.kind](host?.changeName ?? 'change') : trigger.kind;
  return `${what} on ${host?.label ?? trigger.host}`;
}

/** github.com / gitlab.com, or hosts named like them (github.acme.com), by URL; anything else is push-only. */
export function inferCodeHost(repositoryUrl: string): CodeHostKind {
  const host = repositoryHost(repositoryUrl) ?? '';
  if (host === 'github.com' || host.startsWith('github.')) return 'github';
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return 'gitlab';
  return 'none';
}

/** The lower-case host name of a repository URL (`https://…`, `ssh://…`, `git@host:path`); null for a local path. */
export function repositoryHost(url: string): string | null {
  try {
    return new URL(url).hostname.toLowerCase() || null;
  } catch {
    return /^[^@/]+@([^:/]+):/.exec(url)?.[1]?.toLowerCase() ?? null; // git@github.com:org/repo.git
  }
}
