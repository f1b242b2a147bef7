// The only reader of process.env. Everything else receives a frozen Config.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkBranchName, RepositoryInputError, type RemoteTransport, type RepositoryPolicy } from './git/repository-url.ts';
import { parseNetwork, type OutboundPolicy } from './net/address-policy.ts';
import { CodedError } from './errors.ts';
import { CODE_HOSTS, CODE_HOST_KINDS, type CodeHostKind } from './codehost/kinds.ts';

export type LogLevel = 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';

export interface Config {
  readonly port: number;
  readonly host: string;
  readonly dataDir: string;
  /** Key for keyed hashes (visitor ids) and the secret box of stored tokens. Never logged. */
  readonly secret: string;
  /**
   * What `POST /api/setup` needs to create the first owner: FOLIO_SETUP_TOKEN, or else derived from
   * the secret, so every process sharing a store has the same one. Shown only in the first-run line.
   */
  readonly setupToken: string;
  /** The Bearer token `/metrics` answers to (FOLIO_METRICS_TOKEN); null turns `/metrics` off. Never logged. */
  readonly metricsToken: string | null;
  readonly logLevel: LogLevel;
  /** One log line per request (method, route, status, time). */
  readonly accessLog: boolean;
  /** Agent workers in this process. 0 runs the API only. */
  readonly workers: number;
  readonly bodyLimitBytes: number;
  /** Limits on how long a client may take (ms); see docs/security.md. */
  readonly timeouts: {
    /** The request's headers must have arrived within this. */
    readonly headersMs: number;
    /** The whole request, headers and body, must have arrived within this. */
    readonly requestMs: number;
    /** A connection with no traffic either way is closed after this. */
    readonly idleMs: number;
    /** A kept-alive connection waits this long for its next request. */
    readonly keepAliveMs: number;
    /** A graceful shutdown (SIGTERM) ends the process after at most this, stalled clients or not. */
    readonly shutdownMs: number;
  };
  /**
   * Live event streams (SSE): how many may be open at once in this process, per API key and per
   * project; and how often each checks again, against the store, that its key or session still
   * gives access (a revocation in any process ends it within about this).
   */
  readonly streams: { readonly perKey: number; readonly perProject: number; readonly recheckMs: number };
  /** What repository URLs projects may use; see src/git/repository-url.ts. */
  readonly repositories: RepositoryPolicy;
  /** Networks Folio may reach for user-configured URLs although they are not public; see src/net/address-policy.ts. */
  readonly outbound: OutboundPolicy;
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
  /** Where people reach the dashboard (e.g. https://folio.example.com), for links in pull requests; null leaves them out. */
  readonly publicUrl: string | null;
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
    /** USD per million input and output tokens, by model id: the cost estimates of jobs. */
    readonly prices: Readonly<Record<string, ModelPrice>>;
  };
  /**
   * Each code host's operator settings (kinds.ts names the variables): the token used when a project
   * has none, and an API base URL overriding the one derived from the repository URL (GitHub
   * Enterprise, a proxy, tests).
   */
  readonly codeHosts: Readonly<Record<CodeHostKind, { readonly token: string | null; readonly apiUrl: string | null }>>;
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
    readonly worktreePool: number;
  };
  readonly webhooks: {
    readonly maxAttempts: number;
    readonly timeoutMs: number;
    /** Delay before the first retry; it doubles per attempt, up to 5 minutes. */
    readonly retryBaseMs: number;
  };
  /** Jobs started by code changes (webhooks from GitHub and GitLab). */
  readonly triggers: {
    /** Largest webhook body accepted; larger deliveries get 413. */
    readonly bodyLimitBytes: number;
    /**
     * Largest body read before its signature can be checked (GitHub: the HMAC covers the whole body),
     * at most bodyLimitBytes; larger gets 413. GitLab's token is checked before the body is read.
     */
    readonly unverifiedBodyLimitBytes: number;
    /** Timeout of one code host API call that reads a change. */
    readonly apiTimeoutMs: number;
    /** Deliveries older than this many days are forgotten (a redelivery after that starts a job again). */
    readonly deliveryRetentionDays: number;
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
  /** The site's own build as a check (src/site-build), run in a sandbox (src/sandbox). */
  readonly build: BuildConfig;
  /** What traffic proposes to the agent (src/suggestions). */
  readonly suggestions: {
    /** Days of traffic a suggestion looks at, unless the request names a range. */
    readonly days: number;
    /** A not-found path is proposed once this many distinct visitors (humans and AI; AI agents for Markdown addresses) asked for it. */
    readonly minVisitors: number;
  };
}

export interface BuildConfig {
  /** `bwrap` (the default) or `none`: builds run as Folio itself, only when the operator says so. */
  readonly sandbox: 'bwrap' | 'none';
  /** Where the builds' working copies and setup caches live: never inside the data directory. */
  readonly dir: string;
  /** Installed build tools, one folder each (scripts/install-build-tools.sh). */
  readonly toolsDir: string;
  /** The user and group builds run as when Folio runs as root (the kernel exempts root from process limits). */
  readonly uid: number;
  readonly gid: number;
  /** The setup step (installing a site's dependencies) may use the host's network. */
  readonly setupNetwork: boolean;
  /** A build's wall time unless the project sets its own; the setup step's. */
  readonly timeoutMs: number;
  readonly setupTimeoutMs: number;
  /** Writable memory per process, bytes. */
  readonly memoryBytes: number;
  /** Processes and threads at once. */
  readonly processes: number;
  /** Output kept; more stops the build. */
  readonly outputBytes: number;
}

export interface ModelPrice {
  /** USD per million input tokens. */
  readonly input: number;
  /** USD per million output tokens. */
  readonly output: number;
}

/**
 * List prices (USD per million tokens, standard tier, no caching) of common models when this was
 * written; FOLIO_MODEL_PRICES adds models and overrides these. Estimates only: check your invoice.
 */
export const DEFAULT_MODEL_PRICES: Readonly<Record<string, ModelPrice>> = {
  'anthropic/claude-opus-4-1': { input: 15, output: 75 },
  'anthropic/claude-sonnet-4-5': { input: 3, output: 15 },
  'anthropic/claude-sonnet-4-0': { input: 3, output: 15 },
  'anthropic/claude-haiku-4-5': { input: 1, output: 5 },
  'openai/gpt-5': { input: 1.25, output: 10 },
  'openai/gpt-5-mini': { input: 0.25, output: 2 },
  'openai/gpt-4.1': { input: 2, output: 8 },
  'openai/gpt-4o': { input: 2.5, output: 10 },
};

/** `provider/model=input:output,…` (USD per million tokens), e.g. `openai-compatible/qwen3-coder=0:0`. */
function modelPrices(env: Env): Record<string, ModelPrice> {
  const prices: Record<string, ModelPrice> = { ...DEFAULT_MODEL_PRICES };
  const raw = optional(env, 'FOLIO_MODEL_PRICES');
  if (raw === null) return prices;
  for (const item of raw.split(',').map((s) => s.trim()).filter(Boolean)) {
    const m = /^(.+)=(\d+(?:\.\d+)?):(\d+(?:\.\d+)?)$/.exec(item);
    if (!m) {
      throw new ConfigError(`FOLIO_MODEL_PRICES has "${item}": use provider/model=input:output in USD per million tokens, e.g. openai/gpt-5=1.25:10.`);
    }
    prices[modelId('FOLIO_MODEL_PRICES', m[1].trim())] = { input: Number(m[2]), output: Number(m[3]) };
  }
  return prices;
}

function publicUrl(env: Env): string | null {
  const raw = optional(env, 'FOLIO_PUBLIC_URL');
  if (raw === null) return null;
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw new ConfigError(`FOLIO_PUBLIC_URL must be an http(s) URL such as https://folio.example.com, got "${raw}".`);
  }
  if ((u.protocol !== 'http:' && u.protocol !== 'https:') || u.username || u.password || u.search || u.hash) {
    throw new ConfigError(`FOLIO_PUBLIC_URL must be an http(s) URL without credentials, query or fragment, got "${raw}".`);
  }
  return u.href.replace(/\/+$/, '');
}

export class ConfigError extends CodedError {
  constructor(message: string) {
    super('invalid_config', message);
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

function gitProtocols(env: Env): RemoteTransport[] {
  const list = str(env, 'FOLIO_GIT_PROTOCOLS', 'https')
    .split(',')
    .map((p) => p.trim().toLowerCase())
    .filter(Boolean);
  for (const p of list) {
    if (p !== 'https' && p !== 'http' && p !== 'ssh') {
      throw new ConfigError(`FOLIO_GIT_PROTOCOLS may list https, http and ssh, got "${p}".`);
    }
  }
  return [...new Set(['https', ...list])] as RemoteTransport[];
}

/** Job branches are `<prefix><job id>`: the prefix must make valid branch names. */
function branchPrefix(env: Env): string {
  const prefix = str(env, 'FOLIO_BRANCH_PREFIX', 'folio/');
  try {
    checkBranchName(`${prefix}job_0`, 'FOLIO_BRANCH_PREFIX');
  } catch (err) {
    if (err instanceof RepositoryInputError) throw new ConfigError(`${err.message.replace(/"[^"]*job_0"/, `"${prefix}"`)}`);
    throw err;
  }
  return prefix;
}

function outboundAllow(env: Env): string[] {
  const list = str(env, 'FOLIO_OUTBOUND_ALLOW', '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  for (const entry of list) {
    try {
      parseNetwork(entry);
    } catch (err) {
      throw new ConfigError(`FOLIO_OUTBOUND_ALLOW: ${(err as Error).message}`);
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

function duration(env: Env, name: string, fallbackMs: number, minMs = 0): number {
  const raw = env[name];
  if (raw === undefined || raw.trim() === '') return fallbackMs;
  const ms = parseDuration(raw);
  if (ms === null) throw new ConfigError(`${name} must be a duration such as 30s, 20m or 2h, got "${raw}".`);
  if (ms < minMs) throw new ConfigError(`${name} must be at least ${minMs} ms, got "${raw}".`);
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

/**
 * Reads the secret from FOLIO_SECRET, or from `<dataDir>/secret`, generating it once. Processes
 * starting together on a new data directory agree on one: the file appears whole or not at all
 * (written aside, then hard-linked into place, which fails if another process got there first).
 */
function loadSecret(env: Env, dataDir: string): string {
  const given = optional(env, 'FOLIO_SECRET');
  if (given !== null) {
    if (given.length < 16) throw new ConfigError('FOLIO_SECRET must be at least 16 characters long.');
    return given;
  }
  const file = path.join(dataDir, 'secret');
  const read = () => readFileSync(file, 'utf8').trim();
  try {
    return read();
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const secret = randomBytes(32).toString('base64url');
  const aside = `${file}.${process.pid}.${randomBytes(6).toString('hex')}`;
  writeFileSync(aside, secret + '\n', { mode: 0o600, flag: 'wx' });
  try {
    linkSync(aside, file);
    return secret;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return read();
  } finally {
    unlinkSync(aside);
  }
}

/** A token an operator sets for a client to send back: at least 16 visible ASCII characters. */
function operatorToken(env: Env, name: string): string | null {
  const token = optional(env, name);
  if (token !== null && !/^[\x21-\x7e]{16,512}$/.test(token)) {
    throw new ConfigError(`${name} must be 16 to 512 visible ASCII characters (no spaces).`);
  }
  return token;
}

/**
 * FOLIO_SETUP_TOKEN, or an HMAC of a constant under the secret: every process of a deployment
 * already shares the secret (the store refuses one with another), so each derives the same token
 * without storing anything, and the token reveals nothing of the secret.
 */
function setupToken(env: Env, secret: string): string {
  return operatorToken(env, 'FOLIO_SETUP_TOKEN') ?? createHmac('sha256', secret).update('folio setup token v1').digest('base64url');
}

export function loadConfig(env: Env = process.env): Config {
  const dataDir = createDataDir(env);
  const logLevel = logLevelOf(env);
  // Read in this order so that, of several bad variables, the same one is reported as before.
  const triggerBodyLimit = int(env, 'FOLIO_TRIGGER_BODY_LIMIT', 5 * 1024 * 1024, 1024, 25 * 1024 * 1024);
  const databaseUrl = urlOf(env, 'DATABASE_URL', /^postgres(ql)?:\/\//, 'postgres:// or postgresql://');
  const clickhouseUrl = urlOf(env, 'CLICKHOUSE_URL', /^https?:\/\//, 'http:// or https://');
  const modelChoice = modelChoiceOf(env);
  const secret = loadSecret(env, dataDir);
  const workers = int(env, 'FOLIO_WORKERS', 2, 0, 256);

  const config: Config = {
    port: int(env, 'PORT', 8080, 0, 65535),
    host: str(env, 'HOST', '127.0.0.1'),
    dataDir,
    secret,
    setupToken: setupToken(env, secret),
    metricsToken: operatorToken(env, 'FOLIO_METRICS_TOKEN'),
    logLevel,
    accessLog: bool(env, 'FOLIO_ACCESS_LOG', true),
    workers,
    bodyLimitBytes: int(env, 'FOLIO_BODY_LIMIT', 1024 * 1024, 1024),
    timeouts: timeoutsConfig(env),
    streams: {
      perKey: int(env, 'FOLIO_MAX_STREAMS_PER_KEY', 20, 1, 100_000),
      perProject: int(env, 'FOLIO_MAX_STREAMS_PER_PROJECT', 100, 1, 100_000),
      recheckMs: duration(env, 'FOLIO_STREAM_RECHECK', 2_000, 100),
    },
    repositories: {
      protocols: Object.freeze(gitProtocols(env)),
      allowLocal: bool(env, 'FOLIO_ALLOW_LOCAL_REPOSITORIES', false),
      caFile: optional(env, 'FOLIO_GIT_CA_FILE'),
    },
    outbound: { allow: Object.freeze(outboundAllow(env)) },
    trustProxy: trustProxy(env),
    databaseUrl,
    databasePoolSize: int(env, 'DATABASE_POOL_SIZE', 10, 1, 1000),
    clickhouseUrl,
    publicUrl: publicUrl(env),
    rateLimits: rateLimitsConfig(env),
    queue: {
      leaseMs: duration(env, 'FOLIO_LEASE', 30_000),
      heartbeatMs: duration(env, 'FOLIO_HEARTBEAT', 2_000),
      pollMs: duration(env, 'FOLIO_POLL', 1_000),
      maxLostLeases: int(env, 'FOLIO_MAX_LOST_LEASES', 3, 1, 100),
    },
    models: modelsConfig(env, modelChoice),
    codeHosts: codeHostsConfig(env),
    agent: agentConfig(env, workers),
    webhooks: {
      maxAttempts: int(env, 'FOLIO_WEBHOOK_ATTEMPTS', 5, 1, 50),
      timeoutMs: duration(env, 'FOLIO_WEBHOOK_TIMEOUT', 10_000, 1),
      retryBaseMs: duration(env, 'FOLIO_WEBHOOK_RETRY_BASE', 1_000, 1),
    },
    triggers: triggersConfig(env, triggerBodyLimit),
    analytics: {
      retentionDays: int(env, 'FOLIO_ANALYTICS_RETENTION_DAYS', 0, 0),
      flushMs: duration(env, 'FOLIO_ANALYTICS_FLUSH', 5),
      flushMaxEvents: int(env, 'FOLIO_ANALYTICS_FLUSH_MAX', 50_000, 1),
      agentsFile: optional(env, 'FOLIO_AGENTS_FILE'),
    },
    build: buildConfig(env, dataDir),
    suggestions: {
      days: int(env, 'FOLIO_SUGGESTIONS_DAYS', 30, 1, 366),
      minVisitors: int(env, 'FOLIO_SUGGESTIONS_MIN_VISITORS', 3, 1),
    },
  };
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    throw new ConfigError('FOLIO_HEADERS_TIMEOUT must not be longer than FOLIO_REQUEST_TIMEOUT (the headers are part of the request).');
  }
  return deepFreeze(config);
}

/** FOLIO_DATA_DIR, created when missing. */
function createDataDir(env: Env): string {
  const dataDir = path.resolve(str(env, 'FOLIO_DATA_DIR', './data'));
  try {
    // Only its owner may enter: it holds the databases, mirrors of private repositories and the secret.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new ConfigError(`FOLIO_DATA_DIR "${dataDir}" cannot be created: ${(err as Error).message}`);
  }
  return dataDir;
}

function logLevelOf(env: Env): LogLevel {
  const logLevel = str(env, 'LOG_LEVEL', 'info') as LogLevel;
  if (!LOG_LEVELS.includes(logLevel)) {
    throw new ConfigError(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}, got "${logLevel}".`);
  }
  return logLevel;
}

/** An optional URL variable whose scheme selects a backend (`schemes` says which, for the message). */
function urlOf(env: Env, name: string, scheme: RegExp, schemes: string): string | null {
  const url = optional(env, name);
  if (url !== null && !scheme.test(url)) throw new ConfigError(`${name} must start with ${schemes}.`);
  return url;
}

function timeoutsConfig(env: Env): Config['timeouts'] {
  return {
    headersMs: duration(env, 'FOLIO_HEADERS_TIMEOUT', 10_000, 1),
    requestMs: duration(env, 'FOLIO_REQUEST_TIMEOUT', 60_000, 1),
    idleMs: duration(env, 'FOLIO_IDLE_TIMEOUT', 60_000, 1),
    keepAliveMs: duration(env, 'FOLIO_KEEPALIVE_TIMEOUT', 5_000, 1),
    shutdownMs: duration(env, 'FOLIO_SHUTDOWN_TIMEOUT', 10_000, 1),
  };
}

function rateLimitsConfig(env: Env): Config['rateLimits'] {
  return {
    createJobPerHour: int(env, 'FOLIO_RATE_LIMIT_CREATE', 100, 0),
    followUpPerHour: int(env, 'FOLIO_RATE_LIMIT_FOLLOW_UP', 100, 0),
    analyticsReadsPerHour: int(env, 'FOLIO_RATE_LIMIT_ANALYTICS', 1000, 0),
    collectPerMinute: int(env, 'FOLIO_RATE_LIMIT_COLLECT', 120, 0),
  };
}

/** FOLIO_MODEL and FOLIO_MODELS: the default model is always among the allowed ones. */
function modelChoiceOf(env: Env): { defaultModel: string; allowed: string[] } {
  const defaultModel = modelId('FOLIO_MODEL', str(env, 'FOLIO_MODEL', 'anthropic/claude-sonnet-4-5'));
  const allowed = str(env, 'FOLIO_MODELS', '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((m) => modelId('FOLIO_MODELS', m));
  if (!allowed.includes(defaultModel)) allowed.unshift(defaultModel);
  return { defaultModel, allowed };
}

function modelsConfig(env: Env, { defaultModel, allowed }: { defaultModel: string; allowed: string[] }): Config['models'] {
  return {
    defaultModel,
    allowed: Object.freeze(allowed),
    anthropic: { apiKey: optional(env, 'ANTHROPIC_API_KEY'), baseUrl: optional(env, 'ANTHROPIC_BASE_URL') },
    openai: { apiKey: optional(env, 'OPENAI_API_KEY'), baseUrl: optional(env, 'OPENAI_BASE_URL') },
    openaiCompatible: {
      baseUrl: optional(env, 'OPENAI_COMPATIBLE_BASE_URL'),
      apiKey: optional(env, 'OPENAI_COMPATIBLE_API_KEY'),
    },
    maxRetries: int(env, 'FOLIO_MODEL_RETRIES', 4, 0, 20),
    prices: modelPrices(env),
  };
}

/** Each code host's operator token and API URL, from the variables that host names. */
function codeHostsConfig(env: Env): Config['codeHosts'] {
  return Object.fromEntries(
    CODE_HOST_KINDS.map((kind) => {
      const names: { token: string; apiUrl: string } | null = CODE_HOSTS[kind].env;
      return [kind, { token: names && optional(env, names.token), apiUrl: names && optional(env, names.apiUrl) }];
    }),
  ) as Config['codeHosts'];
}

function agentConfig(env: Env, workers: number): Config['agent'] {
  return {
    branchPrefix: branchPrefix(env),
    maxSteps: int(env, 'FOLIO_AGENT_MAX_STEPS', 50, 1, 10_000),
    maxWallClockMs: duration(env, 'FOLIO_AGENT_TIMEOUT', 20 * 60_000),
    maxTokens: int(env, 'FOLIO_AGENT_MAX_TOKENS', 2_000_000, 0),
    maxRepeatedCalls: int(env, 'FOLIO_AGENT_MAX_REPEATS', 5, 2, 1000),
    maxValidationRounds: int(env, 'FOLIO_AGENT_VALIDATION_ROUNDS', 3, 0, 20),
    gitAuthorName: str(env, 'FOLIO_GIT_AUTHOR_NAME', 'Folio Agent'),
    gitAuthorEmail: str(env, 'FOLIO_GIT_AUTHOR_EMAIL', 'agent@folio.invalid'),
    worktreePool: int(env, 'FOLIO_WORKTREE_POOL', Math.max(4, workers), 0, 1024),
  };
}

function buildConfig(env: Env, dataDir: string): BuildConfig {
  const sandbox = str(env, 'FOLIO_BUILD_SANDBOX', 'bwrap');
  if (sandbox !== 'bwrap' && sandbox !== 'none') throw new ConfigError(`FOLIO_BUILD_SANDBOX must be bwrap or none, got "${sandbox}".`);
  const dir = path.resolve(str(env, 'FOLIO_BUILD_DIR', path.join(os.tmpdir(), `folio-build-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`)));
  if (dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`)) throw new ConfigError('FOLIO_BUILD_DIR must be outside FOLIO_DATA_DIR: builds run as another user, who must never reach the data directory.');
  return {
    sandbox,
    dir,
    toolsDir: path.resolve(str(env, 'FOLIO_BUILD_TOOLS_DIR', '/opt/folio/build-tools')),
    uid: int(env, 'FOLIO_BUILD_UID', 65534, 1, 2 ** 32 - 2),
    gid: int(env, 'FOLIO_BUILD_GID', 65534, 1, 2 ** 32 - 2),
    setupNetwork: bool(env, 'FOLIO_BUILD_SETUP_NETWORK', false),
    timeoutMs: duration(env, 'FOLIO_BUILD_TIMEOUT', 5 * 60_000, 1_000),
    setupTimeoutMs: duration(env, 'FOLIO_BUILD_SETUP_TIMEOUT', 15 * 60_000, 1_000),
    memoryBytes: int(env, 'FOLIO_BUILD_MEMORY_MB', 4096, 64, 1024 * 1024) * 1024 * 1024,
    processes: int(env, 'FOLIO_BUILD_PROCESSES', 512, 8, 100_000),
    outputBytes: int(env, 'FOLIO_BUILD_OUTPUT_KB', 1024, 16, 1024 * 1024) * 1024,
  };
}

function triggersConfig(env: Env, bodyLimitBytes: number): Config['triggers'] {
  return {
    bodyLimitBytes,
    unverifiedBodyLimitBytes: Math.min(int(env, 'FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT', 1024 * 1024, 1024, 25 * 1024 * 1024), bodyLimitBytes),
    apiTimeoutMs: duration(env, 'FOLIO_TRIGGER_API_TIMEOUT', 10_000),
    deliveryRetentionDays: int(env, 'FOLIO_TRIGGER_DELIVERY_RETENTION_DAYS', 30, 1, 3650),
  };
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
