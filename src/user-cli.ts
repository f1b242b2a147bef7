// `folio user …`: dashboard operators from the command line (the first one is the owner).
import { randomBytes } from 'node:crypto';
import { Option, type Command } from 'commander';
import { loadConfig } from './config.ts';
import { openStore } from './store/database.ts';
import { UserInputError, UserStore, userView } from './store/users.ts';
import type { UserRole } from './store/users-schema.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  // One line: the trailing newline of `echo` or a file is not part of the password.
  return Buffer.concat(chunks).toString('utf8').replace(/\r?\n$/, '');
}

async function withUsers<T>(fn: (users: UserStore) => Promise<T>): Promise<T> {
  const store = await openStore(loadConfig());
  try {
    return await fn(new UserStore(store.db));
  } finally {
    await store.close();
  }
}

/** Runs an action; a UserInputError is printed as one line on stderr with exit code 1. */
function action<A extends unknown[]>(fn: (...args: A) => Promise<void>) {
  return async (...args: A) => {
    try {
      await fn(...args);
    } catch (err) {
      if (!(err instanceof UserInputError)) throw err;
      process.stderr.write(`folio: ${err.message}\n`);
      process.exitCode = 1;
    }
  };
}

export function registerUserCommands(program: Command): void {
  const user = program.command('user').description('Manage dashboard operators (the first user is the owner).');

  user
    .command('create')
    .description('Create a dashboard user. Without --password-stdin a strong password is generated and printed once.')
    .requiredOption('--email <email>', 'sign-in email')
    .option('--password-stdin', 'read the password from standard input')
    .addOption(new Option('--role <role>', 'owner or operator (default: owner for the first user)').choices(['owner', 'operator']))
    .option('--json', 'machine-readable output')
    .action(
      action(async (o: { email: string; passwordStdin?: boolean; role?: UserRole; json?: boolean }) => {
        const generated = o.passwordStdin ? null : randomBytes(18).toString('base64url');
        const password = generated ?? (await readStdin());
        const row = await withUsers((users) => users.create({ email: o.email, password, role: o.role }));
        const view = userView(row);
        if (o.json) {
          process.stdout.write(JSON.stringify(generated ? { ...view, password: generated } : view, null, 2) + '\n');
        } else {
          process.stdout.write(`Created ${view.role} ${view.email} (${view.id}).\n`);
          if (generated) process.stdout.write(`Password: ${generated}\nThis is the only time the password is shown.\n`);
        }
      }),
    );

  user
    .command('set-password')
    .description('Set a user\'s password from standard input; signs the user out everywhere.')
    .requiredOption('--email <email>', 'sign-in email')
    .action(
      action(async (o: { email: string }) => {
        const password = await readStdin();
        await withUsers(async (users) => {
          const row = await users.findByEmail(o.email);
          if (!row) throw new UserInputError(`There is no user with the email ${o.email}.`);
          await users.setPassword(row.id, password);
        });
        process.stdout.write(`Password changed for ${o.email}.\n`);
      }),
    );

  user
    .command('list')
    .description('List dashboard users.')
    .option('--json', 'machine-readable output')
    .action(async (o: { json?: boolean }) => {
      const rows = (await withUsers((users) => users.list())).map(userView);
      if (o.json) return void process.stdout.write(JSON.stringify(rows, null, 2) + '\n');
      if (rows.length === 0) return void process.stdout.write('(none)\n');
      for (const u of rows) process.stdout.write(`${u.id}  ${u.role.padEnd(8)}  ${u.email}  last sign-in ${u.lastLoginAt ?? 'never'}\n`);
    });
}
