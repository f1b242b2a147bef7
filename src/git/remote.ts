// git commands that talk to a repository's remote (fetch, push, ls-remote): only after the remote's
// host passed the outbound address policy, with git's transports limited to the operator's, HTTP(S)
// through the egress proxy (which checks the address git actually connects to), credentials only in
// the process's environment, and the user's URL after `--`. A failure is a GitError whose code says
// why (not found, refused credentials, unreachable…) without repeating git's output.
import { credentialConfig, git, gitConfigEnv, GitError, type GitCredentials } from './run.ts';
import { gitAllowProtocol, type CheckedRepository, type RepositoryPolicy } from './repository-url.ts';
import { OutboundRefusedError, resolveAllowed, UnresolvedHostError, type OutboundPolicy, type Resolve } from '../net/address-policy.ts';
import { egressProxy } from '../net/egress-proxy.ts';

export interface RemoteOptions {
  repositoryUrl: string;
  /** Which repository URLs and transports are allowed (config.repositories). */
  policy: RepositoryPolicy;
  /** Which networks the remote's host may be in besides public ones (config.outbound). */
  outbound: OutboundPolicy;
  /** Name resolution for the outbound check (tests). */
  resolve?: Resolve;
  credentials: GitCredentials | null;
}

/** Why a fetch or push failed, told from git's output but without repeating it. */
function remoteFailure(what: 'fetch' | 'push', err: GitError): GitError {
  const out = err.detail ?? '';
  const [code, message] =
    /returned error: 30[1-8]\b|redirect/i.test(out)
      ? ['repository_redirected', "The repository's host answered with a redirect, which Folio does not follow (credentials would go along); set the project's repository URL to where the repository is now."]
      : /transport '[^']*' not allowed|unsupported protocol/i.test(out)
      ? ['repository_protocol_refused', 'git refused the repository\'s transport on this server.']
      : /authentication failed|could not read (username|password)|permission denied|http (401|403)|\b40[13]\b|access denied|invalid credentials/i.test(out)
        ? ['repository_auth_failed', 'The code host refused the credentials; check the project\'s repository token and its access to the repository.']
        : /repository .*not found|not found|does not appear to be a git repository|\b404\b|does not exist/i.test(out)
          ? ['repository_not_found', 'The repository was not found; check the repository URL and that the token can see it.']
          : /could not resolve host|connection (refused|timed out|reset)|timed out|network is unreachable|unable to access|failed to connect/i.test(out)
            ? ['repository_unreachable', 'The repository\'s host could not be reached.']
            : what === 'push' && /\[rejected\]|non-fast-forward|fetch first|protected branch|pre-receive hook declined/i.test(out)
              ? ['push_rejected', 'The code host rejected the push of the job branch (a protected branch, a hook, or commits made there by someone else).']
              : what === 'push'
                ? ['push_failed', 'Pushing the job branch failed.']
                : ['repository_unavailable', 'Fetching the repository failed.'];
  return new GitError(code, message, out);
}

/** The token and its Basic form, blanked out of anything git prints. */
function secretsOf(credentials: GitCredentials | null): string[] {
  return credentials?.token ? [credentials.token, Buffer.from(`${credentials.username}:${credentials.token}`).toString('base64')] : [];
}

/** The remote's host must pass the outbound policy before git is started at all. */
async function checkRemoteHost(o: RemoteOptions, remote: CheckedRepository): Promise<void> {
  if (remote.host === null || remote.transport === 'file') return;
  try {
    await resolveAllowed(remote.host, o.outbound, o.resolve);
  } catch (err) {
    if (err instanceof OutboundRefusedError) throw new GitError('repository_address_refused', `The repository's host: ${err.message}`);
    if (err instanceof UnresolvedHostError) throw new GitError('repository_unreachable', "The repository's host could not be reached.", err.message);
    throw err;
  }
}

/**
 * Runs `git <what> <options> -- <url> <refspecs>` against the remote (`remote`: the URL as
 * checkRepositoryUrl found it). A redirect is never followed, so the token never goes along with one.
 */
export async function runRemote(
  o: RemoteOptions,
  remote: CheckedRepository,
  what: 'fetch' | 'push' | 'ls-remote',
  options: string[],
  refspecs: string[],
  run: { cwd: string; signal?: AbortSignal },
): Promise<string> {
  await checkRemoteHost(o, remote);
  const web = remote.transport === 'https' || remote.transport === 'http';
  const session = web ? (await egressProxy(o.outbound, o.resolve)).session() : null;
  const config = credentialConfig(o.credentials);
  if (session) config.push(['http.proxy', session.url], ['http.proxyAuthMethod', 'basic'], ['http.followRedirects', 'false']);
  if (o.policy.caFile) config.push(['http.sslCAInfo', o.policy.caFile]);
  const env = { ...gitConfigEnv(config), GIT_ALLOW_PROTOCOL: gitAllowProtocol(o.policy) };
  const secrets = [...secretsOf(o.credentials), ...(session ? [session.url] : [])];
  try {
    return await git([what, ...options, '--', o.repositoryUrl, ...refspecs], { cwd: run.cwd, env, secrets, signal: run.signal });
  } catch (err) {
    if (session && session.refused.length > 0) throw new GitError('repository_address_refused', `The repository's host: ${session.refused[0]}`);
    if (err instanceof GitError) throw remoteFailure(what === 'push' ? 'push' : 'fetch', err);
    throw err;
  } finally {
    session?.end();
  }
}

/** What the remote says of a branch: whether it has it, and the branch its HEAD names (null when it names none). */
export interface RemoteBranch {
  found: boolean;
  defaultBranch: string | null;
}

/** Asks the remote (`git ls-remote`, nothing fetched) whether it has `branch` (already checked), and its default branch. */
export async function remoteBranch(o: RemoteOptions, remote: CheckedRepository, branch: string, run: { cwd: string; signal?: AbortSignal }): Promise<RemoteBranch> {
  const out = await runRemote(o, remote, 'ls-remote', ['--symref'], ['HEAD', `refs/heads/${branch}`], run);
  const lines = out.split('\n');
  const head = /^ref: refs\/heads\/(\S+)\tHEAD$/m.exec(out)?.[1] ?? null;
  return { found: lines.some((line) => line.endsWith(`\trefs/heads/${branch}`)), defaultBranch: head };
}
