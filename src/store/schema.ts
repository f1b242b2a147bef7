// Table shapes as Kysely sees them. Timestamps are epoch milliseconds in every dialect.
import type { Generated } from 'kysely';
import type { UsersDatabase } from './users-schema.ts';

import type { JobStatusName } from '../contracts/jobs.ts';
import type { TriggerHost as TriggerHostName } from '../contracts/common.ts';
import type { CodeHostKind } from '../contracts/common.ts';

/** A job's status, declared once with its schema (contracts/jobs.ts). */
export type JobStatus = JobStatusName;

export type { CodeHostKind };
export type KeyScope = 'read' | 'write';

export interface ProjectsTable {
  id: string;
  name: string;
  repository_url: string;
  base_branch: string;
  code_host: CodeHostKind;
  default_model: string | null;
  /** 1 to open pull requests as drafts. */
  draft_prs: number;
  /** Per-project repository token; overrides GITHUB_TOKEN / GITLAB_TOKEN. Never returned by the API. */
  repo_token: string | null;
  webhook_url: string | null;
  webhook_secret: string | null;
  /** JSON array of origins allowed to post browser analytics, e.g. ["https://docs.example.com"]. */
  site_origins: string;
  /** Docs checks before each push: strict, warn or off. */
  checks: string;
  /** The weekly automatic broken-paths job starts at this many not-found visitors; null: off. */
  auto_fix_min_visitors: Generated<number | null>;
  /** JSON array of host names a redirect may lead to besides the site (never in suggestion jobs). */
  redirect_hosts: Generated<string>;
  /** The site's own build as a check: on or off. */
  build: Generated<string>;
  /** The project's own setup and build commands; null: the framework's. */
  build_setup: Generated<string | null>;
  build_command: Generated<string | null>;
  /** The build's time limit; null: FOLIO_BUILD_TIMEOUT. */
  build_timeout_seconds: Generated<number | null>;
  /** The project's own instructions for the agent (with the repository's AGENTS.md and the like). */
  instructions: Generated<string | null>;
  /** Per-job limits when a job names none (dollars for a priced model, tokens for any); null: none. */
  default_max_cost_usd: Generated<number | null>;
  default_max_tokens: Generated<number | null>;
  /** What the project's jobs may spend per calendar month (UTC); null: no budget. */
  monthly_budget_usd: Generated<number | null>;
  monthly_token_budget: Generated<number | null>;
  /** Which review comments on its pull requests act: mention or every (migration 015). */
  review_comments: Generated<string>;
  /** The name that calls the agent in a comment, e.g. @folio. */
  review_mention: Generated<string>;
  created_at: number;
  updated_at: number;
}

export interface ApiKeysTable {
  id: string;
  project_id: string;
  name: string;
  /** First characters of the key, shown in listings. */
  prefix: string;
  /** SHA-256 (hex) of the full key. The key itself is never stored. */
  hash: string;
  scope: KeyScope;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

export interface JobsTable {
  id: string;
  project_id: string;
  status: JobStatus;
  model: string;
  repository: string;
  /** The job's own branch. */
  ref: string;
  base_ref: string;
  pr_link: string | null;
  error_code: string | null;
  error_message: string | null;
  created_at: number;
  updated_at: number;
  archived_at: number | null;
  /** Queue columns: who holds the job and until when. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  lost_leases: number;
  /** JSON {kind, host, repository, url} of the code change that started the job; null otherwise. */
  trigger: string | null;
  /** Tokens the model reported for every turn of the job. */
  input_tokens: number;
  output_tokens: number;
  /** JSON array of the files the job changed (path, status, additions, deletions). */
  files: string;
  /** Short title (contracts/job-title.ts): the prompt's first line, then the pull request's title. */
  title: string;
  /** The job's spending limits (jobs/budget.ts), fixed at creation; null: none. */
  max_cost_usd: Generated<number | null>;
  max_tokens: Generated<number | null>;
}

export interface JobMessagesTable {
  job_id: string;
  /** 1 is the job's prompt; follow-ups count up from 2. */
  seq: number;
  prompt: string;
  created_at: number;
  handled_at: number | null;
  /** completed | failed | archived once handled. */
  outcome: string | null;
  /** The agent's title and summary of its turn. */
  title: string | null;
  summary: string | null;
  /** JSON {kind:'review', reviewer, url} of a follow-up from a review comment; null otherwise. */
  origin: Generated<string | null>;
}

export interface JobEventsTable {
  job_id: string;
  seq: number;
  at: number;
  type: string;
  /** JSON object. */
  data: string;
}

export interface IdempotencyTable {
  project_id: string;
  key: string;
  /** SHA-256 of method, route and body: the same key with another request is refused. */
  request_hash: string;
  status_code: number;
  body: string;
  created_at: number;
}

export interface RateEventsTable {
  id: Generated<number>;
  project_id: string;
  bucket: string;
  at: number;
}

/** One webhook delivery (a job status change to announce) and where it stands. */
export interface WebhookOutboxTable {
  /** whd_…: also the X-Folio-Delivery header, the same on every attempt. */
  id: string;
  project_id: string;
  job_id: string;
  event: string;
  /** The JSON body as it is sent (signed at send time with the project's current secret). */
  body: string;
  status: 'pending' | 'delivered' | 'failed';
  attempts: number;
  next_attempt_at: number;
  last_status_code: number | null;
  last_error: string | null;
  /** The process sending it now, and until when: a delivery is never sent by two at once. */
  lease_owner: string | null;
  lease_expires_at: number | null;
  created_at: number;
  updated_at: number;
  delivered_at: number | null;
}

/** One attempt of a delivery. */
export interface WebhookDeliveriesTable {
  id: Generated<number>;
  project_id: string;
  job_id: string;
  delivery_id: string | null;
  event: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: number;
}

/** A key that covers many projects: same format, hash, scope, expiry and revocation as api_keys. */
export interface AdminKeysTable {
  id: string;
  name: string;
  prefix: string;
  hash: string;
  scope: KeyScope;
  /** JSON array of the project ids it covers; null covers every project. */
  project_ids: string | null;
  created_at: number;
  expires_at: number | null;
  revoked_at: number | null;
  last_used_at: number | null;
}

/** The code hosts whose webhooks start jobs (declared once, contracts/common.ts). */
export type TriggerHost = TriggerHostName;

export interface TriggerSettingsTable {
  project_id: string;
  /** Sealed webhook secret (secret box, "trigger_settings.secret"). */
  secret: string | null;
  secret_created_at: number | null;
  /** Prompt template; null uses the default. */
  template: string | null;
  updated_at: number;
  /** Deliveries refused before their signature checked out (not recorded, only counted). */
  refused_deliveries: Generated<number>;
  last_refused_at: number | null;
}

export interface TriggerRepositoriesTable {
  id: string;
  project_id: string;
  host: TriggerHost;
  repository_url: string;
  /** Lower-cased path on the host, e.g. acme/api or group/sub/api. */
  full_path: string;
  /** JSON arrays. */
  events: string;
  paths: string;
  labels: string;
  /** Sealed API token (secret box, "trigger_repositories.token"); null uses GITHUB_TOKEN / GITLAB_TOKEN. */
  token: string | null;
  created_at: number;
}

export interface TriggerDeliveriesTable {
  id: Generated<number>;
  project_id: string;
  host: TriggerHost;
  delivery_id: string | null;
  event: string | null;
  /** started | followed_up | ignored | duplicate | rejected | failed */
  outcome: string;
  status_code: number;
  reason: string;
  repository: string | null;
  change_url: string | null;
  job_id: string | null;
  dedupe_key: string | null;
  received_at: number;
}

/** What a handled code change means (TriggerMeaning in jobs/triggers/receiver.ts), claimed once per project. */
export interface TriggerMeaningsTable {
  project_id: string;
  meaning_key: string;
  job_id: string | null;
  created_at: number;
}

export interface SuggestionJobsTable {
  job_id: string;
  project_id: string;
  suggestion_id: string;
  kind: string;
  title: string;
  /** JSON array of the suggested paths (path, visitors, views, referrers, candidates). */
  paths: string;
  range_from: number;
  range_to: number;
  /** 1 when the weekly automatic run started it. */
  automatic: Generated<number>;
  created_at: number;
}

/** What the code host last said of a job's pull request (migration 016; jobs/pull-request-states.ts). */
export interface JobPullRequestsTable {
  job_id: string;
  /** open, merged or closed; null: the host knows no pull request of the branch. */
  pr_state: string | null;
  merged_at: number | null;
  pr_checked_at: number;
}

export interface SuggestionAutoRunsTable {
  project_id: string;
  week: string;
  job_id: string | null;
  /** claimed while it runs; then started, nothing_to_fix, or refused:<code> (a rate limit, an unconfigured model…). */
  outcome: string;
  created_at: number;
}

export interface TriggerChangesTable {
  project_id: string;
  /** host:full_path#number of the pull request. */
  change_key: string;
  job_id: string;
  created_at: number;
}

export interface JobUsageTable {
  job_id: string;
  project_id: string;
  /** Start of the UTC day (epoch ms). */
  day: number;
  model: string;
  input_tokens: number;
  output_tokens: number;
  /** Model calls counted in the row. */
  calls: number;
}

export interface JobChangesTable {
  job_id: string;
  base_sha: string | null;
  head_sha: string | null;
  /** Unified diff of the job branch against base_sha, bounded. */
  diff: string;
  diff_truncated: number;
  /** JSON of the last checks report, or null. */
  checks: string | null;
  updated_at: number;
  /** JSON of the pages the job touched (jobs/impact-pages.ts), null until computed (migration 016). */
  pages: string | null;
}

/** An answer Folio owes on a pull request for a review comment (jobs/triggers/review-replies.ts). */
export interface ReviewRepliesTable {
  id: string;
  project_id: string;
  job_id: string;
  /** The message whose turn the answer reports; null: `text` is the answer. */
  seq: number | null;
  text: string | null;
  host: TriggerHostName;
  repository_url: string;
  pr_number: number;
  /** JSON ReplyTarget (codehost/reviews.ts). */
  target: string;
  state: 'pending' | 'sending' | 'sent' | 'failed';
  attempts: number;
  error: string | null;
  created_at: number;
  answered_at: number | null;
}

/** Facts about the store itself (migration 008): the secret's fingerprint. */
export interface FolioMetaTable {
  key: string;
  value: string;
}

export interface Database extends UsersDatabase {
  projects: ProjectsTable;
  api_keys: ApiKeysTable;
  jobs: JobsTable;
  job_messages: JobMessagesTable;
  job_events: JobEventsTable;
  idempotency: IdempotencyTable;
  rate_events: RateEventsTable;
  webhook_deliveries: WebhookDeliveriesTable;
  webhook_outbox: WebhookOutboxTable;
  admin_keys: AdminKeysTable;
  trigger_settings: TriggerSettingsTable;
  trigger_repositories: TriggerRepositoriesTable;
  trigger_deliveries: TriggerDeliveriesTable;
  trigger_changes: TriggerChangesTable;
  trigger_meanings: TriggerMeaningsTable;
  suggestion_jobs: SuggestionJobsTable;
  suggestion_auto_runs: SuggestionAutoRunsTable;
  job_usage: JobUsageTable;
  job_changes: JobChangesTable;
  job_pull_requests: JobPullRequestsTable;
  review_replies: ReviewRepliesTable;
  folio_meta: FolioMetaTable;
}
