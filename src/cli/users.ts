// `folio user create|set-password|list`: dashboard operators from the command line (the first one is
// the owner).
import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import { UserInputError, userView } from '../store/users.ts';
import type { UserRole } from '../store/users-schema.ts';
import { required } from './options.ts';
import { printResult, table, write } from './output.ts';
import { withStore } from './store.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: the trailing newline of `echo` or a file is not part of the password.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

export function register(user: Command): void {
  user
    .command('create')
    .description('Create a dashboard user. Without --password-stdin a strong password is generated and printed once.')
    .addOption(required(new Option('--email <email>', 'sign-in email')))
    .option('--password-stdin', 'read the password from standard input')
    .addOption(new Option('--role <role>', 'owner or operator (default: owner for the first user)').choices(['owner', 'operator']))
    .option('--json', 'machine-readable output')
    .action(async (o: { email: string; passwordStdin?: boolean; role?: UserRole; json?: boolean }) => {
      const generated = o.passwordStdin ? null : randomBytes(18).toString('base64url');
      const password = generated ?? (await readStdin());
      const view = userView(await withStore(({ users }) => users.create({ email: o.email, password, role: o.role })));
      printResult(o.json, generated ? { ...view, password: generated } : view, () =>
        [`Created ${view.role} ${view.email} (${view.id}).`, ...(generated ? [`Password: ${generated}`, 'This is the only time the password is shown.'] : [])].join('\n'),
      );
    });

  user
    .command('set-password')
    .description('Set a user\'s password from standard input; signs the user out everywhere.')
    .addOption(required(new Option('--email <email>', 'sign-in email')))
    .action(async (o: { email: string }) => {
      const password = await readStdin();
      await withStore(async ({ users }) => {
        const row = await users.findByEmail(o.email);
        if (!row) throw new UserInputError(`There is no user with the email ${o.email}.`);
        await users.setPassword(row.id, password);
      });
      write(process.stdout, `Password changed for ${o.email}.`);
    });

  user
    .command('list')
    .description('List dashboard users.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const rows = (await withStore(({ users }) => users.list())).map(userView);
      printResult(o.json, rows, () => table(rows.map((u) => ({ ID: u.id, ROLE: u.role, EMAIL: u.email, 'LAST SIGN-IN': u.lastLoginAt ?? 'never' }))));
    });
}
