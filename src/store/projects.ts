// Projects as stored: the repository an agent works on, its code host and default model, analytics
// origins. What a user sets is checked above the store, by src/admin/projects.ts, before it gets here;
// the repository token and webhook secret are stored sealed (secret-box.ts), opened only for the
// worker and the webhook sender.
import type { Kysely, Selectable } from 'kysely';
import type { Config } from '../config.ts';
import type { Database, ProjectsTable } from './schema.ts';
import type { CodeHostKind } from '../contracts/common.ts';
import { newId } from './ids.ts';
import { BUILD_SWITCH, CHECKS_MODES, type BuildSwitch, type ChecksMode, type Project, type ReviewCommentMode } from '../contracts/dashboard.ts';
import { createSecretBox, type SecretBox } from './secret-box.ts';

export type ProjectRow = Selectable<ProjectsTable>;

export { BUILD_SWITCH, CHECKS_MODES, type ChecksMode, type Project };

/** A project's settings, checked (src/admin/projects.ts); the code host is known by now. */
export interface ProjectInput {
  name: string;
  repositoryUrl: string;
  baseBranch?: string;
  codeHost: CodeHostKind;
  defaultModel?: string | null;
  draftPrs?: boolean;
  repoToken?: string | null;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  siteOrigins?: string[];
  checks?: ChecksMode;
  /** The weekly automatic broken-paths job's threshold (distinct visitors of a path); null: off. */
  autoFixMinVisitors?: number | null;
  /** Host names (normalised) a redirect may lead to besides the site. */
  redirectHosts?: string[];
  /** The site's own build as a check, and the project's own commands for it (null: the framework's). */
  build?: BuildSwitch;
  buildSetup?: string | null;
  buildCommand?: string | null;
  buildTimeoutSeconds?: number | null;
  /** The project's own instructions for the agent, and its spending limits (jobs/budget.ts); null: none. */
  instructions?: string | null;
  defaultMaxCostUsd?: number | null;
  defaultMaxTokens?: number | null;
  monthlyBudgetUsd?: number | null;
  monthlyTokenBudget?: number | null;
  /** Which review comments act, and the name that calls the agent. */
  reviewComments?: ReviewCommentMode;
  reviewMention?: string;
}

/** A project's secrets, opened: only for the agent worker and the webhook sender, never for clients. */
export interface ProjectSecrets {
  repoToken: string | null;
  webhookSecret: string | null;
}

/** The hosts a project's redirects may lead to besides its site, as stored. */
export function redirectHostsOf(row: Pick<ProjectRow, 'redirect_hosts'>): string[] {
  const hosts = JSON.parse(row.redirect_hosts ?? '[]') as unknown;
  return Array.isArray(hosts) ? hosts.filter((h): h is string => typeof h === 'string') : [];
}

/** The stored mode; anything unexpected reads as the default. */
export function checksMode(value: string): ChecksMode {
  return (CHECKS_MODES as readonly string[]).includes(value) ? (value as ChecksMode) : 'warn';
}

/** A stored number (PostgreSQL may hand some back as strings), or null. */
export function numberOrNull(v: number | string | null | undefined): number | null {
  return v === null || v === undefined ? null : Number(v);
}

export function projectView(row: ProjectRow): Project {
  return {
    id: row.id,
    name: row.name,
    repositoryUrl: row.repository_url,
    baseBranch: row.base_branch,
    codeHost: row.code_host,
    defaultModel: row.default_model,
    draftPrs: row.draft_prs === 1,
    hasRepoToken: row.repo_token !== null,
    webhookUrl: row.webhook_url,
    hasWebhookSecret: row.webhook_secret !== null,
    siteOrigins: JSON.parse(row.site_origins) as string[],
    checks: checksMode(row.checks),
    autoFixMinVisitors: row.auto_fix_min_visitors ?? null,
    redirectHosts: redirectHostsOf(row),
    build: row.build === 'off' ? 'off' : 'on',
    buildSetup: row.build_setup ?? null,
    buildCommand: row.build_command ?? null,
    buildTimeoutSeconds: row.build_timeout_seconds ?? null,
    instructions: row.instructions ?? null,
    defaultMaxCostUsd: numberOrNull(row.default_max_cost_usd),
    defaultMaxTokens: numberOrNull(row.default_max_tokens),
    monthlyBudgetUsd: numberOrNull(row.monthly_budget_usd),
    monthlyTokenBudget: numberOrNull(row.monthly_token_budget),
    reviewComments: row.review_comments === 'every' ? 'every' : 'mention',
    reviewMention: row.review_mention ?? '@folio',
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export class ProjectStore {
  private readonly db: Kysely<Database>;
  private readonly box: SecretBox;
  constructor(db: Kysely<Database>, config: Pick<Config, 'secret'>) {
    this.db = db;
    this.box = createSecretBox(config.secret);
  }

  private seal(value: string | null | undefined, column: 'repo_token' | 'webhook_secret'): string | null {
    return value ? this.box.seal(value, `projects.${column}`) : null;
  }

  /** The project's repository token and webhook secret, opened. */
  secrets(row: Pick<ProjectRow, 'repo_token' | 'webhook_secret'>): ProjectSecrets {
    return {
      repoToken: row.repo_token === null ? null : this.box.open(row.repo_token, 'projects.repo_token'),
      webhookSecret: row.webhook_secret === null ? null : this.box.open(row.webhook_secret, 'projects.webhook_secret'),
    };
  }

  async create(input: ProjectInput): Promise<ProjectRow> {
    const now = Date.now();
    const row: ProjectRow = {
      id: newId('prj'),
      name: input.name.trim(),
      repository_url: input.repositoryUrl,
      base_branch: input.baseBranch ?? 'main',
      code_host: input.codeHost,
      default_model: input.defaultModel ?? null,
      draft_prs: input.draftPrs ? 1 : 0,
      repo_token: this.seal(input.repoToken, 'repo_token'),
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: this.seal(input.webhookSecret, 'webhook_secret'),
      site_origins: JSON.stringify(input.siteOrigins ?? []),
      checks: input.checks ?? 'warn',
      auto_fix_min_visitors: input.autoFixMinVisitors ?? null,
      redirect_hosts: JSON.stringify(input.redirectHosts ?? []),
      build: input.build ?? 'on',
      build_setup: input.buildSetup || null,
      build_command: input.buildCommand || null,
      build_timeout_seconds: input.buildTimeoutSeconds ?? null,
      instructions: input.instructions || null,
      default_max_cost_usd: input.defaultMaxCostUsd ?? null,
      default_max_tokens: input.defaultMaxTokens ?? null,
      monthly_budget_usd: input.monthlyBudgetUsd ?? null,
      monthly_token_budget: input.monthlyTokenBudget ?? null,
      review_comments: input.reviewComments ?? 'mention',
      review_mention: input.reviewMention ?? '@folio',
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('projects').values(row).execute();
    return row;
  }

  async update(id: string, input: Partial<ProjectInput>): Promise<ProjectRow | undefined> {
    const set: Partial<ProjectRow> = { updated_at: Date.now() };
    if (input.name !== undefined) set.name = input.name.trim();
    if (input.repositoryUrl !== undefined) set.repository_url = input.repositoryUrl;
    if (input.baseBranch !== undefined) set.base_branch = input.baseBranch;
    if (input.codeHost !== undefined) set.code_host = input.codeHost;
    if (input.defaultModel !== undefined) set.default_model = input.defaultModel;
    if (input.draftPrs !== undefined) set.draft_prs = input.draftPrs ? 1 : 0;
    if (input.repoToken !== undefined) set.repo_token = this.seal(input.repoToken, 'repo_token');
    if (input.webhookUrl !== undefined) set.webhook_url = input.webhookUrl;
    if (input.webhookSecret !== undefined) set.webhook_secret = this.seal(input.webhookSecret, 'webhook_secret');
    if (input.siteOrigins !== undefined) set.site_origins = JSON.stringify(input.siteOrigins);
    if (input.checks !== undefined) set.checks = input.checks;
    if (input.autoFixMinVisitors !== undefined) set.auto_fix_min_visitors = input.autoFixMinVisitors;
    if (input.redirectHosts !== undefined) set.redirect_hosts = JSON.stringify(input.redirectHosts);
    if (input.build !== undefined) set.build = input.build;
    if (input.buildSetup !== undefined) set.build_setup = input.buildSetup || null;
    if (input.buildCommand !== undefined) set.build_command = input.buildCommand || null;
    if (input.buildTimeoutSeconds !== undefined) set.build_timeout_seconds = input.buildTimeoutSeconds;
    if (input.instructions !== undefined) set.instructions = input.instructions || null;
    if (input.defaultMaxCostUsd !== undefined) set.default_max_cost_usd = input.defaultMaxCostUsd;
    if (input.defaultMaxTokens !== undefined) set.default_max_tokens = input.defaultMaxTokens;
    if (input.monthlyBudgetUsd !== undefined) set.monthly_budget_usd = input.monthlyBudgetUsd;
    if (input.monthlyTokenBudget !== undefined) set.monthly_token_budget = input.monthlyTokenBudget;
    if (input.reviewComments !== undefined) set.review_comments = input.reviewComments;
    if (input.reviewMention !== undefined) set.review_mention = input.reviewMention;
    await this.db.updateTable('projects').set(set).where('id', '=', id).execute();
    return this.get(id);
  }

  get(id: string): Promise<ProjectRow | undefined> {
    return this.db.selectFrom('projects').selectAll().where('id', '=', id).executeTakeFirst();
  }

  list(): Promise<ProjectRow[]> {
    return this.db.selectFrom('projects').selectAll().orderBy('created_at').orderBy('id').execute();
  }
}
