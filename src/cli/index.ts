// The `folio` command: builds the commander program from the command groups and runs it, with one
// error handling for every command (errors.ts).
import { Command, CommanderError } from 'commander';
import { describeFailure, exitCodeOf } from './errors.ts';
import { registerServerCommands } from './server.ts';
import { checkRequired } from './options.ts';
import { FOLIO_VERSION } from '../version.ts';

interface Group {
  description: string;
  load: () => Promise<{ register(group: Command): void }>;
}

/**
 * The command groups, in the order of `folio --help`. A group's module is loaded when the group is
 * invoked, so `folio jobs …` loads neither the stores nor the analytics engines, and starts fast.
 */
const GROUPS: Record<string, Group> = {
  project: { description: 'Manage projects.', load: () => import('./projects.ts') },
  key: { description: 'Manage admin API keys.', load: () => import('./keys.ts') },
  user: { description: 'Manage dashboard operators (the first user is the owner).', load: () => import('./users.ts') },
  jobs: { description: 'Run and follow agent jobs on a Folio server (FOLIO_URL, FOLIO_API_KEY, FOLIO_PROJECT).', load: () => import('./jobs.ts') },
  analytics: { description: 'Visitor analytics: import access logs, export visitors and views.', load: () => import('./analytics.ts') },
  suggestions: { description: 'What traffic proposes to the agent (broken paths, Markdown for AI agents), and starting its jobs.', load: () => import('./suggestions.ts') },
};

function buildProgram(): Command {
  const program = new Command('folio')
    .description('Folio: LLM agent jobs on your docs repository, and visitor analytics that tell humans from AI.')
    .version(FOLIO_VERSION, '-V, --version', 'print Folio\'s version')
    // An error is its line and where the usage is, not the whole help in front of it.
    .showHelpAfterError('(add --help for usage)')
    .exitOverride()
    // Required options (options.ts: required) are checked here, for every command, before its action.
    .hook('preAction', (_program, command) => checkRequired(command));
  registerServerCommands(program);
  for (const [name, group] of Object.entries(GROUPS)) program.command(name).description(group.description);
  return program;
}

/**
 * Registers the commands of the group the arguments name (`<group> …` or `help <group>`; the program
 * has no options of its own, so the group comes first), before commander parses them.
 */
async function loadGroup(program: Command, args: string[]): Promise<void> {
  const name = args[0] === 'help' ? args[1] : args[0];
  if (name === undefined || !Object.hasOwn(GROUPS, name)) return;
  (await GROUPS[name].load()).register(program.commands.find((c) => c.name() === name)!);
}

/**
 * Runs the command in `argv` (process.argv: node, script, arguments…). A failure the user can act on
 * is a line on stderr and exit code 1 (130 for a wait stopped by Ctrl-C); anything else is a bug and
 * keeps its stack trace.
 */
export async function run(argv: string[]): Promise<void> {
  // Files Folio creates (databases, their journals, mirrors, worktrees) are its user's alone.
  process.umask(0o077);
  try {
    const program = buildProgram();
    await loadGroup(program, argv.slice(2));
    await program.parseAsync(argv);
  } catch (err) {
    if (err instanceof CommanderError) {
      // Commander has printed the message (or the help); only its exit code is left.
      process.exitCode = err.exitCode;
      return;
    }
    const text = describeFailure(err);
    process.stderr.write(`${text ?? (err instanceof Error && err.stack ? err.stack : `folio: ${String(err)}`)}\n`);
    process.exitCode = exitCodeOf(err);
  }
}
