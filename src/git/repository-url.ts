// The one place that decides which repository URLs and branch names Folio hands to `git`. A value
// that reaches git's argv must never be read as an option (`--upload-pack=…`), name a remote helper
// (`ext::sh -c …`), carry credentials, or use a transport the operator has not enabled. Pure: no I/O,
// so the store (when a project is saved) and the git layer (before every fetch and push) both call it.
import { CodedError } from '../errors.ts';

export type RemoteTransport = 'https' | 'http' | 'ssh';
export type Transport = RemoteTransport | 'file';

export interface RepositoryPolicy {
  /** Network transports allowed; https always is. scp-like `git@host:org/repo.git` is ssh. */
  readonly protocols: readonly RemoteTransport[];
  /** `file://` URLs and absolute local paths (operators and tests only; off by default). */
  readonly allowLocal: boolean;
  /** Certificates git trusts for https repositories instead of the system's (a private CA); null for the system's. */
  readonly caFile?: string | null;
}

export class RepositoryInputError extends CodedError {
  declare readonly code: 'invalid_repository_url' | 'invalid_branch';
  constructor(code: 'invalid_repository_url' | 'invalid_branch', message: string) {
    super(code, message);
  }
}

export interface CheckedRepository {
  transport: Transport;
  /** The host git connects to; null for local repositories. */
  host: string | null;
}

/** Visible ASCII a git URL needs; no shell metacharacters, quotes, spaces or control characters. */
const URL_CHARS = /^[A-Za-z0-9._~%+@:/\-[\]]+$/;
const HOST = /^(?!-)[A-Za-z0-9.-]{1,253}$/;
const SCP_LIKE = /^(?:([A-Za-z0-9._-]+)@)?([^/:@]+):(.+)$/;
const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):\/\//;

const shown = (value: string) => JSON.stringify(value.length > 120 ? `${value.slice(0, 120)}…` : value);

function urlError(value: string, why: string): RepositoryInputError {
  return new RepositoryInputError('invalid_repository_url', `Repository ${shown(value)} ${why}`);
}

function requireTransport(value: string, transport: Transport, policy: RepositoryPolicy): void {
  if (transport === 'file') {
    if (!policy.allowLocal) {
      throw urlError(value, 'is a local repository; local repositories are off on this server (FOLIO_ALLOW_LOCAL_REPOSITORIES).');
    }
    return;
  }
  if (transport !== 'https' && !policy.protocols.includes(transport)) {
    throw urlError(value, `uses ${transport}, which this server does not allow; use an https:// URL (or allow it with FOLIO_GIT_PROTOCOLS).`);
  }
}

/**
 * Checks a repository URL against the policy: https://, http://, ssh://, scp-like `user@host:path`,
 * file:// or an absolute path. Throws RepositoryInputError with a sentence saying what is wrong.
 */
export function checkRepositoryUrl(value: unknown, policy: RepositoryPolicy): CheckedRepository {
  if (typeof value !== 'string' || value.length === 0) throw new RepositoryInputError('invalid_repository_url', 'A repository URL is required.');
  if (value.length > 2000) throw urlError(value, 'is longer than 2,000 characters.');
  if (value.startsWith('-')) throw urlError(value, 'starts with "-", which git would read as an option.');
  if (!URL_CHARS.test(value)) {
    const bad = [...value].find((c) => !URL_CHARS.test(c))!;
    const name = bad.charCodeAt(0) < 0x20 || bad === '\u007f' ? `control character U+${bad.charCodeAt(0).toString(16).padStart(4, '0')}` : `"${bad}"`;
    throw urlError(value, `contains ${name}, which a repository URL cannot have.`);
  }
  // git's `<transport>::<address>` runs a remote helper (ext:: runs any command).
  if (/^[A-Za-z][A-Za-z0-9+.-]*::/.test(value)) throw urlError(value, 'names a git remote helper ("transport::address"), which Folio never runs.');

  const scheme = SCHEME.exec(value)?.[1].toLowerCase();
  if (scheme !== undefined) {
    if (scheme === 'file') {
      requireTransport(value, 'file', policy);
      if (!/^file:\/\/\//i.test(value)) throw urlError(value, 'must be file:///absolute/path.');
      return { transport: 'file', host: null };
    }
    if (scheme !== 'https' && scheme !== 'http' && scheme !== 'ssh') {
      throw urlError(value, `uses "${scheme}://"; use https:// (or http://, ssh:// where this server allows them).`);
    }
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw urlError(value, 'is not a valid URL.');
    }
    const host = url.hostname.replace(/^\[|\]$/g, '');
    if (host === '' || host.startsWith('-') || (!HOST.test(host) && !/^[0-9a-fA-F:.]+$/.test(host))) throw urlError(value, 'has no valid host name.');
    if (scheme !== 'ssh' && (url.username || url.password)) {
      throw urlError(value, 'contains credentials; remove them and set a repository token on the project instead.');
    }
    if (url.password) throw urlError(value, 'contains a password; use an SSH key instead.');
    if (url.pathname.replace(/^\/+/, '').startsWith('-')) throw urlError(value, 'has a path starting with "-".');
    if (url.search || url.hash) throw urlError(value, 'has a query or fragment, which a repository URL does not.');
    requireTransport(value, scheme, policy);
    return { transport: scheme, host };
  }

  if (value.startsWith('/')) {
    requireTransport(value, 'file', policy);
    return { transport: 'file', host: null };
  }

  const scp = SCP_LIKE.exec(value);
  if (scp) {
    const [, user, host, repoPath] = scp;
    if (user?.startsWith('-') || !HOST.test(host) || repoPath.startsWith('-')) {
      throw urlError(value, 'is not a valid git@host:owner/repo.git address.');
    }
    requireTransport(value, 'ssh', policy);
    return { transport: 'ssh', host };
  }
  throw urlError(value, 'is not a git URL (https://host/owner/repo.git, or git@host:owner/repo.git where ssh is allowed).');
}

/**
 * Checks a branch name by git's check-ref-format rules, and refuses a leading "-" (an option to git)
 * and anything but visible ASCII. `what` names the value in the message ("Base branch").
 */
export function checkBranchName(value: unknown, what = 'Branch'): string {
  if (typeof value !== 'string' || value.length === 0) throw new RepositoryInputError('invalid_branch', `${what} is required.`);
  const bad = (why: string) => new RepositoryInputError('invalid_branch', `${what} ${shown(value)} ${why}`);
  if (value.length > 200) throw bad('is longer than 200 characters.');
  if (value.startsWith('-')) throw bad('starts with "-", which git would read as an option.');
  if (!/^[\x21-\x7e]+$/.test(value)) throw bad('may contain only visible ASCII characters (no spaces or control characters).');
  if (/[~^:?*[\\]/.test(value)) throw bad('contains one of ~ ^ : ? * [ \\, which git does not allow in branch names.');
  if (value.includes('..') || value.includes('@{') || value === '@') throw bad('contains "..", "@{" or is "@", which git does not allow.');
  if (value.startsWith('/') || value.endsWith('/') || value.includes('//')) throw bad('has an empty path component.');
  if (value.endsWith('.')) throw bad('ends with ".".');
  for (const part of value.split('/')) {
    if (part.startsWith('.') || part.endsWith('.lock')) throw bad('has a component starting with "." or ending with ".lock".');
  }
  return value;
}

/** GIT_ALLOW_PROTOCOL for git processes: only the transports the policy allows (never ext:: or other helpers). */
export function gitAllowProtocol(policy: RepositoryPolicy): string {
  return ['https', ...policy.protocols.filter((p) => p !== 'https'), ...(policy.allowLocal ? ['file'] : [])].join(':');
}
