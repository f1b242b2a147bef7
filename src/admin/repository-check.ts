// A project's repository asked when the project is saved, so that a typo (`acme/dcos`, branch
// `mian`) is refused then, with the URL tried, and not at the first job. Asked the way a job reaches
// it: the credential access.ts picks, the URL policy, the outbound address policy and the egress
// proxy (git/remote.ts), `git ls-remote` only (nothing fetched). A host that does not answer is not
// a refusal: the project is saved with a warning, and the first job tries again.
import type { Config } from '../config.ts';
import { codeHostAccess } from '../codehost/access.ts';
import { CODE_HOSTS, type CodeHostKind } from '../codehost/kinds.ts';
import { remoteBranch, type RemoteBranch } from '../git/remote.ts';
import { checkRepositoryUrl } from '../git/repository-url.ts';
import { GitError } from '../git/run.ts';
import type { Resolve } from '../net/address-policy.ts';
import { CodedError } from '../errors.ts';

export type RepositoryCheckConfig = Pick<Config, 'repositories' | 'outbound' | 'codeHosts' | 'dataDir' | 'repositoryCheck'>;

/** What is asked: the repository as the project would reach it. */
export interface RepositoryTarget {
  repositoryUrl: string;
  baseBranch: string;
  codeHost: CodeHostKind;
  /** The project's own token (opened), or null: the operator's where access.ts allows it. */
  repoToken: string | null;
}

/** How long the remote has to answer before the project is saved with a warning. */
const CHECK_TIMEOUT_MS = 15_000;

/** Answers that mean "this repository cannot be used as given", as opposed to "no answer". */
const REFUSALS = new Set(['repository_not_found', 'repository_auth_failed', 'repository_redirected', 'repository_address_refused', 'repository_protocol_refused']);

/** The repository answered no: a stable code, a sentence with the URL tried, and the field it is about. */
export class RepositoryCheckError extends CodedError {
  constructor(code: string, message: string, field: 'repositoryUrl' | 'baseBranch') {
    super(code, message, { details: [{ message, path: `/body/${field}` }] });
  }
}

/** The refusal in words, naming the URL; a missing or private repository looks the same to git. */
function refusal(err: GitError, url: string, hasToken: boolean, withheld: string | null): string {
  if (err.code === 'repository_not_found') return `Repository ${url} was not found: check the owner and name, and that the project's token can see it.`;
  if (err.code === 'repository_auth_failed') {
    return hasToken
      ? `Repository ${url} refused the credentials: check the owner and name, and that the project's repository token can read it.`
      : `Repository ${url} asks for credentials: it does not exist (check the owner and name), or it is private and the project has no token for it.${withheld ? ` ${withheld}` : ''}`;
  }
  return `Repository ${url}: ${err.message}`;
}

/**
 * Asks the repository for the base branch. Resolves to warnings (sentences; empty when all is well
 * or the check is off) when the host could not be asked; throws RepositoryCheckError when it said no.
 */
export async function checkRepositoryReachable(t: RepositoryTarget, config: RepositoryCheckConfig, resolve?: Resolve): Promise<string[]> {
  if (!config.repositoryCheck) return [];
  const access = codeHostAccess(t.codeHost, t.repositoryUrl, t.repoToken, { operator: config.codeHosts, outbound: config.outbound, resolve });
  const credentials = access.token ? { token: access.token, username: CODE_HOSTS[t.codeHost].gitUsername } : null;
  const remote = checkRepositoryUrl(t.repositoryUrl, config.repositories);
  const options = { repositoryUrl: t.repositoryUrl, policy: config.repositories, outbound: config.outbound, resolve, credentials };
  let answer: RemoteBranch;
  try {
    answer = await remoteBranch(options, remote, t.baseBranch, { cwd: config.dataDir, signal: AbortSignal.timeout(CHECK_TIMEOUT_MS) });
  } catch (err) {
    if (err instanceof GitError && REFUSALS.has(err.code)) throw new RepositoryCheckError(err.code, refusal(err, t.repositoryUrl, credentials !== null, access.withheld), 'repositoryUrl');
    const timedOut = err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError');
    if (!timedOut && !(err instanceof GitError)) throw err;
    const why = timedOut ? `no answer within ${CHECK_TIMEOUT_MS / 1000} s` : err.message.replace(/\.$/, '');
    return [`Repository ${t.repositoryUrl} could not be checked (${why}); the project is saved, and its first job will try again.`];
  }
  if (answer.found) return [];
  const hint = answer.defaultBranch ? `; its default branch is "${answer.defaultBranch}"` : '';
  throw new RepositoryCheckError('branch_not_found', `Repository ${t.repositoryUrl} has no branch "${t.baseBranch}"${hint}.`, 'baseBranch');
}
