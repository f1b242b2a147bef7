// The `folio` command: server, workers, migrations and administration of projects and keys.
import { Command, Option, CommanderError } from 'commander';
import { ConfigError, loadConfig, parseDuration, readNamedSecret, type Config } from './config.ts';
import { openStore, migrate } from './store/database.ts';
import { CHECKS_MODES, ProjectInputError, ProjectStore, projectView, type ChecksMode, type ProjectInput } from './store/projects.ts';
import { ApiKeyStore, apiKeyView, type ApiKeyView } from './store/api-keys.ts';
import type { CodeHostKind, KeyScope } from './store/schema.ts';
import { CODE_HOST_KINDS } from './codehost/kinds.ts';
import { registerUserCommands } from './user-cli.ts';
import { registerJobCommands, registerAnalyticsQueryCommands } from './client/cli.ts';
import { registerAnalyticsCommands } from './analytics/cli.ts';
import { migrateAnalytics } from './analytics/index.ts';
import { AnalyticsLockedError } from './analytics/engines/duckdb/index.ts';

/** A failure the user can fix: printed as one line on stderr, exit code 1. */
class UsageError extends Error {}

function config(): Config {
  return loadConfig();
}

function print(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write((json ? JSON.stringify(value, null, 2) : human()) + '\n');
}

function table(rows: Record<string, string>[]): string {
  if (rows.length === 0) return '(none)';
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => r[c].length)));
  const line = (cells: string[]) => cells.map((c, i) => c.padEnd(width[i])).join('  ').trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => r[c])))].join('\n');
}

/** What a key covers, in words: "project prj_…", "every project", "projects prj_a, prj_b". */
function coverText(k: ApiKeyView): string {
  if (k.kind === 'project') return `project ${k.projectId}`;
  return k.allProjects ? 'every project' : `projects ${k.projectIds.join(', ')}`;
}

async function withStore<T>(fn: (s: { projects: ProjectStore; keys: ApiKeyStore }) => Promise<T>): Promise<T> {
  const cfg = config();
  const store = await openStore(cfg);
  try {
    // A revocation here reaches running servers at once (PostgreSQL NOTIFY; SQLite sees the commit).
    const keys = new ApiKeyStore(store.db, store.db, { notifyRevoked: () => store.dialect.notify('folio_keys') });
    return await fn({ projects: new ProjectStore(store.db, cfg), keys });
  } finally {
    await store.close();
  }
}

const bool = (v: string) => {
  if (v === 'true' || v === 'yes' || v === '1') return true;
  if (v === 'false' || v === 'no' || v === '0') return false;
  throw new UsageError(`Expected true or false, got "${v}".`);
};
const collect = (v: string, prev: string[] = []) => [...prev, v];

export function buildCli(): Command {
  const program = new Command('folio')
    .description('Folio: LLM agent jobs on your docs repository, and visitor analytics that tell humans from AI.')
    .showHelpAfterError()
    .exitOverride();

  program
    .command('serve')
    .description('Run the HTTP API (and agent workers unless --no-workers).')
    .option('--no-workers', 'run the API only; start workers with `folio worker`')
    .action(async (opts: { workers: boolean }) => {
      const cfg = config();
      // Loaded here so the client commands start fast.
      const { startServer, closeOnSignals } = await import('./http/server.ts');
      const server = await startServer(cfg, { workers: opts.workers ? undefined : 0, logRequests: cfg.accessLog });
      server.services.log.info({ url: server.url, workers: opts.workers ? server.services.config.workers : 0 }, 'Folio is listening');
      closeOnSignals(server);
    });

  program
    .command('worker')
    .description('Run agent workers only (no HTTP API).')
    .action(async () => {
      const cfg = config();
      const { createServices } = await import('./services.ts');
      const { exitOnSignals } = await import('./http/server.ts');
      const services = await createServices(cfg, { workers: Math.max(1, cfg.workers) });
      services.log.info({ workers: Math.max(1, cfg.workers) }, 'Folio workers running');
      exitOnSignals(services, () => services.close());
    });

  program
    .command('migrate')
    .description('Apply pending database migrations.')
    .option('--json', 'machine-readable output')
    .action(async (opts: { json?: boolean }) => {
      const cfg = config();
      const store = await openStore(cfg, { migrate: false });
      let applied: string[];
      try {
        applied = await migrate(store.dialect, cfg.secret);
      } finally {
        await store.close();
      }
      let analytics: { store: string; applied: number[] };
      try {
        analytics = await migrateAnalytics(cfg);
      } catch (err) {
        if (err instanceof AnalyticsLockedError) throw new UsageError(`${err.message.split(' Send the data')[0]} Stop the server first, or let it migrate the file when it starts.`);
        throw err;
      }
      print(!!opts.json, { applied, analytics }, () =>
        [
          applied.length ? `State store, applied: ${applied.join(', ')}` : 'State store: already up to date.',
          analytics.applied.length ? `Analytics (${analytics.store}), applied: ${analytics.applied.join(', ')}` : `Analytics (${analytics.store}): already up to date.`,
        ].join('\n'),
      );
    });

  const project = program.command('project').description('Manage projects.');
  project
    .command('create')
    .description('Create a project.')
    .requiredOption('--name <name>', 'display name')
    .requiredOption('--repository <url>', 'git URL of the docs repository')
    .option('--branch <branch>', 'base branch', 'main')
    .addOption(new Option('--code-host <kind>', 'where pull requests are opened (inferred from the URL)').choices(CODE_HOST_KINDS))
    .option('--model <model>', 'default model, provider/model-id')
    .option('--draft-prs', 'open pull requests as drafts')
    .option('--webhook-url <url>', 'POSTed on every job status change')
    .option('--webhook-secret <secret>', 'HMAC-SHA256 key for webhook signatures')
    .option('--site-origin <origin>', 'origin allowed to send browser analytics (repeatable)', collect)
    .addOption(new Option('--checks <mode>', 'docs checks before each push: strict fails jobs that leave broken links, warn lists problems in the PR, off').choices(CHECKS_MODES))
    .option('--json', 'machine-readable output')
    .action(async (o: { name: string; repository: string; branch: string; codeHost?: CodeHostKind; model?: string; draftPrs?: boolean; webhookUrl?: string; webhookSecret?: string; siteOrigin?: string[]; checks?: ChecksMode; json?: boolean }) => {
      const row = await withStore(({ projects }) =>
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
        }),
      );
      const view = projectView(row);
      print(!!o.json, view, () => `Created project ${view.id} (${view.name}, ${view.codeHost}, base ${view.baseBranch}).`);
    });

  project
    .command('update <projectId>')
    .description('Change a project\'s settings.')
    .option('--name <name>')
    .option('--repository <url>')
    .option('--branch <branch>')
    .addOption(new Option('--code-host <kind>').choices(CODE_HOST_KINDS))
    .option('--model <model>')
    .option('--draft-prs <bool>', 'true or false', bool)
    .option('--webhook-url <url>', 'empty string removes it')
    .option('--webhook-secret <secret>', 'empty string removes it')
    .option('--repo-token-env <name>', 'read a per-project repository token from this environment variable')
    .option('--site-origin <origin>', 'replaces the allowed origins (repeatable)', collect)
    .addOption(new Option('--checks <mode>', 'docs checks before each push').choices(CHECKS_MODES))
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: Record<string, unknown>) => {
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
      if (o.repoTokenEnv !== undefined) {
        const token = readNamedSecret(o.repoTokenEnv as string);
        if (!token) throw new UsageError(`Environment variable ${o.repoTokenEnv as string} is empty.`);
        input.repoToken = token;
      }
      const row = await withStore(async ({ projects }) => {
        if (!(await projects.get(id))) throw new UsageError(`Project "${id}" does not exist.`);
        return projects.update(id, input);
      });
      const view = projectView(row!);
      print(!!o.json, view, () => `Updated project ${view.id}.`);
    });

  project
    .command('list')
    .description('List projects.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const rows = (await withStore(({ projects }) => projects.list())).map(projectView);
      print(!!o.json, rows, () =>
        table(rows.map((p) => ({ ID: p.id, NAME: p.name, REPOSITORY: p.repositoryUrl, BRANCH: p.baseBranch, HOST: p.codeHost, MODEL: p.defaultModel ?? '(server default)', CHECKS: p.checks }))),
      );
    });

  const key = program.command('key').description('Manage admin API keys.');
  key
    .command('create')
    .description('Create an API key for one project, or one that covers many (--all-projects, --projects a,b); the full key is printed once.')
    .option('--project <id>', 'project the key belongs to')
    .option('--all-projects', 'the key covers every project of this installation, also later ones')
    .option('--projects <ids>', 'the key covers these projects (comma-separated ids)')
    .option('--name <name>', 'what the key is for')
    .addOption(new Option('--scope <scope>', 'read (GET only) or write (everything)').choices(['read', 'write']).default('write'))
    .option('--expires-in <duration>', 'e.g. 90d, 12h')
    .option('--json', 'machine-readable output')
    .action(async (o: { project?: string; allProjects?: boolean; projects?: string; name?: string; scope: KeyScope; expiresIn?: string; json?: boolean }) => {
      if ([o.project !== undefined, o.allProjects === true, o.projects !== undefined].filter(Boolean).length !== 1) {
        throw new UsageError('Say what the key covers: exactly one of --project <id>, --all-projects or --projects <ids>.');
      }
      let expiresAt: number | null = null;
      if (o.expiresIn !== undefined) {
        const ms = parseDuration(o.expiresIn);
        if (!ms) throw new UsageError(`--expires-in must be a duration such as 90d or 12h, got "${o.expiresIn}".`);
        expiresAt = Date.now() + ms;
      }
      const listed = o.projects?.split(',').map((p) => p.trim()).filter(Boolean);
      if (listed && listed.length === 0) throw new UsageError('--projects needs at least one project id.');
      const created = await withStore(async ({ projects, keys }) => {
        for (const id of o.project ? [o.project] : (listed ?? [])) {
          if (!(await projects.get(id))) throw new UsageError(`Project "${id}" does not exist.`);
        }
        if (o.project) return keys.create({ projectId: o.project, name: o.name ?? 'API key', scope: o.scope, expiresAt });
        return keys.createAdmin({ projectIds: listed ?? null, name: o.name ?? 'Admin key', scope: o.scope, expiresAt });
      });
      const view = { ...apiKeyView(created.row), key: created.key };
      print(!!o.json, view, () => `${created.key}\n\nKey ${view.id} (${view.scope}) for ${coverText(view)}. This is the only time the key is shown: store it now.`);
    });

  key
    .command('list')
    .description('List API keys (prefixes only): all of them, or those usable on one project.')
    .option('--project <id>', 'only keys usable on this project: its own and those that cover it')
    .option('--json', 'machine-readable output')
    .action(async (o: { project?: string; json?: boolean }) => {
      const rows = (await withStore(({ keys }) => (o.project ? keys.listCovering(o.project) : keys.listAll()))).map(apiKeyView);
      print(!!o.json, rows, () =>
        table(
          rows.map((k) => ({
            ID: k.id,
            NAME: k.name,
            PREFIX: k.prefix + '…',
            COVERS: coverText(k),
            SCOPE: k.scope,
            CREATED: k.createdAt,
            'LAST USED': k.lastUsedAt ?? 'never',
            EXPIRES: k.expiresAt ?? 'never',
            STATE: k.revokedAt ? 'revoked' : k.expiresAt && Date.parse(k.expiresAt) <= Date.now() ? 'expired' : 'active',
          })),
        ),
      );
    });

  key
    .command('revoke <keyId>')
    .description('Revoke an API key at once.')
    .option('--json', 'machine-readable output')
    .action(async (id: string, o: { json?: boolean }) => {
      const row = await withStore(({ keys }) => keys.revoke(id));
      if (!row) throw new UsageError(`API key "${id}" does not exist.`);
      const view = apiKeyView(row);
      print(!!o.json, view, () => `Revoked ${view.id} (${view.prefix}…).`);
    });

  registerUserCommands(program);
  registerJobCommands(program);
  registerAnalyticsCommands(program);
  const analytics = program.commands.find((c) => c.name() === 'analytics')!;
  analytics.description('Visitor analytics: import access logs, export visitors and views.');
  registerAnalyticsQueryCommands(analytics);
  return program;
}

export async function runCli(argv: string[]): Promise<void> {
  // Files Folio creates (databases, their journals, mirrors, worktrees) are its user's alone.
  process.umask(0o077);
  try {
    await buildCli().parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      process.exitCode = err.exitCode;
      return;
    }
    if (err instanceof UsageError || err instanceof ConfigError || err instanceof ProjectInputError) {
      process.stderr.write(`folio: ${err.message}\n`);
      process.exitCode = 1;
      return;
    }
    throw err;
  }
}

await runCli(process.argv);
