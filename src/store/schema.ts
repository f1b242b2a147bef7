// Table shapes as Kysely sees them. Timestamps are epoch milliseconds in every dialect.
import type { Generated } from 'kysely';
import type { UsersDatabase } from './users-schema.ts';

export type JobStatus = 'active' | 'completed' | 'archived' | 'failed';
export type CodeHostKind = 'github' | 'gitlab' | 'none';
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
  /** Tokens the model reported for every turn of the job. */
  input_tokens: number;
  output_tokens: number;
  /** JSON array of the files the job changed (path, status, additions, deletions). */
  files: string;
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

export interface WebhookDeliveriesTable {
  id: Generated<number>;
  project_id: string;
  job_id: string;
  event: string;
  attempt: number;
  status_code: number | null;
  error: string | null;
  at: number;
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
  job_usage: JobUsageTable;
  job_changes: JobChangesTable;
}
