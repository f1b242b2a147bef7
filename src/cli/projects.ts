// `folio project create|update|list`: projects in the state store.
import { InvalidArgumentError, Option, type Command } from 'commander';
import { readNamedSecret } from '../config.ts';
import { CODE_HOST_KINDS, type CodeHostKind } from '../codehost/kinds.ts';
import { BUILD_SWITCH, CHECKS_MODES, type ChecksMode } from '../store/projects.ts';
import { REVIEW_COMMENT_MODES, type ReviewCommentMode } from '../contracts/dashboard.ts';
import type { BuildSwitch } from '../contracts/dashboard.ts';
import type { ProjectSettings as ProjectInput } from '../admin/projects.ts';
import { UsageError } from './errors.ts';
import { boolOption, repeatable, required } from './options.ts';
import { printResult, table } from './output.ts';
import { withStore } from './store.ts';

export function register(project: Command): void {
  registerCreate(project);
  registerUpdate(project);
  registerList(project);
}

/**
 * A project's settings as options, in the order help lists them, for one list in both commands:
 * create describes each setting and requires the first two; update takes each one optionally (an
 * empty string clears a value) and may read a repository token from the environment.
 */
function settingOptions(command: 'create' | 'update'): Option[] {
  const create = command === 'create';
  return [
    create ? required(new Option('--name <name>', 'display name')) : new Option('--name <name>'),
    create ? required(new Option('--repository <url>', 'git URL of the docs repository')) : new Option('--repository <url>'),
    create ? new Option('--branch <branch>', 'base branch').default('main') : new Option('--branch <branch>'),
    new Option('--code-host <kind>', create ? 'where pull requests are opened (inferred from the URL)' : undefined).choices(CODE_HOST_KINDS),
    new Option('--model <model>', create ? 'default model, provider/model-id' : undefined),
    create ? new Option('--draft-prs', 'open pull requests as drafts') : new Option('--draft-prs <bool>', 'true or false').argParser(boolOption),
    new Option('--webhook-url <url>', create ? 'POSTed on every job status change' : 'empty string removes it'),
    new Option('--webhook-secret <secret>', create ? 'HMAC-SHA256 key for webhook signatures' : 'empty string removes it'),
    new Option('--repo-token-env <name>', 'read a per-project repository token from this environment variable'),
    new Option('--site-origin <origin>', create ? 'origin allowed to send browser analytics (repeatable)' : 'replaces the allowed origins (repeatable)').argParser(repeatable),
    new Option(
      '--checks <mode>',
      create ? 'docs checks before each push: strict fails jobs that leave broken links, warn lists problems in the PR, off' : 'docs checks before each push',
    ).choices(CHECKS_MODES),
    new Option(
      '--redirect-host <host>',
      create ? 'host a redirect written by a job may lead to besides the docs site (repeatable)' : 'replaces the redirect hosts (repeatable; "" clears them)',
    ).argParser(repeatable),
    new Option('--auto-fix <visitors>', 'start the broken-paths suggestion\'s job once a week when a not-found path has this many visitors (counted by address and user agent); "off" turns it off').argParser(autoFixOption),
    new Option('--build <on|off>', create ? "the site's own build as a check, in a sandbox (on by default)" : undefined).choices(BUILD_SWITCH),
    new Option('--build-setup <command>', create ? "the site's setup step (installs its dependencies); the framework's by default" : 'empty string: the framework\'s'),
    new Option('--build-command <command>', create ? "the site's build; the framework's by default (mkdocs build --strict, mint broken-links, docusaurus build)" : 'empty string: the framework\'s'),
    new Option('--build-timeout <seconds>', create ? "the build's time limit, 10 to 3600 (FOLIO_BUILD_TIMEOUT by default)" : '"default" for FOLIO_BUILD_TIMEOUT').argParser(buildTimeoutOption),
    // The team's instructions and the spending limits (docs/agent.md).
    new Option('--instructions <text>', create ? "the project's own instructions for the agent, with the repository's AGENTS.md" : 'empty string removes them'),
    new Option('--max-cost <usd>', "a job's spending limit in US dollars when it names none (priced models); \"none\" for no limit").argParser(limitOption(false)),
    new Option('--max-tokens <n>', "a job's limit in tokens when it names none; \"none\" for no limit").argParser(limitOption(true)),
    new Option('--monthly-budget <usd>', 'what the jobs may spend per calendar month (UTC) in US dollars; "none" for no budget').argParser(limitOption(false)),
    new Option('--monthly-tokens <n>', 'tokens the jobs may use per calendar month (UTC); "none" for no budget').argParser(limitOption(true)),
    new Option('--review-comments <mode>', create ? "which comments of maintainers on Folio's pull requests start a follow-up: mention (a review requesting changes, or a comment naming the agent; the default) or every" : 'mention or every').choices(REVIEW_COMMENT_MODES),
    new Option('--review-mention <name>', create ? 'the name that calls the agent in a comment (@folio by default)' : 'e.g. @docs-bot'),
    new Option('--json', 'machine-readable output'),
  ];
}

/** A limit: a number above 0 (whole for tokens), or `none` ('none': commander keeps an option's default for a null). */
function limitOption(whole: boolean): (value: string) => number | 'none' {
  return (value) => {
    if (value.trim().toLowerCase() === 'none') return 'none';
    const n = Number(value);
    if (!(whole ? /^\d+$/ : /^\d+(\.\d+)?$/).test(value.trim()) || !(n > 0)) throw new InvalidArgumentError(`Give ${whole ? 'a whole number' : 'a number'} above 0, or "none".`);
    return n;
  };
}

/** The spending settings of either command: `none` is null, unset stays unset. */
function limitSettings(o: { instructions?: string; maxCost?: number | 'none'; maxTokens?: number | 'none'; monthlyBudget?: number | 'none'; monthlyTokens?: number | 'none' }): Partial<ProjectInput> {
  const limit = (v: number | 'none' | undefined) => (v === 'none' ? null : v);
  const out: Partial<ProjectInput> = {
    defaultMaxCostUsd: limit(o.maxCost),
    defaultMaxTokens: limit(o.maxTokens),
    monthlyBudgetUsd: limit(o.monthlyBudget),
    monthlyTokenBudget: limit(o.monthlyTokens),
    ...(o.instructions !== undefined ? { instructions: o.instructions || null } : {}),
  };
  return Object.fromEntries(Object.entries(out).filter(([, v]) => v !== undefined));
}

/** `--auto-fix 10` or `--auto-fix off` ('off': commander keeps an option's default for a null). */
function autoFixOption(value: string): number | 'off' {
  if (value.trim().toLowerCase() === 'off') return 'off';
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1 || Number(value) > 1_000_000) {
    throw new InvalidArgumentError('Give a number of visitors from 1 to 1,000,000, or "off".');
  }
  return Number(value);
}

/** `--build-timeout 120`, or `default` for the server's limit. */
function buildTimeoutOption(value: string): number | 'default' {
  if (value.trim().toLowerCase() === 'default') return 'default';
  if (!/^\d+$/.test(value.trim()) || Number(value) < 10 || Number(value) > 3600) throw new InvalidArgumentError('Give a number of seconds from 10 to 3600, or "default".');
  return Number(value);
}

function withOptions(command: Command, options: Option[]): Command {
  for (const option of options) command.addOption(option);
  return command;
}

interface CreateOptions {
  name: string;
  repository: string;
  branch: string;
  codeHost?: CodeHostKind;
  model?: string;
  draftPrs?: boolean;
  webhookUrl?: string;
  webhookSecret?: string;
  siteOrigin?: string[];
  checks?: ChecksMode;
  autoFix?: number | 'off';
  redirectHost?: string[];
  build?: BuildSwitch;
  buildSetup?: string;
  buildCommand?: string;
  buildTimeout?: number | 'default';
  instructions?: string;
  maxCost?: number | 'none';
  maxTokens?: number | 'none';
  monthlyBudget?: number | 'none';
  monthlyTokens?: number | 'none';
  reviewComments?: ReviewCommentMode;
  reviewMention?: string;
  repoTokenEnv?: string;
  json?: boolean;
}

/** What the repository check could not confirm: on stderr, so `--json` output stays one document. */
function printWarnings(warnings: readonly string[]): void {
  for (const w of warnings) process.stderr.write(`folio: warning: ${w}\n`);
}

function registerCreate(project: Command): void {
  withOptions(project.command('create').description('Create a project.'), settingOptions('create')).action(async (o: CreateOptions) => {
    const saved = await withStore(({ projects }) =>
      projects.create({
        name: o.name,
        repositoryUrl: o.repository,
        baseBranch: o.branch,
        codeHost: o.codeHost,
        defaultModel: o.model ?? null,
        draftPrs: o.draftPrs,
        webhookUrl: o.webhookUrl ?? null,
        webhookSecret: o.webhookSecret ?? null,
        siteOrigins: o.siteOrigin ?? [],
        checks: o.checks,
        autoFixMinVisitors: typeof o.autoFix === 'number' ? o.autoFix : null,
        redirectHosts: o.redirectHost ?? [],
        build: o.build,
        buildSetup: o.buildSetup || null,
        buildCommand: o.buildCommand || null,
        buildTimeoutSeconds: typeof o.buildTimeout === 'number' ? o.buildTimeout : null,
        ...limitSettings(o),
        reviewComments: o.reviewComments,
        reviewMention: o.reviewMention,
        ...(o.repoTokenEnv !== undefined ? { repoToken: repoTokenFrom(o.repoTokenEnv) } : {}),
      }),
    );
    const { warnings, ...shown } = saved;
    printResult(o.json, shown, () => `Created project ${shown.id} (${shown.name}, ${shown.codeHost}, base ${shown.baseBranch}).`);
    printWarnings(warnings);
  });
}

function registerUpdate(project: Command): void {
  withOptions(project.command('update <projectId>').description('Change a project\'s settings.'), settingOptions('update')).action(
    async (id: string, o: Record<string, unknown>) => {
      const input = changedSettings(o);
      const saved = await withStore(async ({ projects }) => {
        if (!(await projects.get(id))) throw new UsageError(`Project "${id}" does not exist.`);
        return (await projects.update(id, input))!;
      });
      const { warnings, ...shown } = saved;
      printResult(o.json as boolean | undefined, shown, () => `Updated project ${shown.id}.`);
      printWarnings(warnings);
    },
  );
}

/** The settings `project update` was given; an empty string clears the model and the webhook. */
function changedSettings(o: Record<string, unknown>): Partial<ProjectInput> {
  const input: Partial<ProjectInput> = {};
  if (o.name !== undefined) input.name = o.name as string;
  if (o.repository !== undefined) input.repositoryUrl = o.repository as string;
  if (o.branch !== undefined) input.baseBranch = o.branch as string;
  if (o.codeHost !== undefined) input.codeHost = o.codeHost as CodeHostKind;
  if (o.model !== undefined) input.defaultModel = (o.model as string) || null;
  if (o.draftPrs !== undefined) input.draftPrs = o.draftPrs as boolean;
  if (o.webhookUrl !== undefined) input.webhookUrl = (o.webhookUrl as string) || null;
  if (o.webhookSecret !== undefined) input.webhookSecret = (o.webhookSecret as string) || null;
  if (o.siteOrigin !== undefined) input.siteOrigins = o.siteOrigin as string[];
  if (o.checks !== undefined) input.checks = o.checks as ChecksMode;
  if (o.autoFix !== undefined) input.autoFixMinVisitors = o.autoFix === 'off' ? null : (o.autoFix as number);
  // `--redirect-host ""` alone clears the list.
  if (o.redirectHost !== undefined) input.redirectHosts = (o.redirectHost as string[]).filter((h) => h !== '');
  if (o.build !== undefined) input.build = o.build as BuildSwitch;
  if (o.buildSetup !== undefined) input.buildSetup = (o.buildSetup as string) || null;
  if (o.buildCommand !== undefined) input.buildCommand = (o.buildCommand as string) || null;
  if (o.buildTimeout !== undefined) input.buildTimeoutSeconds = o.buildTimeout === 'default' ? null : (o.buildTimeout as number);
  Object.assign(input, limitSettings(o));
  if (o.reviewComments !== undefined) input.reviewComments = o.reviewComments as ReviewCommentMode;
  if (o.reviewMention !== undefined) input.reviewMention = o.reviewMention as string;
  if (o.repoTokenEnv !== undefined) input.repoToken = repoTokenFrom(o.repoTokenEnv as string);
  return input;
}

/** The token in the named variable; a private repository is checked with it when the project is saved. */
function repoTokenFrom(name: string): string {
  const token = readNamedSecret(name);
  if (!token) throw new UsageError(`Environment variable ${name} is empty.`);
  return token;
}

function registerList(project: Command): void {
  project
    .command('list')
    .description('List projects.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const rows = await withStore(({ projects }) => projects.list());
      printResult(o.json, rows, () =>
        table(rows.map((p) => ({ ID: p.id, NAME: p.name, REPOSITORY: p.repositoryUrl, BRANCH: p.baseBranch, HOST: p.codeHost, MODEL: p.defaultModel ?? '(server default)', CHECKS: p.checks }))),
      );
    });
}
