// The only reader of process.env. Everything else receives a frozen Config.
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import path from 'node:path';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Key for keyed hashes (visitor ids, webhook signatures are per project). Never logged. */
  readonly secret: string;
  readonly logLevel: LogLevel;
  /** One log line per request (method, route, status, time). */
  readonly accessLog: boolean;
  /** Agent workers in this process. 0 runs the API only. */
  readonly workers: number;
  readonly bodyLimitBytes: number;
  /**
   * Which proxies to believe for the client address and protocol (X-Forwarded-For/-Proto): false
   * (none: the socket's peer is the client), true (any), a hop count, or a list of addresses/CIDRs.
   */
  readonly trustProxy: boolean | number | string[];
  /** `postgres://…` switches the state store to PostgreSQL; otherwise SQLite in the data dir. */
  readonly databaseUrl: string | null;
  readonly databasePoolSize: number;
  /** `http://…` switches the analytics store to ClickHouse; otherwise DuckDB in the data dir. */
  readonly clickhouseUrl: string | null;
  readonly rateLimits: {
    /** Per project per rolling hour; 0 means unlimited. */
    readonly createJobPerHour: number;
    readonly followUpPerHour: number;
    readonly analyticsReadsPerHour: number;
    /** Browser collect endpoint: requests per client IP per minute. */
    readonly collectPerMinute: number;
  };
  readonly queue: {
    readonly leaseMs: number;
    readonly heartbeatMs: number;
    readonly pollMs: number;
    readonly maxLostLeases: number;
  };
  readonly models: {
    /** Default `provider/model` for projects that name none. */
    readonly defaultModel: string;
    /** Models a request may name. Always includes the default. */
    readonly allowed: readonly string[];
    readonly anthropic: { readonly apiKey: string | null; readonly baseUrl: string | null };
    readonly openai: { readonly apiKey: string | null; readonly baseUrl: string | null };
    readonly openaiCompatible: { readonly baseUrl: string | null; readonly apiKey: string | null };
    readonly maxRetries: number;
  };
  readonly agent: {
    readonly branchPrefix: string;
    readonly maxSteps: number;
    readonly maxWallClockMs: number;
    /** Input + output tokens per turn; 0 means unlimited. */
    readonly maxTokens: number;
    /** Same tool call with the same arguments this many times in a row ends the run. */
    readonly maxRepeatedCalls: number;
    readonly maxValidationRounds: number;
    readonly gitAuthorName: string;
    readonly gitAuthorEmail: string;
    readonly githubToken: string | null;
    readonly gitlabToken: string | null;
    /** Override of the GitHub API base (tests, proxies); default derived from the repository URL. */
    readonly githubApiUrl: string | null;
    readonly gitlabApiUrl: string | null;
    readonly worktreePool: number;
  };
  readonly webhooks: {
    readonly maxAttempts: number;
    readonly timeoutMs: number;
  };
  readonly analytics: {
    /** Delete events older than this many days; 0 keeps everything. */
    readonly retentionDays: number;
    /** Group-commit window: the writer flushes after this many ms or this many events. */
    readonly flushMs: number;
    readonly flushMaxEvents: number;
    /** A JSON file of extra agents ({agents: [...]}, the shape of src/analytics/agents.json), checked before the built-in list. */
    readonly agentsFile: string | null;
  };
}

export class ConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function str(env: Env, name: string, fallback: string): string {
  const v = env[name];
  return v === undefined || v.trim() === '' ? fallback : v.trim();
}

function optional(env: Env, name: string): string | null {
  const v = env[name];
  return v === undefined || v.trim() === '' ? null : v.trim();
}

function int(env: Env, name: string, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  if (!/^\d+$/.test(raw.trim())) throw new ConfigError(`${name} must be a whole number, got "${raw}".`);
  const n = Number(raw.trim());
  if (n < min || n > max) throw new ConfigError(`${name} must be between ${min} and ${max}, got ${n}.`);
  return n;
}

function bool(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return fallback;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${env[name]}".`);
}

function trustProxy(env: Env): boolean | number | string[] {
  const raw = env.FOLIO_TRUST_PROXY?.trim() ?? '';
  if (raw === '' || /^(false|no|off|0)$/i.test(raw)) return false;
  if (/^(true|yes|on)$/i.test(raw)) return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  const list = raw.split(',').map((s) => s.trim()).filter(Boolean);
  for (const item of list) {
    if (!/^[0-9a-fA-F:.]+(\/\d{1,3})?$/.test(item)) {
      throw new ConfigError(`FOLIO_TRUST_PROXY must be true, false, a hop count or addresses/CIDRs, got "${item}".`);
    }
  }
  return list;
}

/** Durations like `30s`, `20m`, `2h`, `7d`, or plain milliseconds. */
export function parseDuration(raw: string): number | null {
  const m = /^(\d+)(ms|s|m|h|d)?$/.exec(raw.trim());
  if (!m) return null;
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[(m[2] ?? 'ms') as 'ms'];
  return Number(m[1]) * unit;
}

function duration(env: Env, name: string, fallbackMs: number): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallbackMs;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(`${name} must be a duration such as 30s, 20m or 2h, got "${raw}".`);
  return ms;
}

const LOG_LEVELS: readonly LogLevel[] = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
const MODEL_ID = /^(anthropic|openai|openai-compatible)\/[A-Za-z0-9._:\-/]+$/;

function modelId(name: string, value: string): string {
  if (!MODEL_ID.test(value)) {
    throw new ConfigError(
      `${name} has "${value}", which is not a model id: use provider/model with provider anthropic, openai or openai-compatible.`,
    );
  }
  return value;
}

/** Reads the secret from FOLIO_SECRET, or from `<dataDir>/secret`, generating it once. */
function loadSecret(env: Env, dataDir: string): string {
  const given = optional(env, 'FOLIO_SECRET');
  if (given !== null) {
    if (given.length < 16) throw new ConfigError('FOLIO_SECRET must be at least 16 characters long.');
    return given;
  }
  const file = path.join(dataDir, 'secret');
  if (existsSync(file)) return readFileSync(file, 'utf8').trim();
  const secret = randomBytes(32).toString('base64url');
  writeFileSync(file, secret + '\n', { mode: 0o600, flag: 'wx' });
  return secret;
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = path.resolve(str(env, 'FOLIO_DATA_DIR', './data'));
  try {
    mkdirSync(dataDir, { recursive: true });
  } catch (err) {
    throw new ConfigError(`FOLIO_DATA_DIR "${dataDir}" cannot be created: ${(err as Error).message}`);
  }
  const logLevel = str(env, 'LOG_LEVEL', 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  }
  const databaseUrl = optional(env, 'DATABASE_URL');
  if (databaseUrl !== null && !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new ConfigError('DATABASE_URL must start with postgres:// or postgresql://.');
  }
  const clickhouseUrl = optional(env, 'CLICKHOUSE_URL');
  if (clickhouseUrl !== null && !/^https?:\/\//.test(clickhouseUrl)) {
    throw new ConfigError('CLICKHOUSE_URL must start with http:// or https://.');
  }
  const defaultModel = modelId('FOLIO_MODEL', str(env, 'FOLIO_MODEL', 'anthropic/claude-sonnet-4-5'));
  const allowed = str(env, 'FOLIO_MODELS', '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((m) => modelId('FOLIO_MODELS', m));
  if (!allowed.includes(defaultModel)) allowed.unshift(defaultModel);

  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: str(env, 'HOST', '127.0.0.1'),
    dataDir,
    secret: loadSecret(env, dataDir),
    logLevel,
    accessLog: bool(env, 'FOLIO_ACCESS_LOG', true),
    workers: int(env, 'FOLIO_WORKERS', 2, 0, 256),
    bodyLimitBytes: int(env, 'FOLIO_BODY_LIMIT', 1024 * 1024, 1024),
    trustProxy: trustProxy(env),
    databaseUrl,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    clickhouseUrl,
    rateLimits: {
      createJobPerHour: int(env, 'FOLIO_RATE_LIMIT_CREATE', 100, 0),
      followUpPerHour: int(env, 'FOLIO_RATE_LIMIT_FOLLOW_UP', 100, 0),
      analyticsReadsPerHour: int(env, 'FOLIO_RATE_LIMIT_ANALYTICS', 1000, 0),
      collectPerMinute: int(env, 'FOLIO_RATE_LIMIT_COLLECT', 120, 0),
    },
    queue: {
      leaseMs: duration(env, 'FOLIO_LEASE', 30_000),
      heartbeatMs: duration(env, 'FOLIO_HEARTBEAT', 2_000),
      pollMs: duration(env, 'FOLIO_POLL', 1_000),
      maxLostLeases: int(env, 'FOLIO_MAX_LOST_LEASES', 3, 1, 100),
    },
    models: {
      defaultModel,
      allowed: Object.freeze(allowed),
      anthropic: { apiKey: optional(env, 'ANTHROPIC_API_KEY'), baseUrl: optional(env, 'ANTHROPIC_BASE_URL') },
      openai: { apiKey: optional(env, 'OPENAI_API_KEY'), baseUrl: optional(env, 'OPENAI_BASE_URL') },
      openaiCompatible: {
        baseUrl: optional(env, 'OPENAI_COMPATIBLE_BASE_URL'),
        apiKey: optional(env, 'OPENAI_COMPATIBLE_API_KEY'),
      },
      maxRetries: int(env, 'FOLIO_MODEL_RETRIES', 4, 0, 20),
    },
    agent: {
      branchPrefix: str(env, 'FOLIO_BRANCH_PREFIX', 'folio/'),
      maxSteps: int(env, 'FOLIO_AGENT_MAX_STEPS', 50, 1, 10_000),
      maxWallClockMs: duration(env, 'FOLIO_AGENT_TIMEOUT', 20 * 60_000),
      maxTokens: int(env, 'FOLIO_AGENT_MAX_TOKENS', 2_000_000, 0),
      maxRepeatedCalls: int(env, 'FOLIO_AGENT_MAX_REPEATS', 5, 2, 1000),
      maxValidationRounds: int(env, 'FOLIO_AGENT_VALIDATION_ROUNDS', 3, 0, 20),
      gitAuthorName: str(env, 'FOLIO_GIT_AUTHOR_NAME', 'Folio Agent'),
      gitAuthorEmail: str(env, 'FOLIO_GIT_AUTHOR_EMAIL', 'agent@folio.invalid'),
      githubToken: optional(env, 'GITHUB_TOKEN'),
      gitlabToken: optional(env, 'GITLAB_TOKEN'),
      githubApiUrl: optional(env, 'GITHUB_API_URL'),
      gitlabApiUrl: optional(env, 'GITLAB_API_URL'),
      worktreePool: int(env, 'FOLIO_WORKTREE_POOL', Math.max(4, int(env, 'FOLIO_WORKERS', 2, 0, 256)), 0, 1024),
    },
    webhooks: {
      maxAttempts: int(env, 'FOLIO_WEBHOOK_ATTEMPTS', 5, 1, 50),
      timeoutMs: duration(env, 'FOLIO_WEBHOOK_TIMEOUT', 10_000),
    },
    analytics: {
      retentionDays: int(env, 'FOLIO_ANALYTICS_RETENTION_DAYS', 0, 0),
      flushMs: duration(env, 'FOLIO_ANALYTICS_FLUSH', 5),
      flushMaxEvents: int(env, 'FOLIO_ANALYTICS_FLUSH_MAX', 50_000, 1),
      agentsFile: optional(env, 'FOLIO_AGENTS_FILE'),
    },
  };
  return deepFreeze(config);
}

/** What child processes (git) inherit: what they need to run and reach the network, never Folio's secrets. */
const CHILD_ENV = /^(PATH|HOME|USER|LOGNAME|SHELL|TMPDIR|TMP|TEMP|LANG|LANGUAGE|TZ|SSL_CERT_FILE|SSL_CERT_DIR|SSH_AUTH_SOCK|(HTTP|HTTPS|NO|ALL)_PROXY|(http|https|no|all)_proxy)$/;

export function childProcessEnv(env: Env = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(env)) if (v !== undefined && CHILD_ENV.test(k)) out[k] = v;
  return out;
}

/** A secret the user names by its variable (e.g. `--repo-token-env GITHUB_DOCS_TOKEN`); null when empty. */
export function readNamedSecret(name: string, env: Env = process.env): string | null {
  return optional(env, name);
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
