// Reads what a code change touched from the code host's API: the files of a pull request (GitHub
// pulls/{n}/files, GitLab merge_requests/{iid}/changes) or of a range of commits (GitHub compare,
// GitLab repository/compare). Answers are checked and bounded: a code host is not trusted either.
import { Octokit } from '@octokit/rest';
import { githubApiBase } from './github.ts';
import { gitlabApiBase } from './gitlab.ts';
import { CodeHostError, hostSaid, parseRepositoryUrl, refusedCall } from './types.ts';
import { refusalOf } from '../net/guarded-fetch.ts';
import type { TriggerHost } from '../contracts/common.ts';

export interface ChangedFile {
  path: string;
  /** The old path of a renamed file. */
  previousPath: string | null;
  status: 'added' | 'modified' | 'removed' | 'renamed';
  /** Unified diff hunks of the file, when the host gives them (not for binary or huge files). */
  patch: string | null;
}

export interface ChangeSource {
  host: TriggerHost;
  /** The watched code repository (https://github.com/acme/api, a GHES or GitLab URL). */
  repositoryUrl: string;
  token: string | null;
  /** API base override (GITHUB_API_URL / GITLAB_API_URL); derived from the repository URL otherwise. */
  apiUrl: string | null;
  /** Which token and API to use are access.ts's to decide: pass a CodeHostAccess. */
  timeoutMs: number;
  /** How to call the API (the outbound address check unless the operator set apiUrl). */
  fetch: typeof globalThis.fetch;
}

export type ChangeRef = { pull: number } | { base: string; head: string };

const MAX_FILES = 300;
const MAX_PATCH = 100_000;
const MAX_RESPONSE_BYTES = 20 * 1024 * 1024;

const text = (v: unknown, max: number): string | null => (typeof v === 'string' ? v.slice(0, max) : null);

function githubFile(f: unknown): ChangedFile | null {
  if (!f || typeof f !== 'object') return null;
  const o = f as Record<string, unknown>;
  const path = text(o.filename, 4096);
  if (!path) return null;
  const status = o.status === 'added' ? 'added' : o.status === 'removed' ? 'removed' : o.status === 'renamed' ? 'renamed' : 'modified';
  return { path, previousPath: text(o.previous_filename, 4096), status, patch: text(o.patch, MAX_PATCH) };
}

function gitlabFile(f: unknown): ChangedFile | null {
  if (!f || typeof f !== 'object') return null;
  const o = f as Record<string, unknown>;
  const path = text(o.new_path, 4096);
  if (!path) return null;
  const status = o.new_file === true ? 'added' : o.deleted_file === true ? 'removed' : o.renamed_file === true ? 'renamed' : 'modified';
  const diff = text(o.diff, MAX_PATCH);
  return { path, previousPath: status === 'renamed' ? text(o.old_path, 4096) : null, status, patch: diff || null };
}

async function readGitHub(src: ChangeSource, ref: ChangeRef, signal: AbortSignal): Promise<ChangedFile[]> {
  const { fullPath } = parseRepositoryUrl(src.repositoryUrl);
  const [owner, repo] = [fullPath.split('/').at(-2)!, fullPath.split('/').at(-1)!];
  const octokit = new Octokit({
    baseUrl: githubApiBase(src.repositoryUrl, src.apiUrl),
    ...(src.token ? { auth: src.token } : {}),
    userAgent: 'folio-triggers',
    request: { fetch: src.fetch },
    log: { debug() {}, info() {}, warn() {}, error() {} },
  });
  try {
    if ('pull' in ref) {
      const files: ChangedFile[] = [];
      for (let page = 1; page <= MAX_FILES / 100; page++) {
        const { data } = await octokit.rest.pulls.listFiles({ owner, repo, pull_number: ref.pull, per_page: 100, page, request: { signal } });
        if (!Array.isArray(data)) throw new CodeHostError('GitHub answered the pull request files with something that is not a list.');
        for (const f of data) {
          const file = githubFile(f);
          if (file) files.push(file);
        }
        if (data.length < 100) break;
      }
      return files;
    }
    const { data } = await octokit.rest.repos.compareCommitsWithBasehead({ owner, repo, basehead: `${ref.base}...${ref.head}`, request: { signal } });
    const list = (data as { files?: unknown }).files;
    if (list !== undefined && !Array.isArray(list)) throw new CodeHostError('GitHub answered the comparison with files that are not a list.');
    return (list ?? []).map(githubFile).filter((f): f is ChangedFile => f !== null);
  } catch (err) {
    if (err instanceof CodeHostError) throw err;
    const refused = refusalOf(err);
    if (refused) throw refusedCall(refused);
    const e = err as { status?: number; message?: string };
    throw new CodeHostError(`GitHub reading the change failed${e.status ? ` (HTTP ${e.status})` : ''}: ${(e.message ?? String(err)).slice(0, 300)}`, e.status ?? null);
  }
}

async function readGitLab(src: ChangeSource, ref: ChangeRef, signal: AbortSignal): Promise<ChangedFile[]> {
  const { fullPath } = parseRepositoryUrl(src.repositoryUrl);
  const base = `${gitlabApiBase(src.repositoryUrl, src.apiUrl)}/projects/${encodeURIComponent(fullPath)}`;
  const url = 'pull' in ref ? `${base}/merge_requests/${ref.pull}/changes` : `${base}/repository/compare?${new URLSearchParams({ from: ref.base, to: ref.head })}`;
  let res: Response;
  try {
    res = await src.fetch(url, { headers: { accept: 'application/json', 'user-agent': 'folio-triggers', ...(src.token ? { 'PRIVATE-TOKEN': src.token } : {}) }, signal, redirect: 'error' });
  } catch (err) {
    const refused = refusalOf(err);
    if (refused) throw refusedCall(refused);
    throw new CodeHostError(`GitLab reading the change failed: ${hostSaid((err as Error).message)}`);
  }
  const length = Number(res.headers.get('content-length') ?? 0);
  if (length > MAX_RESPONSE_BYTES) throw new CodeHostError('GitLab answered with a change too large to read.');
  const body = await res.text();
  if (!res.ok) throw new CodeHostError(`GitLab reading the change failed (HTTP ${res.status}).`, res.status);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    throw new CodeHostError('GitLab answered the change with something that is not JSON.');
  }
  const list = parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>)['pull' in ref ? 'changes' : 'diffs'] : undefined;
  if (!Array.isArray(list)) throw new CodeHostError('GitLab answered the change without a list of files.');
  return list.map(gitlabFile).filter((f): f is ChangedFile => f !== null);
}

/** The files a pull request or a range of commits changed, at most 300. */
export async function readChange(src: ChangeSource, ref: ChangeRef, signal?: AbortSignal): Promise<ChangedFile[]> {
  const timeout = AbortSignal.timeout(src.timeoutMs);
  const both = signal ? AbortSignal.any([signal, timeout]) : timeout;
  const files = src.host === 'github' ? await readGitHub(src, ref, both) : await readGitLab(src, ref, both);
  return files.slice(0, MAX_FILES);
}
