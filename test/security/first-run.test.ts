// A new server cannot be claimed by a stranger (issue 30): `folio serve` prints the setup link, with
// the setup token, only while no owner exists; only that token creates the owner; the token is in no
// other log line or answer. Behind a proxy, every API process on one store has the same token.
import { rmSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { startProcess, type Child } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { eventually } from '../helpers/handlers.ts';
import { backendDatabases, isScale, NEEDS_POSTGRES, type BackendDatabases } from '../helpers/backend.ts';
import { OWNER } from '../dashboard/session.ts';

const children: Child[] = [];
const dirs: string[] = [];
const databases: BackendDatabases[] = [];
afterAll(async () => {
  for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
  await Promise.all(children.map((c) => c.exited));
  for (const d of databases) await d.drop();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** `folio serve` on a new data directory, or on `env.FOLIO_DATA_DIR`. */
async function serve(env: Record<string, string>): Promise<Child> {
  const dir = env.FOLIO_DATA_DIR ?? newDir();
  // Access logs on: the setup page's request must not carry the token into them.
  const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], { FOLIO_DATA_DIR: dir, PORT: '0', LOG_LEVEL: 'info', FOLIO_ACCESS_LOG: 'true', ANTHROPIC_API_KEY: 'x', ...env });
  children.push(child);
  await eventually(async () => child.output().includes('"msg":"Data: '), 15_000);
  return child;
}

const logLines = (child: Child) => child.output().split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);

/** The setup link `folio serve` printed, if it printed one. */
const setupLink = (child: Child) => logLines(child).find((l) => typeof l.setupUrl === 'string')?.setupUrl as string | undefined;

function newDir(): string {
  const dir = tempDir('folio-first-run-');
  dirs.push(dir);
  return dir;
}

const setUp = (url: string, setupToken?: string) =>
  fetch(`${url}/api/setup`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ ...OWNER, setupToken }) });

async function stop(child: Child): Promise<void> {
  child.proc.kill('SIGTERM');
  await child.exited;
}

describe('a new server cannot be claimed by a stranger', () => {
  it('folio serve prints the setup link only while no owner exists; only its token creates the owner; the token is in no other log line or answer', async () => {
    const db = await backendDatabases();
    databases.push(db);
    // No FOLIO_SECRET: the generated one keys the token.
    const first = await serve({ ...db.env, FOLIO_SECRET: '' });
    const link = setupLink(first);
    expect(link).toMatch(new RegExp(`^${first.url}/setup#token=[A-Za-z0-9_-]{43}$`));
    const token = new URL(link!).hash.slice('#token='.length);

    expect(await (await fetch(`${first.url}/api/setup`)).json()).toEqual({ setupRequired: true, tokenRequired: true });
    // What a browser asks for when it opens the link: the page, without the fragment.
    const page = await fetch(link!);
    expect(page.status).toBe(200);
    for (const wrong of [undefined, '', 'guess-0123456789abcdef', token.slice(1)]) {
      const res = await setUp(first.url, wrong);
      expect(res.status, String(wrong)).toBe(403);
      const body = await res.text();
      expect(JSON.parse(body).code).toBe('invalid_setup_token');
      expect(body).not.toContain(token);
    }
    const owner = await setUp(first.url, token);
    expect(owner.status).toBe(201);
    expect(await owner.text()).not.toContain(token);
    expect(await (await fetch(`${first.url}/api/setup`)).json()).toEqual({ setupRequired: false, tokenRequired: false });
    expect((await setUp(first.url, token)).status).toBe(409);

    // Every request is in the access log by now: the page's without the token, and the token in one line only, the first-run one.
    await eventually(async () => logLines(first).filter((l) => (l.req as { url?: string } | undefined)?.url === '/api/setup').length === 8);
    expect(logLines(first).some((l) => (l.req as { url?: string } | undefined)?.url === '/setup')).toBe(true);
    const withToken = first.output().split('\n').filter((l) => l.includes(token));
    expect(withToken).toHaveLength(1);
    expect(JSON.parse(withToken[0])).toMatchObject({ level: 30, setupUrl: link, msg: expect.stringMatching(/^Create the owner account: /) });
    await stop(first);
  }, 60_000);

  it('once the owner exists, folio serve prints no setup link and no token', async () => {
    const db = await backendDatabases();
    databases.push(db);
    const env = { ...db.env, FOLIO_DATA_DIR: newDir() };
    const first = await serve(env);
    const token = new URL(setupLink(first)!).hash.slice('#token='.length);
    expect((await setUp(first.url, token)).status).toBe(201);
    await stop(first);
    const again = await serve(env);
    expect(setupLink(again)).toBeUndefined();
    expect(again.output()).not.toContain(token);
    expect(again.output()).not.toContain('Create the owner account');
    await stop(again);
  }, 60_000);
});

describe.skipIf(!isScale)(`behind a proxy ${NEEDS_POSTGRES}`, () => {
  it('every API process on one PostgreSQL prints the same setup link, and its token works on any of them', async () => {
    const db = await backendDatabases();
    databases.push(db);
    // As in deploy/compose.yaml: each process its own data directory, one store, one FOLIO_SECRET.
    const env = { ...db.env, FOLIO_SECRET: 'shared-by-every-process-0123456789' };
    const [a, b] = await Promise.all([serve(env), serve(env)]);
    const [linkA, linkB] = [setupLink(a)!, setupLink(b)!];
    const token = new URL(linkA).hash.slice('#token='.length);
    expect(new URL(linkB).hash).toBe(new URL(linkA).hash);
    expect((await setUp(b.url, 'not-the-token-0123456789')).status).toBe(403);
    expect((await setUp(b.url, token)).status).toBe(201);
    expect(await (await fetch(`${a.url}/api/setup`)).json()).toEqual({ setupRequired: false, tokenRequired: false });
    expect((await setUp(a.url, token)).status).toBe(409);
    await Promise.all([stop(a), stop(b)]);
  }, 60_000);
});
