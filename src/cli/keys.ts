// `folio key create|list|revoke`: admin API keys, for one project or covering many.
import { Option, type Command } from 'commander';
import { parseDuration } from '../config.ts';
import { apiKeyView, type ApiKeyView } from '../store/api-keys.ts';
import type { KeyScope } from '../store/schema.ts';
import { UsageError } from './errors.ts';
import { projectOption } from './options.ts';
import { clean, printResult, table, write } from './output.ts';
import { withStore } from './store.ts';

/** What a key covers, in words: "project prj_…", "every project", "projects prj_a, prj_b". */
function coverText(k: ApiKeyView): string {
  if (k.kind === 'project') return `project ${k.projectId}`;
  return k.allProjects ? 'every project' : `projects ${k.projectIds.join(', ')}`;
}

/** Keys expire after 90 days unless asked otherwise, as in the dashboard: a forgotten key stops working. */
const DEFAULT_EXPIRY = '90d';

export function register(key: Command): void {
  key
    .command('create')
    .description('Create an API key for one project, or one that covers many (--all-projects, --projects a,b); the full key is printed once.')
    .addOption(projectOption('project the key belongs to (FOLIO_PROJECT applies when --all-projects and --projects are not given)'))
    .option('--all-projects', 'the key covers every project of this installation, also later ones')
    .option('--projects <ids>', 'the key covers these projects (comma-separated ids)')
    .option('--name <name>', 'what the key is for')
    .addOption(new Option('--scope <scope>', 'read (GET only) or write (everything)').choices(['read', 'write']).default('write'))
    .option('--expires-in <duration>', 'e.g. 30d, 12h, or never (the dashboard\'s default too)', DEFAULT_EXPIRY)
    .option('--json', 'machine-readable output')
    .action(async (o: { project?: string; allProjects?: boolean; projects?: string; name?: string; scope: KeyScope; expiresIn?: string; json?: boolean }, cmd: Command) => {
      // FOLIO_PROJECT is a default: --all-projects or --projects on the command line say otherwise.
      // An empty value is none (never a key for every project by accident).
      if (o.project === '' || (cmd.getOptionValueSource('project') === 'env' && (o.allProjects || o.projects !== undefined))) o.project = undefined;
      if ([o.project !== undefined, o.allProjects === true, o.projects !== undefined].filter(Boolean).length !== 1) {
        throw new UsageError('Say what the key covers: exactly one of --project <id>, --all-projects or --projects <ids>.');
      }
      let expiresAt: number | null = null;
      if (o.expiresIn !== undefined && o.expiresIn !== 'never') {
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
      printResult(o.json, view, () => `${created.key}\n\nKey ${view.id} (${view.scope}) for ${coverText(view)}. This is the only time the key is shown: store it now.`);
    });

  key
    .command('list')
    .description('List API keys (prefixes only): all of them, or those usable on one project.')
    .addOption(projectOption('only keys usable on this project: its own and those that cover it'))
    .option('--json', 'machine-readable output')
    .action(async (o: { project?: string; json?: boolean }, cmd: Command) => {
      if (!o.json && o.project && cmd.getOptionValueSource('project') === 'env') {
        write(process.stderr, `Keys usable on project ${clean(o.project)} (FOLIO_PROJECT); unset it to list every key.`);
      }
      const rows = (await withStore(({ keys }) => (o.project ? keys.listCovering(o.project) : keys.listAll()))).map(apiKeyView);
      printResult(o.json, rows, () =>
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
      printResult(o.json, view, () => `Revoked ${view.id} (${view.prefix}…).`);
    });
}
