// The only reader of process.env. Everything else receives a frozen Config.
import { createHash, createHmac, randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkBranchName, RepositoryInputError, type RemoteTransport, type RepositoryPolicy } from './git/repository-url.ts';
import { parseNetwork, type OutboundPolicy } from './net/address-policy.ts';
import { CodedError } from './errors.ts';
import { CODE_HOSTS, CODE_HOST_KINDS, type CodeHostKind } from './codehost/kinds.ts';
import { Ajv, type ErrorObject } from 'ajv';
import envSchema from 'env-schema';
import { Type, type Static } from 'typebox';

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];

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
  /** Whether saving a project asks its repository (git ls-remote) for the base branch first; see src/admin/repository-check.ts. */
  readonly repositoryCheck: boolean;
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
function modelPrices(e: EnvValues): Record<string, ModelPrice> {
  const prices: Record<string, ModelPrice> = { ...DEFAULT_MODEL_PRICES };
  const raw = optional(e, 'FOLIO_MODEL_PRICES');
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

function publicUrl(e: EnvValues): string | null {
  const raw = optional(e, 'FOLIO_PUBLIC_URL');
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

/** Durations like `30s`, `20m`, `2h`, `7d`, or plain milliseconds. */
const DURATION = '^(\\d+)(ms|s|m|h|d)?$';
const BOOLEAN_WORDS = ['1', '0', 'true', 'false', 'yes', 'no', 'on', 'off'];

/** One variable: its schema, the section of docs/configuration.md its row is in, what it means, and its default in words when the value does not say it. */
const doc = (section: string, description: string, shown?: string) => ({ section, description, ...(shown ? { shown } : {}) });
const int = (fallback: number | undefined, minimum: number, maximum: number, d: ReturnType<typeof doc>) => Type.Optional(Type.Integer({ default: fallback, minimum, maximum, ...d }));
const text = (fallback: string | undefined, d: ReturnType<typeof doc>) => Type.Optional(Type.String({ default: fallback, ...d }));
const duration = (fallback: string, d: ReturnType<typeof doc>) => Type.Optional(Type.String({ default: fallback, pattern: DURATION, ...d }));
const flag = (fallback: boolean, d: ReturnType<typeof doc>) => Type.Optional(Type.String({ default: String(fallback), enum: BOOLEAN_WORDS, ...d }));
const choice = (values: readonly string[], fallback: string, d: ReturnType<typeof doc>) => Type.Optional(Type.String({ default: fallback, enum: [...values], ...d }));
const MAX_INT = Number.MAX_SAFE_INTEGER;

const SERVER = 'Server';
const HOSTILE = 'Hostile clients and outbound requests';
const RATES = 'Rate limits';
const QUEUE = 'Queue and workers';
const MODELS = 'Models';
const AGENT = 'Agent, git and code hosts';
const BUILD = 'The site build';
const TRIGGERS = 'Code-change triggers';
const ANALYTICS = 'Analytics';
const SCALE = 'Scale-out';

/** Each code host's operator token and API URL (kinds.ts names the variables). */
function codeHostVariables() {
  const out: Record<string, ReturnType<typeof text>> = {};
  for (const kind of CODE_HOST_KINDS) {
    const env = CODE_HOSTS[kind].env;
    if (!env) continue;
    const { label } = CODE_HOSTS[kind];
    out[env.token] = text(undefined, doc(AGENT, `The operator's ${label} repository and API credential, **bound to one host**: ${env.webHost}, or the host of \`${env.apiUrl}\` when set. A project whose repository is on any other host never receives it; it uses its own token (\`folio project update ID --repo-token-env VAR\`, or the dashboard's project settings), and a job that needs one fails with \`repository_token_required\`. A per-project token overrides it and goes only to its repository's host. Passed to git only through the git process's environment. Declared with the host in \`src/codehost/kinds.ts\`.`));
    out[env.apiUrl] = text(undefined, doc(AGENT, `The operator's ${label} API base (e.g. self-hosted: \`https://${label.toLowerCase()}.example.com${kind === 'github' ? '/api/v3' : '/api/v4'}\`). It is used, and trusted as it is, for repositories on its host only; for a repository elsewhere the API is derived from the repository URL and called through the outbound address policy.`, 'derived'));
  }
  return out;
}

/**
 * Every variable Folio reads, stated once: its type, default and bounds (validated by env-schema),
 * and its row of docs/configuration.md (\`npm run docs:config\` writes the tables from here).
 */
export const ENV_SCHEMA = Type.Object({
  PORT: int(8080, 0, 65535, doc(SERVER, 'HTTP port (`0` picks a free one).')),
  HOST: text('127.0.0.1', doc(SERVER, 'Interface to listen on; `0.0.0.0` for all.')),
  FOLIO_DATA_DIR: text('./data', doc(SERVER, 'SQLite and DuckDB files, git mirrors and worktrees, the generated secret. Created when missing, mode 0700; files in it are 0600. A directory other users can read gets a warning at start.')),
  FOLIO_SECRET: Type.Optional(Type.String({ minLength: 16, ...doc(SERVER, "Key for keyed hashes (visitor ids) and for sealing the secrets stored in the database — repository tokens, webhook secrets, code-change trigger secrets and tokens (AES-256-GCM, key derived by HKDF). At least 16 characters. When not given, 32 random bytes are generated once and kept in `<data dir>/secret` (mode 0600). Never logged. Every process of one installation needs the same value; changing it makes stored tokens unreadable (jobs then fail with `project_secret_unreadable` until the tokens are set again).", 'generated') })),
  FOLIO_SETUP_TOKEN: text(undefined, doc(SERVER, "What creating the first owner needs (`POST /api/setup`'s `setupToken`): 16–512 visible ASCII characters. When not given, an HMAC-SHA256 of a constant keyed with `FOLIO_SECRET`, so every process sharing a store has the same one without storing it. `folio serve` prints it, in the link `<dashboard>/setup#token=…`, only while no owner exists; never logged otherwise. Once the owner exists it opens nothing.", 'derived from `FOLIO_SECRET`')),
  FOLIO_METRICS_TOKEN: text(undefined, doc(SERVER, 'Turns on `GET /metrics` (Prometheus text) for requests with `Authorization: Bearer <this token>` (16–512 visible ASCII characters); others get 401 `invalid_metrics_token` or `missing_metrics_token`. Unset, there is no `/metrics` route (404) and no request is counted. In Prometheus: `authorization: { credentials: <token> }` in the scrape config.')),
  LOG_LEVEL: choice(LOG_LEVELS, 'info', doc(SERVER, '`fatal`, `error`, `warn`, `info`, `debug`, `trace` or `silent`. Logs are JSON lines (pino) with request ids; the `Authorization` header and keys are never logged.')),
  FOLIO_ACCESS_LOG: flag(true, doc(SERVER, 'One log line per request.')),
  FOLIO_WORKERS: int(2, 0, 256, doc(SERVER, 'Agent workers in this process; `0` runs the API only (same as `folio serve --no-workers`).')),
  FOLIO_BODY_LIMIT: int(1024 * 1024, 1024, MAX_INT, doc(SERVER, 'Largest request body in bytes; larger bodies get 413.')),
  FOLIO_TRUST_PROXY: text('false', doc(SERVER, "Behind a reverse proxy or load balancer: which proxies' `X-Forwarded-For`/`-Proto` to believe — `true` (any), a hop count, or addresses/CIDRs (`10.0.0.0/8,127.0.0.1`). Decides the client IP (per-client collect limits, sign-in limits, visitor ids of browser page views) and whether session cookies are `Secure`. Left `false`, those headers are ignored, so clients cannot forge their address.")),
  FOLIO_PUBLIC_URL: text(undefined, doc(SERVER, 'Where people reach the dashboard, e.g. `https://folio.example.com` (an http(s) URL without credentials, query or fragment; a path prefix is kept). Pull request descriptions link to the job at `<url>/projects/<project>/jobs/<job>`; without it they name the job id only.')),
  FOLIO_HEADERS_TIMEOUT: duration('10s', doc(HOSTILE, "A request's headers must arrive within this (Node's `headersTimeout`). At most `FOLIO_REQUEST_TIMEOUT`.")),
  FOLIO_REQUEST_TIMEOUT: duration('60s', doc(HOSTILE, "The whole request, headers and body, must arrive within this; a client that stalls mid-body gets 408 and is disconnected. The CLI's imports send batches small enough for it.")),
  FOLIO_IDLE_TIMEOUT: duration('60s', doc(HOSTILE, 'A connection with no traffic either way is closed (live event streams send a keep-alive every 15 s).')),
  FOLIO_KEEPALIVE_TIMEOUT: duration('5s', doc(HOSTILE, 'How long a kept-alive connection waits for its next request.')),
  FOLIO_SHUTDOWN_TIMEOUT: duration('10s', doc(HOSTILE, 'SIGTERM: requests in flight get this long; connections still open are then cut, workers release their job leases and the process exits.')),
  FOLIO_MAX_STREAMS_PER_KEY: int(20, 1, 100_000, doc(HOSTILE, 'Live event streams (SSE) open at once in one process per API key (or dashboard user); more get 429 `too_many_streams`.')),
  FOLIO_MAX_STREAMS_PER_PROJECT: int(100, 1, 100_000, doc(HOSTILE, 'Live event streams open at once in one process per project; more get 429 `too_many_streams`.')),
  FOLIO_STREAM_RECHECK: duration('2s', doc(HOSTILE, 'How often each live event stream checks again, against the store (no cache), that what opened it still holds: the key (not revoked, expired or deleted, still covering the project), the dashboard session (not signed out or expired, its user not removed), the project and the job. A stream that fails ends with a last `event: error` whose data is `{code, error}`. Every batch of events is also checked just before it is sent, so nothing written after a revocation reaches a stream. One check per key (or session) and project per round, however many streams share it. At least `100ms`.')),
  FOLIO_GIT_CA_FILE: text(undefined, doc(HOSTILE, "A PEM file of the certificates git trusts for https repositories, instead of the system's (a code host behind a private CA).")),
  FOLIO_GIT_PROTOCOLS: text('https', doc(HOSTILE, "Transports a project's repository may use besides https: add `http` and/or `ssh` (scp-like `git@host:org/repo.git` is ssh). git runs with `GIT_ALLOW_PROTOCOL` set to exactly these, so remote helpers such as `ext::` never run.")),
  FOLIO_ALLOW_LOCAL_REPOSITORIES: flag(false, doc(HOSTILE, 'Allow `file://` URLs and absolute local paths as repositories (for operators and tests).')),
  FOLIO_REPOSITORY_CHECK: flag(true, doc(AGENT, "Saving a project (dashboard or `folio project create`/`update`) asks its repository whether it exists and has the base branch (`git ls-remote`, with the project's credentials, through the same address policy as jobs), so a typo is refused then and not at the first job. A host that cannot be reached (network error, 15 s without an answer) only adds a warning. `false` saves without asking (offline setups, tests).")),
  FOLIO_OUTBOUND_ALLOW: text(undefined, doc(HOSTILE, 'Networks Folio may reach for user-configured URLs although they are not public: a comma-separated list of addresses or CIDRs (`10.0.0.0/8,fd00::/8`). Without it, webhook receivers, repository hosts and the code-host API derived from a repository URL must be public addresses (loopback, private, link-local/metadata, unique-local and CGNAT are refused). Set it for an intranet GitLab or webhook receiver. Operator-set URLs (`GITHUB_API_URL`, model providers, `CLICKHOUSE_URL`) are not restricted.')),
  FOLIO_RATE_LIMIT_CREATE: int(100, 0, MAX_INT, doc(RATES, 'Job creations per project per hour.')),
  FOLIO_RATE_LIMIT_FOLLOW_UP: int(100, 0, MAX_INT, doc(RATES, "Follow-up messages per project per hour (the seed's limit).")),
  FOLIO_RATE_LIMIT_ANALYTICS: int(1000, 0, MAX_INT, doc(RATES, 'Analytics reads per project per hour.')),
  FOLIO_RATE_LIMIT_COLLECT: int(120, 0, MAX_INT, doc(RATES, 'Browser page views per client IP per minute on the public collect endpoint.')),
  FOLIO_LEASE: duration('30s', doc(QUEUE, "How long a worker's claim on a job lasts without a heartbeat. A job whose process dies is resumed by another worker after this.")),
  FOLIO_HEARTBEAT: duration('2s', doc(QUEUE, "How often a running job's lease is renewed; also how soon a run notices an archive made by another process.")),
  FOLIO_POLL: duration('1s', doc(QUEUE, 'Safety-net poll of idle workers. New work wakes workers in the same process at once (and across processes on PostgreSQL through LISTEN/NOTIFY).')),
  FOLIO_MAX_LOST_LEASES: int(3, 1, 100, doc(QUEUE, 'After this many lost leases a job ends `failed` with `error.code = "worker_lost"`.')),
  FOLIO_MODEL: text('anthropic/claude-sonnet-4-5', doc(MODELS, 'Default model for projects that name none.')),
  FOLIO_MODELS: text(undefined, doc(MODELS, 'Comma-separated models a request may name in `model`.', '(the default)')),
  ANTHROPIC_API_KEY: text(undefined, doc(MODELS, 'For `anthropic/…` models.')),
  ANTHROPIC_BASE_URL: text(undefined, doc(MODELS, 'Another endpoint for `anthropic/…` models.')),
  OPENAI_API_KEY: text(undefined, doc(MODELS, 'For `openai/…` models.')),
  OPENAI_BASE_URL: text(undefined, doc(MODELS, 'Another endpoint for `openai/…` models.')),
  OPENAI_COMPATIBLE_BASE_URL: text(undefined, doc(MODELS, 'For `openai-compatible/…`: any Chat Completions server (Ollama `http://localhost:11434/v1`, vLLM, llama.cpp, LM Studio).')),
  OPENAI_COMPATIBLE_API_KEY: text(undefined, doc(MODELS, 'The key of that server, when it needs one.')),
  FOLIO_MODEL_RETRIES: int(4, 0, 20, doc(MODELS, 'Retries on provider rate limits and transient errors before a job fails with `model_error`.')),
  FOLIO_MODEL_PRICES: text(undefined, doc(MODELS, 'Prices for the cost estimates of jobs (`usage.estimatedCostUsd`, the Usage page): comma-separated `provider/model=input:output` in USD per million tokens, e.g. `openai-compatible/qwen3-coder=0:0,anthropic/claude-sonnet-4-5=3:15`. Adds to and overrides the list prices built into `src/config.ts` (Claude Opus 4.1, Sonnet 4.5/4, Haiku 4.5; GPT-5, GPT-5 mini, GPT-4.1, GPT-4o). A model without a price has `estimatedCostUsd: null`. Costs are computed when read, so a corrected price applies to past jobs too.', 'built-in list')),
  FOLIO_BRANCH_PREFIX: text('folio/', doc(AGENT, 'Job branches are `<prefix><job id>`.')),
  FOLIO_AGENT_MAX_STEPS: int(50, 1, 10_000, doc(AGENT, 'Model steps per turn (`step_limit`).')),
  FOLIO_AGENT_TIMEOUT: duration('20m', doc(AGENT, 'Wall-clock limit per turn (`time_limit`).')),
  FOLIO_AGENT_MAX_TOKENS: int(2_000_000, 0, MAX_INT, doc(AGENT, 'Input + output tokens per turn (`token_budget`); `0` unlimited.')),
  FOLIO_AGENT_MAX_REPEATS: int(5, 2, 1000, doc(AGENT, 'The same tool call repeated this many times in a row ends the turn (`no_progress`).')),
  FOLIO_AGENT_VALIDATION_ROUNDS: int(3, 0, 20, doc(AGENT, 'Rounds the model gets to fix invalid MDX/JSON/YAML and the problems the docs checks found, before `validation_failed` (or, for a project with `checks: strict`, `checks_failed`).')),
  FOLIO_WORKTREE_POOL: int(undefined, 0, 1024, doc(AGENT, 'Prepared worktrees kept per process for reuse, so a later job checks out only what changed (`0` disables the pool).', 'larger of 4 and `FOLIO_WORKERS`')),
  FOLIO_GIT_AUTHOR_NAME: text('Folio Agent', doc(AGENT, "Author of the agent's commits.")),
  FOLIO_GIT_AUTHOR_EMAIL: text('agent@folio.invalid', doc(AGENT, "Email of the agent's commits.")),
  ...codeHostVariables(),
  FOLIO_WEBHOOK_ATTEMPTS: int(5, 1, 50, doc(AGENT, 'Delivery attempts per webhook event. Deliveries wait in a durable outbox in the state store, so retries survive restarts.')),
  FOLIO_WEBHOOK_TIMEOUT: duration('10s', doc(AGENT, 'Timeout of one webhook delivery attempt.')),
  FOLIO_WEBHOOK_RETRY_BASE: duration('1s', doc(AGENT, 'Delay before the first retry; it doubles per attempt, up to 5 minutes.')),
  FOLIO_BUILD_SANDBOX: choice(['bwrap', 'none'], 'bwrap', doc(BUILD, '`bwrap`: builds run under bubblewrap (Debian package `bubblewrap`); without it, or where it cannot create a sandbox, the build check is skipped with one sentence saying why. `none`: builds run unsandboxed, as Folio\'s own user, with the same clean environment, output cap, time, memory and file-size limits but no namespaces and no process limit — only for a trusted repository on a machine that cannot run bubblewrap.')),
  FOLIO_BUILD_DIR: text(undefined, doc(BUILD, "Where builds' working copies (`work/`) and setup results (`setup/`) live. Must be outside `FOLIO_DATA_DIR` (refused at start otherwise): builds may reach this folder, never the data. Created 0711, each copy 0700.", '`<tmp>/folio-build-<hash of the data directory>`')),
  FOLIO_BUILD_TOOLS_DIR: text('/opt/folio/build-tools', doc(BUILD, 'The tool cache, mounted read-only into builds: `mint/` holds the Mintlify CLI (`scripts/install-build-tools.sh [DIR]` installs the pinned version; in the image, the build argument `FOLIO_BUILD_TOOLS=mint` does: see [deployment](deployment.md#the-build-sandbox-in-a-container)). Must be readable by `FOLIO_BUILD_UID` when Folio runs as root.')),
  FOLIO_BUILD_UID: int(65534, 1, 2 ** 32 - 2, doc(BUILD, "The user bubblewrap runs as **when Folio runs as root** (65534 is nobody): the kernel never applies the process limit to root's processes, even in a user namespace. Unused when Folio is not root (then builds map to Folio's own user, whose process limit holds inside the sandbox's user namespace).")),
  FOLIO_BUILD_GID: int(65534, 1, 2 ** 32 - 2, doc(BUILD, 'The group of that user.')),
  FOLIO_BUILD_SETUP_NETWORK: flag(false, doc(BUILD, "Let the setup step (installing a site's dependencies: Docusaurus's `npm ci`, a project's `buildSetup`) use the host's network. The build itself never has a network.")),
  FOLIO_BUILD_TIMEOUT: duration('5m', doc(BUILD, 'Wall time of a build, unless the project sets `buildTimeoutSeconds`; then the whole sandbox is killed. At least `1s`.')),
  FOLIO_BUILD_SETUP_TIMEOUT: duration('15m', doc(BUILD, 'Wall time of a setup step. At least `1s`.')),
  FOLIO_BUILD_MEMORY_MB: int(4096, 64, 1024 * 1024, doc(BUILD, 'Writable memory of each process of a build (`RLIMIT_DATA`) and the largest file it may write (`RLIMIT_FSIZE`). Per process, not for the build as a whole (see security).')),
  FOLIO_BUILD_PROCESSES: int(512, 8, 100_000, doc(BUILD, "Processes and threads of one build at once (`RLIMIT_NPROC`, counted in the build's own user namespace).")),
  FOLIO_BUILD_OUTPUT_KB: int(1024, 16, 1024 * 1024, doc(BUILD, 'Output of a build kept; a build that prints more is stopped and fails.')),
  FOLIO_TRIGGER_BODY_LIMIT: int(5 * 1024 * 1024, 1024, 25 * 1024 * 1024, doc(TRIGGERS, 'Largest webhook body in bytes; larger gets 413. GitLab bodies (read once `X-Gitlab-Token` checked out) go up to it.')),
  FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT: int(1024 * 1024, 1024, 25 * 1024 * 1024, doc(TRIGGERS, "Largest webhook body read before its signature can be checked, in bytes (at most `FOLIO_TRIGGER_BODY_LIMIT`: a larger value is lowered to it). GitHub's `X-Hub-Signature-256` is an HMAC over the whole body, so this is GitHub's body limit; larger gets 413. Raise it if pushes listing very many commits are refused.")),
  FOLIO_TRIGGER_API_TIMEOUT: duration('10s', doc(TRIGGERS, 'Timeout of one code host API call that reads a change (pull request files, comparisons).')),
  FOLIO_TRIGGER_DELIVERY_RETENTION_DAYS: int(30, 1, 3650, doc(TRIGGERS, 'Recorded deliveries older than this many days are deleted. What each handled change meant (its pushed range, pull request and commit) is kept with the project, so a redelivery or replay after that still starts nothing.')),
  FOLIO_ANALYTICS_RETENTION_DAYS: int(0, 0, MAX_INT, doc(ANALYTICS, 'Delete page views older than this many days; `0` keeps everything.')),
  FOLIO_ANALYTICS_FLUSH: duration('5', doc(ANALYTICS, 'Group-commit window: concurrent ingest requests within it share one durable write.', '`5` (ms)')),
  FOLIO_ANALYTICS_FLUSH_MAX: int(50_000, 1, MAX_INT, doc(ANALYTICS, 'Events per group-commit write at most.')),
  FOLIO_SUGGESTIONS_DAYS: int(30, 1, 366, doc(ANALYTICS, 'Days of traffic the suggestions look at (`GET /v2/agent/{projectId}/suggestions`) unless the request names a range.')),
  FOLIO_SUGGESTIONS_MIN_VISITORS: int(3, 1, MAX_INT, doc(ANALYTICS, "Distinct visitors (humans and AI; AI agents for `.md` and `llms.txt` addresses) a not-found path needs before it is proposed; a request's `minVisitors` overrides it. The weekly automatic job uses the project's own threshold (`autoFixMinVisitors`), counted in server-derived identities (address and user agent) only.")),
  FOLIO_AGENTS_FILE: text(undefined, doc(ANALYTICS, 'A JSON file of extra AI agents and crawlers (`{"agents": [...]}`, the shape of `src/analytics/agents.json`), tried before the built-in list, and optionally of referring hosts (`"referrers": [{"host", "category"}]`, category `ai_assistant`, `search` or `social`); checked at start. On DuckDB, the first start after a change of its `ai_assistant` hosts folds the per-path rows of referring hosts again (seconds at 10M events). See [docs/analytics.md](analytics.md#adding-an-agent-without-a-release).')),
  DATABASE_URL: Type.Optional(Type.String({ pattern: '^postgres(ql)?://', ...doc(SCALE, '`postgres://…` moves state and the job queue to PostgreSQL (any number of API and worker processes).') })),
  DATABASE_POOL_SIZE: int(10, 1, 1000, doc(SCALE, 'PostgreSQL connections per process.')),
  CLICKHOUSE_URL: Type.Optional(Type.String({ pattern: '^https?://', ...doc(SCALE, '`http://…` moves analytics events to ClickHouse.') })),
});

/** The variables as validated: numbers for whole numbers, defaults filled in. */
type EnvValues = Static<typeof ENV_SCHEMA> & Record<string, string | number | undefined>;

/**
 * The environment checked against ENV_SCHEMA by env-schema (its Ajv: whole numbers coerced, defaults
 * filled in); an empty or blank value counts as unset. The first problem is a ConfigError, one
 * sentence naming the variable.
 */
function validatedEnv(env: Env): EnvValues {
  const given: Record<string, string> = {};
  for (const name of Object.keys(ENV_SCHEMA.properties)) {
    const v = env[name]?.trim();
    if (v) given[name] = BOOLEAN_NAMES.has(name) ? v.toLowerCase() : v;
  }
  try {
    return envSchema<EnvValues>({ schema: ENV_SCHEMA, data: given, env: false, ajv: AJV });
  } catch (err) {
    const first = ((err as { errors?: ErrorObject[] }).errors ?? [])[0];
    if (!first) throw err;
    throw new ConfigError(sentenceOf(first, given));
  }
}

/** env-schema's Ajv options, made once (so the schema compiles once), knowing the docs' keywords. */
const AJV = new Ajv({ allErrors: true, removeAdditional: true, useDefaults: true, coerceTypes: true, allowUnionTypes: true, addUsedSchema: false, keywords: ['section', 'shown'] });

/** The true-or-false variables (their values are read in any case). */
const BOOLEAN_NAMES = new Set(Object.entries(ENV_SCHEMA.properties).filter(([, s]) => (s as { enum?: readonly string[] }).enum === BOOLEAN_WORDS).map(([n]) => n));

/** What is wrong with a variable, in one sentence naming it. */
function sentenceOf(e: ErrorObject, given: Record<string, string>): string {
  const name = e.instancePath.slice(1);
  const schema = (ENV_SCHEMA.properties as Record<string, { minimum?: number; maximum?: number; enum?: string[]; minLength?: number; pattern?: string }>)[name] ?? {};
  const got = given[name];
  switch (e.keyword) {
    case 'type':
      return `${name} must be a whole number, got "${got}".`;
    case 'minimum':
    case 'maximum':
      return schema.maximum === MAX_INT ? `${name} must be at least ${schema.minimum}, got ${got}.` : `${name} must be between ${schema.minimum} and ${schema.maximum}, got ${got}.`;
    case 'enum':
      return BOOLEAN_NAMES.has(name) ? `${name} must be true or false, got "${got}".` : `${name} must be one of ${schema.enum!.join(', ')}, got "${got}".`;
    case 'minLength':
      return `${name} must be at least ${schema.minLength} characters long.`;
    case 'pattern':
      return schema.pattern === DURATION ? `${name} must be a duration such as 30s, 20m or 2h, got "${got}".` : `${name} must start with ${name === 'DATABASE_URL' ? 'postgres:// or postgresql://' : 'http:// or https://'}.`;
    default:
      return `${name} ${e.message ?? 'is not valid'}.`;
  }
}

/** A duration variable in ms (validated as DURATION); at least `minMs`. */
function ms(e: EnvValues, name: string, minMs = 0): number {
  const raw = e[name] as string;
  const value = parseDuration(raw)!;
  if (value < minMs) throw new ConfigError(`${name} must be at least ${minMs} ms, got "${raw}".`);
  return value;
}

const num = (e: EnvValues, name: string) => e[name] as number;
const str = (e: EnvValues, name: string) => e[name] as string;
const optional = (e: EnvValues, name: string) => (e[name] as string | undefined) ?? null;
const yes = (e: EnvValues, name: string) => ['1', 'true', 'yes', 'on'].includes(e[name] as string);

function trustProxy(e: EnvValues): boolean | number | string[] {
  const raw = str(e, 'FOLIO_TRUST_PROXY');
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

function gitProtocols(e: EnvValues): RemoteTransport[] {
  const list = str(e, 'FOLIO_GIT_PROTOCOLS')
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
function branchPrefix(e: EnvValues): string {
  const prefix = str(e, 'FOLIO_BRANCH_PREFIX');
  try {
    checkBranchName(`${prefix}job_0`, 'FOLIO_BRANCH_PREFIX');
  } catch (err) {
    if (err instanceof RepositoryInputError) throw new ConfigError(`${err.message.replace(/"[^"]*job_0"/, `"${prefix}"`)}`);
    throw err;
  }
  return prefix;
}

function outboundAllow(e: EnvValues): string[] {
  const list = (optional(e, 'FOLIO_OUTBOUND_ALLOW') ?? '')
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
function loadSecret(e: EnvValues, dataDir: string): string {
  const given = optional(e, 'FOLIO_SECRET');
  if (given !== null) return given;
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
function operatorToken(e: EnvValues, name: string): string | null {
  const token = optional(e, name);
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
function setupToken(e: EnvValues, secret: string): string {
  return operatorToken(e, 'FOLIO_SETUP_TOKEN') ?? createHmac('sha256', secret).update('folio setup token v1').digest('base64url');
}

export function loadConfig(env: Env = process.env): Config {
  const e = validatedEnv(env);
  const dataDir = createDataDir(e);
  const secret = loadSecret(e, dataDir);
  const config: Config = {
    port: num(e, 'PORT'),
    host: str(e, 'HOST'),
    dataDir,
    secret,
    setupToken: setupToken(e, secret),
    metricsToken: operatorToken(e, 'FOLIO_METRICS_TOKEN'),
    logLevel: str(e, 'LOG_LEVEL') as LogLevel,
    accessLog: yes(e, 'FOLIO_ACCESS_LOG'),
    workers: num(e, 'FOLIO_WORKERS'),
    bodyLimitBytes: num(e, 'FOLIO_BODY_LIMIT'),
    timeouts: {
      headersMs: ms(e, 'FOLIO_HEADERS_TIMEOUT', 1),
      requestMs: ms(e, 'FOLIO_REQUEST_TIMEOUT', 1),
      idleMs: ms(e, 'FOLIO_IDLE_TIMEOUT', 1),
      keepAliveMs: ms(e, 'FOLIO_KEEPALIVE_TIMEOUT', 1),
      shutdownMs: ms(e, 'FOLIO_SHUTDOWN_TIMEOUT', 1),
    },
    streams: { perKey: num(e, 'FOLIO_MAX_STREAMS_PER_KEY'), perProject: num(e, 'FOLIO_MAX_STREAMS_PER_PROJECT'), recheckMs: ms(e, 'FOLIO_STREAM_RECHECK', 100) },
    repositories: { protocols: Object.freeze(gitProtocols(e)), allowLocal: yes(e, 'FOLIO_ALLOW_LOCAL_REPOSITORIES'), caFile: optional(e, 'FOLIO_GIT_CA_FILE') },
    repositoryCheck: yes(e, 'FOLIO_REPOSITORY_CHECK'),
    outbound: { allow: Object.freeze(outboundAllow(e)) },
    trustProxy: trustProxy(e),
    databaseUrl: optional(e, 'DATABASE_URL'),
    databasePoolSize: num(e, 'DATABASE_POOL_SIZE'),
    clickhouseUrl: optional(e, 'CLICKHOUSE_URL'),
    publicUrl: publicUrl(e),
    rateLimits: {
      createJobPerHour: num(e, 'FOLIO_RATE_LIMIT_CREATE'),
      followUpPerHour: num(e, 'FOLIO_RATE_LIMIT_FOLLOW_UP'),
      analyticsReadsPerHour: num(e, 'FOLIO_RATE_LIMIT_ANALYTICS'),
      collectPerMinute: num(e, 'FOLIO_RATE_LIMIT_COLLECT'),
    },
    queue: { leaseMs: ms(e, 'FOLIO_LEASE'), heartbeatMs: ms(e, 'FOLIO_HEARTBEAT'), pollMs: ms(e, 'FOLIO_POLL'), maxLostLeases: num(e, 'FOLIO_MAX_LOST_LEASES') },
    models: modelsConfig(e),
    codeHosts: codeHostsConfig(e),
    agent: agentConfig(e),
    webhooks: { maxAttempts: num(e, 'FOLIO_WEBHOOK_ATTEMPTS'), timeoutMs: ms(e, 'FOLIO_WEBHOOK_TIMEOUT', 1), retryBaseMs: ms(e, 'FOLIO_WEBHOOK_RETRY_BASE', 1) },
    triggers: {
      bodyLimitBytes: num(e, 'FOLIO_TRIGGER_BODY_LIMIT'),
      unverifiedBodyLimitBytes: Math.min(num(e, 'FOLIO_TRIGGER_UNVERIFIED_BODY_LIMIT'), num(e, 'FOLIO_TRIGGER_BODY_LIMIT')),
      apiTimeoutMs: ms(e, 'FOLIO_TRIGGER_API_TIMEOUT'),
      deliveryRetentionDays: num(e, 'FOLIO_TRIGGER_DELIVERY_RETENTION_DAYS'),
    },
    analytics: {
      retentionDays: num(e, 'FOLIO_ANALYTICS_RETENTION_DAYS'),
      flushMs: ms(e, 'FOLIO_ANALYTICS_FLUSH'),
      flushMaxEvents: num(e, 'FOLIO_ANALYTICS_FLUSH_MAX'),
      agentsFile: optional(e, 'FOLIO_AGENTS_FILE'),
    },
    build: buildConfig(e, dataDir),
    suggestions: { days: num(e, 'FOLIO_SUGGESTIONS_DAYS'), minVisitors: num(e, 'FOLIO_SUGGESTIONS_MIN_VISITORS') },
  };
  if (config.timeouts.headersMs > config.timeouts.requestMs) {
    throw new ConfigError('FOLIO_HEADERS_TIMEOUT must not be longer than FOLIO_REQUEST_TIMEOUT (the headers are part of the request).');
  }
  return deepFreeze(config);
}

/** FOLIO_DATA_DIR, created when missing. */
function createDataDir(e: EnvValues): string {
  const dataDir = path.resolve(str(e, 'FOLIO_DATA_DIR'));
  try {
    // Only its owner may enter: it holds the databases, mirrors of private repositories and the secret.
    mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  } catch (err) {
    throw new ConfigError(`FOLIO_DATA_DIR "${dataDir}" cannot be created: ${(err as Error).message}`);
  }
  return dataDir;
}

/** FOLIO_MODEL and FOLIO_MODELS (the default model is always among the allowed ones), the providers, prices. */
function modelsConfig(e: EnvValues): Config['models'] {
  const defaultModel = modelId('FOLIO_MODEL', str(e, 'FOLIO_MODEL'));
  const allowed = (optional(e, 'FOLIO_MODELS') ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((m) => modelId('FOLIO_MODELS', m));
  if (!allowed.includes(defaultModel)) allowed.unshift(defaultModel);
  return {
    defaultModel,
    allowed: Object.freeze(allowed),
    anthropic: { apiKey: optional(e, 'ANTHROPIC_API_KEY'), baseUrl: optional(e, 'ANTHROPIC_BASE_URL') },
    openai: { apiKey: optional(e, 'OPENAI_API_KEY'), baseUrl: optional(e, 'OPENAI_BASE_URL') },
    openaiCompatible: { baseUrl: optional(e, 'OPENAI_COMPATIBLE_BASE_URL'), apiKey: optional(e, 'OPENAI_COMPATIBLE_API_KEY') },
    maxRetries: num(e, 'FOLIO_MODEL_RETRIES'),
    prices: modelPrices(e),
  };
}

/** Each code host's operator token and API URL, from the variables that host names. */
function codeHostsConfig(e: EnvValues): Config['codeHosts'] {
  return Object.fromEntries(
    CODE_HOST_KINDS.map((kind) => {
      const names: { token: string; apiUrl: string } | null = CODE_HOSTS[kind].env;
      return [kind, { token: names && optional(e, names.token), apiUrl: names && optional(e, names.apiUrl) }];
    }),
  ) as Config['codeHosts'];
}

function agentConfig(e: EnvValues): Config['agent'] {
  return {
    branchPrefix: branchPrefix(e),
    maxSteps: num(e, 'FOLIO_AGENT_MAX_STEPS'),
    maxWallClockMs: ms(e, 'FOLIO_AGENT_TIMEOUT'),
    maxTokens: num(e, 'FOLIO_AGENT_MAX_TOKENS'),
    maxRepeatedCalls: num(e, 'FOLIO_AGENT_MAX_REPEATS'),
    maxValidationRounds: num(e, 'FOLIO_AGENT_VALIDATION_ROUNDS'),
    gitAuthorName: str(e, 'FOLIO_GIT_AUTHOR_NAME'),
    gitAuthorEmail: str(e, 'FOLIO_GIT_AUTHOR_EMAIL'),
    worktreePool: (e.FOLIO_WORKTREE_POOL as number | undefined) ?? Math.max(4, num(e, 'FOLIO_WORKERS')),
  };
}

function buildConfig(e: EnvValues, dataDir: string): BuildConfig {
  const dir = path.resolve(optional(e, 'FOLIO_BUILD_DIR') ?? path.join(os.tmpdir(), `folio-build-${createHash('sha256').update(dataDir).digest('hex').slice(0, 12)}`));
  if (dir === dataDir || dir.startsWith(`${dataDir}${path.sep}`)) throw new ConfigError('FOLIO_BUILD_DIR must be outside FOLIO_DATA_DIR: builds run as another user, who must never reach the data directory.');
  return {
    sandbox: str(e, 'FOLIO_BUILD_SANDBOX') as BuildConfig['sandbox'],
    dir,
    toolsDir: path.resolve(str(e, 'FOLIO_BUILD_TOOLS_DIR')),
    uid: num(e, 'FOLIO_BUILD_UID'),
    gid: num(e, 'FOLIO_BUILD_GID'),
    setupNetwork: yes(e, 'FOLIO_BUILD_SETUP_NETWORK'),
    timeoutMs: ms(e, 'FOLIO_BUILD_TIMEOUT', 1_000),
    setupTimeoutMs: ms(e, 'FOLIO_BUILD_SETUP_TIMEOUT', 1_000),
    memoryBytes: num(e, 'FOLIO_BUILD_MEMORY_MB') * 1024 * 1024,
    processes: num(e, 'FOLIO_BUILD_PROCESSES'),
    outputBytes: num(e, 'FOLIO_BUILD_OUTPUT_KB') * 1024,
  };
}

/** A secret the user names by its variable (e.g. `--repo-token-env GITHUB_DOCS_TOKEN`); null when empty. */
export function readNamedSecret(name: string, env: Env = process.env): string | null {
  return env[name]?.trim() || null;
}

function deepFreeze<T>(o: T): T {
  if (o && typeof o === 'object') {
    for (const v of Object.values(o)) deepFreeze(v);
    Object.freeze(o);
  }
  return o;
}
