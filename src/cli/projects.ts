// `folio project create|update|list`: projects in the state store.
import { Option, type Command } from 'commander';
import { readNamedSecret } from '../config.ts';
import { CODE_HOST_KINDS, type CodeHostKind } from '../codehost/kinds.ts';
import { CHECKS_MODES, type ChecksMode } from '../store/projects.ts';
import { projectView, type ProjectSettings as ProjectInput } from '../admin/projects.ts';
import { UsageError } from './errors.ts';
import { boolOption, repeatable } from './options.ts';
import { printResult, table } from './output.ts';
import { withStore } from './store.ts';

export function register(project: Command): void {
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
    .option('--site-origin <origin>', 'origin allowed to send browser analytics (repeatable)', repeatable)
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
      printResult(o.json, view, () => `Created project ${view.id} (${view.name}, ${view.codeHost}, base ${view.baseBranch}).`);
    });

  project
    .command('update <projectId>')
    .description('Change a project\'s settings.')
    .option('--name <name>')
    .option('--repository <url>')
    .option('--branch <branch>')
    .addOption(new Option('--code-host <kind>').choices(CODE_HOST_KINDS))
    .option('--model <model>')
    .option('--draft-prs <bool>', 'true or false', boolOption)
    .option('--webhook-url <url>', 'empty string removes it')
    .option('--webhook-secret <secret>', 'empty string removes it')
    .option('--repo-token-env <name>', 'read a per-project repository token from this environment variable')
    .option('--site-origin <origin>', 'replaces the allowed origins (repeatable)', repeatable)
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
      printResult(o.json as boolean | undefined, view, () => `Updated project ${view.id}.`);
    });

  project
    .command('list')
    .description('List projects.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const rows = (await withStore(({ projects }) => projects.list())).map(projectView);
      printResult(o.json, rows, () =>
        table(rows.map((p) => ({ ID: p.id, NAME: p.name, REPOSITORY: p.repositoryUrl, BRANCH: p.baseBranch, HOST: p.codeHost, MODEL: p.defaultModel ?? '(server default)', CHECKS: p.checks }))),
      );
    });
}
