// Running the system `git`: the one place that spawns it. Its environment holds only what it needs
// (PATH, HOME: never Folio's secrets or proxy variables — git reaches the network only through
// Folio's egress proxy, net/egress-proxy.ts, which Repo sets per command), no system or user git
// configuration (which could rewrite URLs, add credential helpers or hooks), no prompts, and local transports only unless the
// caller allows its remote's (GIT_ALLOW_PROTOCOL). Credentials travel only in that environment.
// git's output never reaches clients: a GitError carries a stable code and a sentence, and `detail`
// (stderr, secrets blanked) for the server log.
import { spawn } from 'node:child_process';
import { childProcessEnv } from '../child-env.ts';
import { CodedError } from '../errors.ts';

export class GitError extends CodedError {
  /** What git printed (secrets blanked): for the server log only, never for clients or job events. */
  readonly detail: string | undefined;
  constructor(code: string, message: string, detail?: string) {
    super(code, message);
    this.detail = detail;
  }
}

export interface GitCredentials {
  /** Token for HTTPS remotes; null for none. */
  token: string | null;
  /** User name paired with the token in Basic auth: `x-access-token` (GitHub), `oauth2` (GitLab). */
  username: string;
}

export interface RunOptions {
  cwd?: string;
  env?: Record<string, string>;
  signal?: AbortSignal;
  /** Values to blank out of error messages. */
  secrets?: string[];
  input?: string;
}

function redact(text: string, secrets: string[]): string {
  let out = text;
  for (const s of secrets) if (s) out = out.split(s).join('[redacted]');
  return out;
}

/** The inherited part of git's environment: PATH, HOME… never Folio's secrets, proxies or GIT_* settings. */
const inherited = childProcessEnv();

/** Environment for a git process (see the top of this file); `extra` adds to or overrides it. */
function baseEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    ...inherited,
    GIT_TERMINAL_PROMPT: '0',
    GIT_ASKPASS: '',
    SSH_ASKPASS: '',
    GCM_INTERACTIVE: 'never',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: '/dev/null',
    GIT_ALLOW_PROTOCOL: 'file',
    LC_ALL: 'C',
    ...extra,
  };
}

/** git settings for one process, as GIT_CONFIG_* environment entries (never on disk, never in argv). */
export function gitConfigEnv(settings: [key: string, value: string][]): Record<string, string> {
  const env: Record<string, string> = { GIT_CONFIG_COUNT: String(settings.length) };
  settings.forEach(([key, value], i) => {
    env[`GIT_CONFIG_KEY_${i}`] = key;
    env[`GIT_CONFIG_VALUE_${i}`] = value;
  });
  return env;
}

/** The setting that gives git an Authorization header for this process only; none without a token. */
export function credentialConfig(creds: GitCredentials | null): [string, string][] {
  if (!creds?.token) return [];
  const basic = Buffer.from(`${creds.username}:${creds.token}`).toString('base64');
  return [['http.extraHeader', `Authorization: Basic ${basic}`]];
}

export function git(args: string[], opts: RunOptions = {}): Promise<string> {
  const secrets = opts.secrets ?? [];
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, {
      cwd: opts.cwd,
      env: baseEnv(opts.env),
      stdio: [opts.input !== undefined ? 'pipe' : 'ignore', 'pipe', 'pipe'],
      signal: opts.signal,
    });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout!.on('data', (d: Buffer) => out.push(d));
    child.stderr!.on('data', (d: Buffer) => err.push(d));
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    let aborted: Error | null = null;
    child.on('error', (e) => {
      // An aborted git is killed: settle once it has exited, so nobody touches files it may still write.
      if ((e as Error).name === 'AbortError') {
        aborted = e;
        if (child.pid === undefined) reject(e);
      } else reject(new GitError('git_error', 'git could not be started on the server.', redact((e as Error).message, secrets)));
    });
    child.on('close', (code) => {
      if (aborted) return reject(aborted);
      if (code === 0) return resolve(Buffer.concat(out).toString('utf8'));
      const detail = redact(Buffer.concat(err).toString('utf8').trim() || `exit code ${code}`, secrets).slice(0, 4000);
      reject(new GitError('git_error', `A git ${args[0]} command failed on the server.`, detail));
    });
  });
}

export function gitBuffer(args: string[], cwd: string, input: string): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: baseEnv(), stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    child.stdout.on('data', (d: Buffer) => out.push(d));
    child.stderr.resume();
    child.on('error', (e) => reject(new GitError('git_error', 'git could not be started on the server.', e.message)));
    child.on('close', (code) => (code === 0 ? resolve(Buffer.concat(out)) : reject(new GitError('git_error', `A git ${args[0]} command failed on the server.`, `exit code ${code}`))));
    child.stdin.end(input);
  });
}

/** Runs git and keeps at most `limit` bytes of its output, stopping it once it has written that much. */
export function gitHead(args: string[], cwd: string, limit: number): Promise<{ out: Buffer; cut: boolean }> {
  return new Promise((resolve, reject) => {
    const child = spawn('git', args, { cwd, env: baseEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    const chunks: Buffer[] = [];
    let size = 0;
    let cut = false;
    child.stdout.on('data', (d: Buffer) => {
      if (cut) return;
      chunks.push(d);
      size += d.length;
      if (size >= limit) {
        cut = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.resume();
    child.on('error', () => reject(new GitError('git_error', `git ${args[0]} could not be started.`)));
    child.on('close', (code) => {
      if (code === 0 || cut) resolve({ out: Buffer.concat(chunks).subarray(0, limit), cut });
      else reject(new GitError('git_error', `git ${args[0]} failed (exit ${code}).`));
    });
  });
}
