// Projects: the repository an agent works on, its code host and default model, analytics origins.
// Everything a user sets is checked here before it is stored (the repository URL and branch by the
// one rule of src/git/repository-url.ts, the webhook URL by the outbound address policy), and the
// repository token and webhook secret are stored sealed (secret-box.ts), opened only for the worker
// and the webhook sender.
import type { Kysely, Selectable } from 'kysely';
import type { Config } from '../config.ts';
import type { Database, ProjectsTable } from './schema.ts';
import { CODE_HOST_KINDS, inferCodeHost, isCodeHostKind, type CodeHostKind } from '../codehost/kinds.ts';
import { newId } from './ids.ts';
import { CHECKS_MODES, type ChecksMode, type Project } from '../contracts/dashboard.ts';
import { createSecretBox, type SecretBox } from './secret-box.ts';
import { checkBranchName, checkRepositoryUrl, RepositoryInputError } from '../git/repository-url.ts';
import { checkUrlHost, OutboundRefusedError, type Resolve } from '../net/address-policy.ts';
import { CodedError } from '../errors.ts';

export type ProjectRow = Selectable<ProjectsTable>;

export { CHECKS_MODES, type ChecksMode, type Project };

export interface ProjectInput {
  name: string;
  repositoryUrl: string;
  baseBranch?: string;
  codeHost?: CodeHostKind;
  defaultModel?: string | null;
  draftPrs?: boolean;
  repoToken?: string | null;
  webhookUrl?: string | null;
  webhookSecret?: string | null;
  siteOrigins?: string[];
  checks?: ChecksMode;
}

export class ProjectInputError extends CodedError {
  /** JSON pointer of the offending field in a request body, e.g. /body/repositoryUrl. */
  readonly field: string | undefined;
  constructor(message: string, field?: keyof ProjectInput) {
    super('invalid_project', message);
    this.field = field === undefined ? undefined : `/body/${field}`;
  }
}

/** A project's secrets, opened: only for the agent worker and the webhook sender, never for clients. */
export interface ProjectSecrets {
  repoToken: string | null;
  webhookSecret: string | null;
}

function checkWebhookUrl(value: string): URL {
  let url: URL | null = null;
  try {
    url = new URL(value);
  } catch {}
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:') || value.length > 2000 || /\s/.test(value)) {
    throw new ProjectInputError(`Webhook URL "${value.slice(0, 200)}" must be an http(s) URL.`, 'webhookUrl');
  }
  if (url.username || url.password) throw new ProjectInputError('The webhook URL must not contain credentials; set a webhook secret to sign deliveries instead.', 'webhookUrl');
  return url;
}

/** The stored mode; anything unexpected reads as the default. */
export function checksMode(value: string): ChecksMode {
  return (CHECKS_MODES as readonly string[]).includes(value) ? (value as ChecksMode) : 'warn';
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
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export class ProjectStore {
  private readonly db: Kysely<Database>;
  private readonly config: Pick<Config, 'repositories' | 'outbound'>;
  private readonly box: SecretBox;
  private readonly resolve: Resolve | undefined;
  /** `resolve`: name resolution for the webhook URL check (tests). */
  constructor(db: Kysely<Database>, config: Pick<Config, 'repositories' | 'outbound' | 'secret'>, resolve?: Resolve) {
    this.db = db;
    this.config = config;
    this.box = createSecretBox(config.secret);
    this.resolve = resolve;
  }

  /** Checks what a user set; throws ProjectInputError with a sentence and the field. */
  async validate(input: Partial<ProjectInput>): Promise<void> {
    if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
      throw new ProjectInputError('Project name must be 1 to 200 characters.', 'name');
    }
    try {
      if (input.repositoryUrl !== undefined) checkRepositoryUrl(input.repositoryUrl, this.config.repositories);
    } catch (err) {
      if (err instanceof RepositoryInputError) throw new ProjectInputError(err.message, 'repositoryUrl');
      throw err;
    }
    try {
      if (input.baseBranch !== undefined) checkBranchName(input.baseBranch, 'Base branch');
    } catch (err) {
      if (err instanceof RepositoryInputError) throw new ProjectInputError(err.message, 'baseBranch');
      throw err;
    }
    if (input.codeHost !== undefined && !isCodeHostKind(input.codeHost)) {
      throw new ProjectInputError(`Code host must be one of ${CODE_HOST_KINDS.join(', ')}, got "${String(input.codeHost).slice(0, 50)}".`, 'codeHost');
    }
    if (input.checks !== undefined && !(CHECKS_MODES as readonly string[]).includes(input.checks)) {
      throw new ProjectInputError(`Checks must be strict, warn or off, got "${String(input.checks).slice(0, 50)}".`, 'checks');
    }
    if (input.webhookUrl) {
      try {
        await checkUrlHost(checkWebhookUrl(input.webhookUrl), this.config.outbound, this.resolve);
      } catch (err) {
        if (err instanceof OutboundRefusedError) throw new ProjectInputError(`Webhook URL: ${err.message}`, 'webhookUrl');
        throw err;
      }
    }
    for (const o of input.siteOrigins ?? []) {
      let ok = false;
      try {
        const u = new URL(o);
        ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === o;
      } catch {}
      if (!ok) throw new ProjectInputError(`Site origin "${o}" must be an origin such as https://docs.example.com (no path).`, 'siteOrigins');
    }
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
    await this.validate(input);
    const now = Date.now();
    const row: ProjectRow = {
      id: newId('prj'),
      name: input.name.trim(),
      repository_url: input.repositoryUrl,
      base_branch: input.baseBranch ?? 'main',
      code_host: input.codeHost ?? inferCodeHost(input.repositoryUrl),
      default_model: input.defaultModel ?? null,
      draft_prs: input.draftPrs ? 1 : 0,
      repo_token: this.seal(input.repoToken, 'repo_token'),
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: this.seal(input.webhookSecret, 'webhook_secret'),
      site_origins: JSON.stringify(input.siteOrigins ?? []),
      checks: input.checks ?? 'warn',
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('projects').values(row).execute();
    return row;
  }

  async update(id: string, input: Partial<ProjectInput>): Promise<ProjectRow | undefined> {
    await this.validate(input);
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
