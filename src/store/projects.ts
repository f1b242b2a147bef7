// Projects: the repository an agent works on, its code host and default model, analytics origins.
import type { Kysely, Selectable } from 'kysely';
import type { CodeHostKind, Database, ProjectsTable } from './schema.ts';
import { newId } from './ids.ts';

export type ProjectRow = Selectable<ProjectsTable>;

/** Docs checks before each push: `strict` fails a job that leaves problems, `warn` lists them in the PR, `off` skips them. */
export type ChecksMode = 'strict' | 'warn' | 'off';
export const CHECKS_MODES: readonly ChecksMode[] = ['strict', 'warn', 'off'];

export interface Project {
  id: string;
  name: string;
  repositoryUrl: string;
  baseBranch: string;
  codeHost: CodeHostKind;
  defaultModel: string | null;
  draftPrs: boolean;
  hasRepoToken: boolean;
  webhookUrl: string | null;
  hasWebhookSecret: boolean;
  siteOrigins: string[];
  checks: ChecksMode;
  createdAt: string;
}

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

export class ProjectInputError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ProjectInputError';
  }
}

/** github.com / gitlab.com (or hosts named like them) by URL; anything else is push-only. */
export function inferCodeHost(repositoryUrl: string): CodeHostKind {
  const host = hostOf(repositoryUrl).toLowerCase();
  if (host === 'github.com' || host.startsWith('github.')) return 'github';
  if (host === 'gitlab.com' || host.startsWith('gitlab.')) return 'gitlab';
  return 'none';
}

function hostOf(url: string): string {
  try {
    return new URL(url).hostname;
  } catch {
    const scp = /^[^@]+@([^:]+):/.exec(url); // git@github.com:org/repo.git
    return scp?.[1] ?? '';
  }
}

const BRANCH = /^(?!\/|.*\/\/|.*\.\.|.*\.lock$|.*\/$)[A-Za-z0-9._\-/]{1,200}$/;

export function validateProjectInput(input: Partial<ProjectInput>): void {
  if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
    throw new ProjectInputError('Project name must be 1 to 200 characters.');
  }
  if (input.repositoryUrl !== undefined) {
    const u = input.repositoryUrl;
    const ok = /^(https?|ssh|git|file):\/\/\S+$/.test(u) || /^[^@\s]+@[^:\s]+:\S+$/.test(u) || u.startsWith('/');
    if (!ok) throw new ProjectInputError(`Repository "${u}" is not a git URL (https://…, ssh://…, git@host:org/repo.git or a local path).`);
  }
  if (input.baseBranch !== undefined && !BRANCH.test(input.baseBranch)) {
    throw new ProjectInputError(`Base branch "${input.baseBranch}" is not a valid branch name.`);
  }
  if (input.codeHost !== undefined && !['github', 'gitlab', 'none'].includes(input.codeHost)) {
    throw new ProjectInputError(`Code host must be github, gitlab or none, got "${input.codeHost}".`);
  }
  if (input.webhookUrl && !/^https?:\/\/\S+$/.test(input.webhookUrl)) {
    throw new ProjectInputError(`Webhook URL "${input.webhookUrl}" must be an http(s) URL.`);
  }
  if (input.checks !== undefined && !CHECKS_MODES.includes(input.checks)) {
    throw new ProjectInputError(`Checks must be strict, warn or off, got "${String(input.checks).slice(0, 50)}".`);
  }
  for (const o of input.siteOrigins ?? []) {
    let ok = false;
    try {
      const u = new URL(o);
      ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === o;
    } catch {}
    if (!ok) throw new ProjectInputError(`Site origin "${o}" must be an origin such as https://docs.example.com (no path).`);
  }
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
  constructor(db: Kysely<Database>) {
    this.db = db;
  }

  async create(input: ProjectInput): Promise<ProjectRow> {
    validateProjectInput(input);
    const now = Date.now();
    const row: ProjectRow = {
      id: newId('prj'),
      name: input.name.trim(),
      repository_url: input.repositoryUrl,
      base_branch: input.baseBranch ?? 'main',
      code_host: input.codeHost ?? inferCodeHost(input.repositoryUrl),
      default_model: input.defaultModel ?? null,
      draft_prs: input.draftPrs ? 1 : 0,
      repo_token: input.repoToken ?? null,
      webhook_url: input.webhookUrl ?? null,
      webhook_secret: input.webhookSecret ?? null,
      site_origins: JSON.stringify(input.siteOrigins ?? []),
      checks: input.checks ?? 'warn',
      created_at: now,
      updated_at: now,
    };
    await this.db.insertInto('projects').values(row).execute();
    return row;
  }

  async update(id: string, input: Partial<ProjectInput>): Promise<ProjectRow | undefined> {
    validateProjectInput(input);
    const set: Partial<ProjectRow> = { updated_at: Date.now() };
    if (input.name !== undefined) set.name = input.name.trim();
    if (input.repositoryUrl !== undefined) set.repository_url = input.repositoryUrl;
    if (input.baseBranch !== undefined) set.base_branch = input.baseBranch;
    if (input.codeHost !== undefined) set.code_host = input.codeHost;
    if (input.defaultModel !== undefined) set.default_model = input.defaultModel;
    if (input.draftPrs !== undefined) set.draft_prs = input.draftPrs ? 1 : 0;
    if (input.repoToken !== undefined) set.repo_token = input.repoToken;
    if (input.webhookUrl !== undefined) set.webhook_url = input.webhookUrl;
    if (input.webhookSecret !== undefined) set.webhook_secret = input.webhookSecret;
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
