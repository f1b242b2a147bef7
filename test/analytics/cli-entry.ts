// Test entry for `folio analytics …` that does not depend on src/main.ts wiring.
import { Command } from 'commander';
import { registerAnalyticsCommands } from '../../src/analytics/cli.ts';

const program = new Command('folio').exitOverride();
registerAnalyticsCommands(program);
try {
  await program.parseAsync(process.argv);
} catch (err) {
  if ((err as { code?: string }).code?.startsWith('commander.')) process.exitCode = (err as { exitCode?: number }).exitCode ?? 1;
  else throw err;
}
