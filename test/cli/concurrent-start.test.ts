// Several processes opening a new data directory at once (issue 30: `npm test` once got a raw
// "database is locked" from the CLI). Each waits its turn: the busy timeout is set before anything
// takes a lock (switching to WAL included), migrations run once under the write lock, and the
// generated secret appears whole, so all agree on it. None fails and none prints a stack trace.
// On the scale leg the same eight share a new PostgreSQL database.
import { existsSync, readdirSync, rmSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCli } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { backendDatabases } from '../helpers/backend.ts';

const ROUNDS = 3;

/** The eight commands of one round: four projects, two keys, a user, a list; each its own process. */
function commands(round: number): string[][] {
  return [
    ...[0, 1, 2, 3].map((i) => ['project', 'create', '--name', `Docs ${round}.${i}`, '--repository', `https://github.com/acme/docs-${i}`, '--json']),
    ['key', 'create', '--all-projects', '--name', 'ci', '--json'],
    ['key', 'create', '--all-projects', '--scope', 'read', '--json'],
    ['user', 'create', '--email', `ops${round}@example.com`, '--json'],
    ['project', 'list', '--json'],
  ];
}

describe('a new data directory opened by eight processes at once', () => {
  it(`eight CLI commands started together all succeed, with no stack trace (${ROUNDS} rounds)`, async () => {
    for (let round = 0; round < ROUNDS; round++) {
      const parent = tempDir('folio-eight-');
      // Not there yet: whichever process comes first creates it, and its secret.
      const dir = path.join(parent, 'data');
      const databases = await backendDatabases();
      try {
        // Made-up repositories: not asked (with a network, github.com would refuse them).
        const env = { ...databases.env, FOLIO_DATA_DIR: dir, FOLIO_SECRET: '', LOG_LEVEL: 'warn', FOLIO_REPOSITORY_CHECK: 'false' };
        const results = await Promise.all(commands(round).map((args) => runCli(args, env).then((r) => ({ args, ...r }))));
        for (const r of results) {
          const what = `round ${round}: folio ${r.args.join(' ')}`;
          expect(r.stderr, what).toBe('');
          expect(r.code, what).toBe(0);
          expect(() => JSON.parse(r.stdout), what).not.toThrow();
        }
        const listed = JSON.parse((await runCli(['project', 'list', '--json'], env)).stdout) as { name: string }[];
        expect(listed.map((p) => p.name).sort()).toEqual([0, 1, 2, 3].map((i) => `Docs ${round}.${i}`));
        // One secret, nothing left beside it; every migration applied once.
        expect(readdirSync(dir).filter((f) => f.startsWith('secret'))).toEqual(['secret']);
        const migrate = await runCli(['migrate', '--json'], env);
        expect(migrate.code, migrate.stderr).toBe(0);
        expect(JSON.parse(migrate.stdout).applied).toEqual([]);
      } finally {
        await databases.drop();
        if (existsSync(parent)) rmSync(parent, { recursive: true, force: true });
      }
    }
  }, 180_000);
});
