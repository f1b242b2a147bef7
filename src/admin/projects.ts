// The projects an operator manages: every setting a user sends is checked here, above the store (the
// repository URL and branch by the one rule of src/git/repository-url.ts, the code host against the
// declared list, the webhook URL by the outbound address policy, redirect hosts as host names by
// util/host-name.ts), the repository asked for its base branch (repository-check.ts), then stored by
// store/projects.ts.
// The dashboard, the CLI and the analytics collect endpoint reach projects through this service.
import type { Kysely } from 'kysely';
import type { Config } from '../config.ts';
import type { Database } from '../store/schema.ts';
import { checkRepositoryReachable, type RepositoryCheckConfig } from './repository-check.ts';
import { BUILD_SWITCH, CHECKS_MODES, ProjectStore, projectView, type Project, type ProjectInput, type ProjectRow } from '../store/projects.ts';
import { REVIEW_COMMENT_MODES, REVIEW_MENTION_PATTERN } from '../contracts/dashboard.ts';
import { CODE_HOST_KINDS, inferCodeHost, isCodeHostKind, type CodeHostKind } from '../codehost/kinds.ts';
import { checkBranchName, checkRepositoryUrl, RepositoryInputError } from '../git/repository-url.ts';
import { checkUrlHost, OutboundRefusedError, type Resolve } from '../net/address-policy.ts';
import { CodedError } from '../errors.ts';
import { INSTRUCTIONS_MAX_CHARS, LIMIT_MAX } from '../contracts/budget.ts';
import { dnsHostName } from '../util/host-name.ts';

export type { Project };

/** A project's settings as a user sends them: the code host may be left to the repository URL. */
export type ProjectSettings = Omit<ProjectInput, 'codeHost'> & { codeHost?: CodeHostKind };

/** A setting refused, with the field it was in (a JSON pointer into the request body). */
export class ProjectInputError extends CodedError {
  readonly field: string | undefined;
  constructor(message: string, field?: keyof ProjectSettings) {
    const pointer = field === undefined ? undefined : `/body/${field}`;
    super('invalid_project', message, pointer ? { details: [{ message, path: pointer }] } : {});
    this.field = pointer;
  }
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

/** Runs a check of git's URL rules, answering its refusal as a refused project field. */
function asField<T>(field: keyof ProjectSettings, check: () => T): T {
  try {
    return check();
  } catch (err) {
    if (err instanceof RepositoryInputError) throw new ProjectInputError(err.message, field);
    throw err;
  }
}

function checkOrigin(origin: string): void {
  let ok = false;
  try {
    const u = new URL(origin);
    ok = (u.protocol === 'https:' || u.protocol === 'http:') && u.origin === origin;
  } catch {}
  if (!ok) throw new ProjectInputError(`Site origin "${origin}" must be an origin such as https://docs.example.com (no path).`, 'siteOrigins');
}

const MAX_REDIRECT_HOSTS = 50;

/** Redirect hosts as stored: each a host name, normalised (lower case, IDNA), without repeats. */
function checkRedirectHosts(values: string[]): string[] {
  if (values.length > MAX_REDIRECT_HOSTS) throw new ProjectInputError(`A project lists at most ${MAX_REDIRECT_HOSTS} redirect hosts, got ${values.length}.`, 'redirectHosts');
  const hosts = values.map((value) => {
    const host = dnsHostName(value.trim());
    if (host === null) {
      throw new ProjectInputError(
        `Redirect host "${value.slice(0, 100)}" must be a host name such as status.example.com: no scheme, port, path, wildcard or IP address.`,
        'redirectHosts',
      );
    }
    return host;
  });
  return [...new Set(hosts)];
}

/**
 * The site build's settings: on or off, the project's own commands (one line of shell each, run only
 * in the build sandbox), and a time limit from 10 s to an hour.
 */
function checkBuildSettings(input: Partial<ProjectSettings>): void {
  if (input.build !== undefined && !(BUILD_SWITCH as readonly string[]).includes(input.build)) {
    throw new ProjectInputError(`Build must be on or off, got "${String(input.build).slice(0, 50)}".`, 'build');
  }
  for (const field of ['buildSetup', 'buildCommand'] as const) {
    const v = input[field];
    if (v === undefined || v === null) continue;
    // eslint-disable-next-line no-control-regex
    if (v.length > 2000 || /[\x00-\x08\x0a-\x1f\x7f]/.test(v)) {
      throw new ProjectInputError(`The build's ${field === 'buildSetup' ? 'setup' : 'command'} must be one line of at most 2000 characters, without control characters.`, field);
    }
  }
  const t = input.buildTimeoutSeconds;
  if (t !== undefined && t !== null && !(Number.isInteger(t) && t >= 10 && t <= 3600)) {
    throw new ProjectInputError("The build's time limit must be a whole number of seconds from 10 to 3600, or null for the server's.", 'buildTimeoutSeconds');
  }
}

/** The team's instructions (text without NUL, bounded) and the spending limits (positive, bounded; tokens whole). */
function checkInstructionsAndLimits(input: Partial<ProjectSettings>): void {
  const text = input.instructions;
  if (text !== undefined && text !== null && (text.length > INSTRUCTIONS_MAX_CHARS || text.includes('\0'))) {
    throw new ProjectInputError(`Instructions must be at most ${INSTRUCTIONS_MAX_CHARS} characters, without NUL characters.`, 'instructions');
  }
  const limits = [
    ['defaultMaxCostUsd', LIMIT_MAX.costUsd, false, 'A job\'s default limit in dollars'],
    ['defaultMaxTokens', LIMIT_MAX.tokens, true, 'A job\'s default limit in tokens'],
    ['monthlyBudgetUsd', LIMIT_MAX.monthlyUsd, false, 'The monthly budget in dollars'],
    ['monthlyTokenBudget', LIMIT_MAX.tokens, true, 'The monthly budget in tokens'],
  ] as const;
  for (const [field, max, whole, what] of limits) {
    const v = input[field];
    if (v === undefined || v === null) continue;
    if (!(typeof v === 'number' && Number.isFinite(v) && v > 0 && v <= max && (!whole || Number.isInteger(v)))) {
      throw new ProjectInputError(`${what} must be a ${whole ? 'whole number' : 'number'} above 0 and at most ${max.toLocaleString('en-US')}, or none.`, field);
    }
  }
}

/** Which review comments act (mention or every) and the name that calls the agent (@ and a user name). */
function checkReviewSettings(input: Partial<ProjectSettings>): void {
  if (input.reviewComments !== undefined && !(REVIEW_COMMENT_MODES as readonly string[]).includes(input.reviewComments)) {
    throw new ProjectInputError(`Review comments must be mention or every, got "${String(input.reviewComments).slice(0, 50)}".`, 'reviewComments');
  }
  if (input.reviewMention !== undefined && !new RegExp(REVIEW_MENTION_PATTERN).test(input.reviewMention)) {
    throw new ProjectInputError('The mention must be @ and a user name of at most 39 letters, digits, dots, dashes or underscores, such as @folio.', 'reviewMention');
  }
}

/** A project as saved, with what the repository check could not confirm (sentences; repository-check.ts). */
export type SavedProject = Project & { readonly warnings: string[] };

/** The settings that change how the repository is reached: saving one asks the repository again. */
const REPOSITORY_FIELDS = ['repositoryUrl', 'baseBranch', 'codeHost', 'repoToken'] as const;

export class ProjectsService {
  readonly store: ProjectStore;
  private readonly config: RepositoryCheckConfig;
  private readonly resolve: Resolve | undefined;

  /** `resolve`: name resolution for the webhook URL and repository checks (tests). */
  constructor(db: Kysely<Database>, config: RepositoryCheckConfig & Pick<Config, 'secret'>, resolve?: Resolve) {
    this.store = new ProjectStore(db, config);
    this.config = config;
    this.resolve = resolve;
  }

  /** Checks what a user set and returns it as stored (redirect hosts normalised); throws ProjectInputError with a sentence and the field. */
  async validate<T extends Partial<ProjectSettings>>(input: T): Promise<T> {
    if (input.name !== undefined && (input.name.trim().length === 0 || input.name.length > 200)) {
      throw new ProjectInputError('Project name must be 1 to 200 characters.', 'name');
    }
    if (input.repositoryUrl !== undefined) asField('repositoryUrl', () => checkRepositoryUrl(input.repositoryUrl!, this.config.repositories));
    if (input.baseBranch !== undefined) asField('baseBranch', () => checkBranchName(input.baseBranch!, 'Base branch'));
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
    // A trailing slash (as a browser's address bar shows an origin) is tidied away, not refused.
    const siteOrigins = input.siteOrigins?.map((o) => o.trim().replace(/\/+$/, ''));
    for (const origin of siteOrigins ?? []) checkOrigin(origin);
    checkBuildSettings(input);
    checkInstructionsAndLimits(input);
    checkReviewSettings(input);
    const min = input.autoFixMinVisitors;
    if (min !== undefined && min !== null && !(Number.isInteger(min) && min >= 1 && min <= 1_000_000)) {
      throw new ProjectInputError('The weekly automatic job\'s threshold must be a whole number of visitors from 1 to 1,000,000, or off.', 'autoFixMinVisitors');
    }
    const tidied = siteOrigins === undefined ? input : { ...input, siteOrigins };
    return input.redirectHosts === undefined ? tidied : { ...tidied, redirectHosts: checkRedirectHosts(input.redirectHosts) };
  }

  // Callers get views (never the stored row with its sealed secrets); `store` is for Folio's own services.
  /** Checks the settings, asks the repository (a refusal throws RepositoryCheckError), then saves. */
  async create(input: ProjectSettings): Promise<SavedProject> {
    const checked = await this.validate(input);
    const codeHost = checked.codeHost ?? inferCodeHost(checked.repositoryUrl);
    const target = { repositoryUrl: checked.repositoryUrl, baseBranch: checked.baseBranch ?? 'main', codeHost, repoToken: checked.repoToken ?? null };
    const warnings = await checkRepositoryReachable(target, this.config, this.resolve);
    return { ...projectView(await this.store.create({ ...checked, codeHost })), warnings };
  }

  /** The project after the change; undefined when there is no such project. */
  async update(id: string, input: Partial<ProjectSettings>): Promise<SavedProject | undefined> {
    const checked = await this.validate(input);
    const warnings = await this.checkChangedRepository(id, checked);
    const row = await this.store.update(id, checked);
    return row && { ...projectView(row), warnings };
  }

  /** Asks the repository again when a change touches how it is reached, with the settings it would have. */
  private async checkChangedRepository(id: string, input: Partial<ProjectSettings>): Promise<string[]> {
    if (!REPOSITORY_FIELDS.some((field) => input[field] !== undefined)) return [];
    const row = await this.store.get(id);
    if (!row) return [];
    const target = {
      repositoryUrl: input.repositoryUrl ?? row.repository_url,
      baseBranch: input.baseBranch ?? row.base_branch,
      codeHost: input.codeHost ?? row.code_host,
      repoToken: input.repoToken !== undefined ? input.repoToken : this.store.secrets(row).repoToken,
    };
    return checkRepositoryReachable(target, this.config, this.resolve);
  }

  async get(id: string): Promise<Project | undefined> {
    const row = await this.store.get(id);
    return row && projectView(row);
  }

  async list(): Promise<Project[]> {
    return (await this.store.list()).map(projectView);
  }

  /** The project, or a CodedError project_not_found. */
  async require(id: string): Promise<Project> {
    return projectView(await this.#row(id));
  }

  /** The project's repository with its token opened (SecretBoxError when FOLIO_SECRET changed): what git and the code host are reached with. */
  async repository(id: string): Promise<{ id: string; codeHost: CodeHostKind; repositoryUrl: string; repoToken: string | null; baseBranch: string }> {
    const row = await this.#row(id);
    const { repoToken } = this.store.secrets(row);
    return { id: row.id, codeHost: row.code_host, repositoryUrl: row.repository_url, repoToken, baseBranch: row.base_branch };
  }

  async #row(id: string): Promise<ProjectRow> {
    const row = await this.store.get(id);
    if (!row) throw new CodedError('project_not_found', `Project "${id}" does not exist.`);
    return row;
  }
}
