// Secrets and files at rest: the data directory is its owner's alone, mirrors and worktrees included
// (folders 0700, no file open to group or others), a directory others can read gets a warning,
// repository tokens and webhook secrets are stored sealed (a copy of the database alone reveals none
// of them; rows from older versions are sealed by a migration), and a token sealed under another
// FOLIO_SECRET fails its job with a clear code instead of crashing.
import { chmodSync, existsSync, lstatSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { Migrator } from 'kysely';
import { migrate, openStore } from '../../src/store/database.ts';
import { createStoreDialect } from '../../src/store/dialect.ts';
import * as m001 from '../../src/store/migrations/001_core.ts';
import * as m002 from '../../src/store/migrations/002_users.ts';
import { ProjectsService } from '../../src/admin/projects.ts';
import { isScale, backendDatabases, type BackendDatabases } from '../helpers/backend.ts';
import { runCli, startProcess, type Child } from '../helpers/process.ts';
import { startTestServer, tempDir } from '../helpers/server.ts';
import { waitForJob } from '../agent/e2e-helpers.ts';
import { eventually } from '../helpers/handlers.ts';
import { startCodeHost } from '../fixtures/git-server.ts';
import { sequence, startFakeOpenAI, toolCall } from '../fixtures/fake-openai.ts';

const TOKEN = 'ghp_at_rest_token_0123456789abcdef';
const WEBHOOK_SECRET = 'whsec_at_rest_0123456789';
const cleanups: (() => Promise<void> | void)[] = [];
afterAll(async () => {
  for (const c of cleanups.reverse()) await c();
});

const modeOf = (p: string) => statSync(p).mode & 0o777;

async function serve(dataDir: string, databases: BackendDatabases): Promise<Child> {
  const child = await startProcess('bin/folio.mjs', ['serve', '--no-workers'], { ...databases.env, FOLIO_DATA_DIR: dataDir, PORT: '0', LOG_LEVEL: 'info', ANTHROPIC_API_KEY: 'x' });
  cleanups.push(() => void child.proc.kill('SIGKILL'));
  return child;
}

describe('files at rest', () => {
  it('a new data directory is 0700 and every file Folio writes in it 0600', async () => {
    const parent = tempDir();
    cleanups.push(() => rmSync(parent, { recursive: true, force: true }));
    const dataDir = path.join(parent, 'data');
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const child = await serve(dataDir, databases);
    // Something to write: a project and a key, so the databases have content.
    const created = await runCli(['project', 'create', '--name', 'P', '--repository', 'https://github.com/acme/docs', '--json'], { ...databases.env, FOLIO_DATA_DIR: dataDir });
    expect(created.code, created.stderr).toBe(0);
    expect(modeOf(dataDir)).toBe(0o700);
    const files = readdirSync(dataDir).filter((f) => statSync(path.join(dataDir, f)).isFile());
    expect(files).toContain('secret');
    if (!isScale) expect(files).toEqual(expect.arrayContaining(['folio.db', 'analytics.duckdb']));
    for (const f of files) expect(modeOf(path.join(dataDir, f)), f).toBe(0o600);
    expect(child.output()).not.toMatch(/readable by other users/);
  });

  it("after a real job, the mirror and the job's worktree are the owner's alone: folders 0700, no file open to group or others", async () => {
    const host = await startCodeHost({ token: TOKEN });
    cleanups.push(() => host.close());
    const llm = await startFakeOpenAI(sequence([toolCall('write_file', { path: 'docs/new.md', content: '# New\n' }), toolCall('finish', { title: 'Add a page', summary: 'Added.' })]));
    cleanups.push(() => llm.close());
    const dataDir = path.join(tempDir(), 'data');
    cleanups.push(() => rmSync(path.dirname(dataDir), { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const env = { ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_GIT_PROTOCOLS: 'https,http', FOLIO_OUTBOUND_ALLOW: '127.0.0.0/8', DOCS_TOKEN: TOKEN };
    const url = host.createRepo('acme/docs', { 'README.md': '# Docs\n', 'docs/index.md': '# Home\n' });
    const project = JSON.parse((await runCli(['project', 'create', '--name', 'P', '--repository', url, '--code-host', 'none', '--repo-token-env', 'DOCS_TOKEN', '--json'], env)).stdout);
    expect((await runCli(['project', 'update', project.id, '--repo-token-env', 'DOCS_TOKEN'], env)).code).toBe(0);
    const key = JSON.parse((await runCli(['key', 'create', '--project', project.id, '--json'], env)).stdout).key;
    // `folio serve`, as an operator runs it: the CLI sets the umask.
    const child = await startProcess('bin/folio.mjs', ['serve'], {
      ...env,
      PORT: '0',
      LOG_LEVEL: 'info',
      FOLIO_POLL: '100',
      FOLIO_MODEL: 'openai-compatible/test-model',
      OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl,
      OPENAI_COMPATIBLE_API_KEY: 'x',
    });
    cleanups.push(() => void child.proc.kill('SIGKILL'));
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json' };
    const created = (await (await fetch(`${child.url}/v2/agent/${project.id}/job`, { method: 'POST', headers, body: '{"prompt":"Add a page."}' })).json()) as { id: string };
    const job = await eventually(async () => {
      const j = (await (await fetch(`${child.url}/v2/agent/${project.id}/job/${created.id}`, { headers })).json()) as { status: string; error: unknown };
      return j.status !== 'active' ? j : null;
    }, 30_000);
    expect(job, child.output()).toMatchObject({ status: 'completed', error: null });
    expect(host.show('acme/docs', `folio/${created.id}`, 'docs/new.md')).toBe('# New\n');

    const entries = readdirSync(dataDir, { withFileTypes: true, recursive: true }).map((e) => path.join(e.parentPath, e.name));
    const under = (dir: string) => entries.filter((p) => p.startsWith(path.join(dataDir, dir) + path.sep));
    // A mirror with its objects, and the job's worktree (idle in the pool) with its files.
    expect(under('mirrors').some((p) => /objects\/(pack|[0-9a-f]{2})\//.test(p))).toBe(true);
    expect(under('worktrees').some((p) => p.endsWith(path.join('docs', 'new.md')))).toBe(true);
    for (const p of [dataDir, ...entries]) {
      const st = lstatSync(p);
      if (st.isDirectory()) expect(st.mode & 0o777, p).toBe(0o700);
      else expect(st.mode & 0o077, `${p} is ${(st.mode & 0o777).toString(8)}`).toBe(0);
    }
  });

  it('warns at start when others can read an existing data directory', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    chmodSync(dataDir, 0o755);
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const child = await serve(dataDir, databases);
    expect(child.output()).toMatch(/the data directory is readable by other users of this machine.*chmod 700/);
  });
});

describe('secrets at rest', () => {
  it('repository tokens and webhook secrets are stored sealed, never in plain text', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const env = { ...databases.env, FOLIO_DATA_DIR: dataDir, DOCS_TOKEN: TOKEN };
    const created = JSON.parse(
      (await runCli(['project', 'create', '--name', 'S', '--repository', 'https://github.com/acme/docs', '--webhook-url', 'https://hooks.example.com/x', '--webhook-secret', WEBHOOK_SECRET, '--json'], env)).stdout,
    );
    expect((await runCli(['project', 'update', created.id, '--repo-token-env', 'DOCS_TOKEN'], env)).code).toBe(0);

    const config = loadConfig(env);
    const store = await openStore(config);
    try {
      const raw = await store.db.selectFrom('projects').select(['repo_token', 'webhook_secret']).where('id', '=', created.id).executeTakeFirstOrThrow();
      expect(raw.repo_token).toMatch(/^enc:v1:/);
      expect(raw.webhook_secret).toMatch(/^enc:v1:/);
      expect(JSON.stringify(raw)).not.toContain(TOKEN);
      expect(JSON.stringify(raw)).not.toContain(WEBHOOK_SECRET);
      // Opened only where Folio uses them.
      expect(new ProjectsService(store.db, config).store.secrets(raw)).toEqual({ repoToken: TOKEN, webhookSecret: WEBHOOK_SECRET });
    } finally {
      await store.close();
    }
    if (!isScale) {
      // The file itself, WAL included: the stolen-disk case.
      const bytes = ['folio.db', 'folio.db-wal'].filter((f) => existsSync(path.join(dataDir, f))).map((f) => readFileSync(path.join(dataDir, f)).toString('latin1')).join('');
      expect(bytes).not.toContain(TOKEN);
      expect(bytes).not.toContain(WEBHOOK_SECRET);
    }
    // The API never returns them either.
    const listed = (await runCli(['project', 'list', '--json'], env)).stdout;
    expect(listed).not.toContain(TOKEN);
    expect(listed).not.toContain('enc:v1:');
  });

  it('seals the plain-text secrets of rows written before this version', async () => {
    const dataDir = tempDir();
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const databases = await backendDatabases();
    cleanups.push(() => databases.drop());
    const config = loadConfig({ ...databases.env, FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'upgrade-secret-0123456789' });
    // A store as the version before left it: the first two migrations, secrets in plain text.
    const dialect = createStoreDialect(config);
    try {
      const before = new Migrator({
        db: dialect.db,
        migrationTableName: 'folio_migrations',
        migrationLockTableName: 'folio_migrations_lock',
        provider: { getMigrations: async () => ({ '001_core': { up: (db) => m001.up(db, dialect) }, '002_users': { up: (db) => m002.up(db, dialect) } }) },
      });
      expect((await before.migrateToLatest()).error).toBeUndefined();
      const row = (id: string, repo_token: string | null, webhook_secret: string | null) => ({
        id,
        name: id,
        repository_url: 'https://github.com/acme/docs',
        base_branch: 'main',
        code_host: 'github' as const,
        default_model: null,
        draft_prs: 0,
        repo_token,
        webhook_url: 'https://hooks.example.com/x',
        webhook_secret,
        site_origins: '[]',
        created_at: 1,
        updated_at: 1,
      });
      // The table as 002 left it (no later columns): typed loosely.
      await dialect.db.insertInto('projects').values([row('prj_a', TOKEN, WEBHOOK_SECRET), row('prj_b', null, 'only-a-secret'), row('prj_c', null, null)] as never).execute();

      expect(await migrate(dialect, config.secret)).toEqual(expect.arrayContaining(['003_sealed_secrets']));
      const rows = await dialect.db.selectFrom('projects').selectAll().orderBy('id').execute();
      expect(rows.map((r) => [r.repo_token?.slice(0, 7) ?? null, r.webhook_secret?.slice(0, 7) ?? null])).toEqual([
        ['enc:v1:', 'enc:v1:'],
        [null, 'enc:v1:'],
        [null, null],
      ]);
      const projects = new ProjectsService(dialect.db, config);
      expect(projects.store.secrets(rows[0])).toEqual({ repoToken: TOKEN, webhookSecret: WEBHOOK_SECRET });
      expect(projects.store.secrets(rows[1])).toEqual({ repoToken: null, webhookSecret: 'only-a-secret' });
    } finally {
      await dialect.close();
    }
  });

  it('a token sealed under another FOLIO_SECRET fails the job with a clear code', async () => {
    const server = await startTestServer({ env: { FOLIO_SECRET: 'the-new-secret-0123456789abcdef' } });
    cleanups.push(() => server.close());
    const other = new ProjectsService(server.services.store.db, { ...server.services.config, secret: 'the-old-secret-0123456789abcdef' });
    const project = await other.create({ name: 'Old', repositoryUrl: 'https://github.com/acme/docs', repoToken: TOKEN });
    const key = await server.createKey(project.id);
    const created = (await server.api('POST', `/v2/agent/${project.id}/job`, { key, body: { prompt: 'x' } })).body;
    const job = await waitForJob(server, project.id, created.id, key);
    expect(job.error).toEqual({
      code: 'project_secret_unreadable',
      message: 'A stored projects.repo_token cannot be opened: it was sealed with another FOLIO_SECRET or changed.',
    });
  });
});

describe('metrics', () => {
  it('process metrics are named folio_process_… (no doubled prefix)', async () => {
    const server = await startTestServer({ workers: 0, env: { FOLIO_METRICS_TOKEN: 'metrics-token-0123456789' } });
    cleanups.push(() => server.close());
    const text = (await server.api('GET', '/metrics', { headers: { authorization: 'Bearer metrics-token-0123456789' } })).text;
    expect(text).toMatch(/^folio_process_cpu_user_seconds_total /m);
    expect(text).toMatch(/^folio_nodejs_heap_size_total_bytes /m);
    expect(text).not.toContain('folio_process_process_');
  });
});

