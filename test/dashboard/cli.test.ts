// `folio user create|list|set-password` against a real data directory, then sign-in with the result.
import { rmSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { runCli } from '../helpers/process.ts';
import { backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import { Browser } from './session.ts';

const dataDir = tempDir('folio-usercli-');
let databases: BackendDatabases;
beforeAll(async () => {
  databases = await backendDatabases();
});
afterAll(async () => {
  rmSync(dataDir, { recursive: true, force: true });
  await databases.drop();
});

/** The real `folio` binary, on this leg's backend. */
function folio(args: string[], stdin = ''): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(args, { ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'test-secret-0123456789abcdef', LOG_LEVEL: 'silent' }, stdin).then((r) => ({ ...r, code: r.code ?? -1 }));
}

describe('folio user', () => {
  it('creates the owner from stdin, refuses bad input, generates a password, lists, and the users can sign in', async () => {
    const created = await folio(['user', 'create', '--email', 'Ops@Example.com', '--password-stdin'], 'a very long password\n');
    expect(created.stderr).toBe('');
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(/^Created owner ops@example.com \(usr_[a-z0-9]+\)\.$/m);

    const dup = await folio(['user', 'create', '--email', 'ops@example.com', '--password-stdin'], 'another long password');
    expect(dup.code).toBe(1);
    expect(dup.stderr).toBe('folio: A user with the email ops@example.com already exists.\n');
    const weak = await folio(['user', 'create', '--email', 'weak@example.com', '--password-stdin'], 'short');
    expect(weak.code).toBe(1);
    expect(weak.stderr).toContain('at least 10 characters');
    const badEmail = await folio(['user', 'create', '--email', 'nope', '--password-stdin'], 'a very long password');
    expect(badEmail.code).toBe(1);
    expect(badEmail.stderr).toContain('is not an email address');

    const generated = await folio(['user', 'create', '--email', 'second@example.com', '--json']);
    expect(generated.code).toBe(0);
    const second = JSON.parse(generated.stdout);
    expect(second).toMatchObject({ email: 'second@example.com', role: 'operator' });
    expect(second.password).toMatch(/^[A-Za-z0-9_-]{24}$/);

    const list = await folio(['user', 'list', '--json']);
    expect(JSON.parse(list.stdout).map((u: { email: string }) => u.email)).toEqual(['ops@example.com', 'second@example.com']);
    const human = (await folio(['user', 'list'])).stdout.split('\n');
    expect(human[0]).toMatch(/^ID\s+ROLE\s+EMAIL\s+LAST SIGN-IN$/);
    expect(human[1]).toMatch(/^usr_\w+\s+owner\s+ops@example\.com\s+never$/);
    expect(human[2]).toMatch(/^usr_\w+\s+operator\s+second@example\.com\s+never$/);

    const changed = await folio(['user', 'set-password', '--email', 'second@example.com'], 'changed password 123');
    expect(changed.code).toBe(0);
    const unknown = await folio(['user', 'set-password', '--email', 'ghost@example.com'], 'changed password 123');
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain('There is no user');

    const server = await startTestServer({ dataDir, workers: 0, databases });
    try {
      const b = new Browser(server);
      expect((await b.req('GET', '/api/setup')).body).toEqual({ setupRequired: false, tokenRequired: false });
      expect((await b.req('POST', '/api/login', { body: { email: 'ops@example.com', password: 'a very long password' } })).status).toBe(200);
      expect((await b.req('POST', '/api/login', { body: { email: 'second@example.com', password: second.password } })).status).toBe(401);
      expect((await b.req('POST', '/api/login', { body: { email: 'second@example.com', password: 'changed password 123' } })).status).toBe(200);
    } finally {
      await server.close();
    }
  });
});
