// Every process on a shared store holds the same FOLIO_SECRET: the store keeps a fingerprint of the
// secret that wrote it (a keyed hash of a constant), and a process with another secret — or none, so
// that it generated its own — refuses to start with one sentence. A PostgreSQL that does not answer or
// a database that does not exist is one sentence and a distinct exit code, not a stack trace.
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { secretFingerprint } from '../../src/store/fingerprint.ts';
import { runCli } from '../helpers/process.ts';
import { tempDir } from '../helpers/server.ts';
import { backendDatabases, isScale, NEEDS_POSTGRES, PG_ADMIN_URL, type BackendDatabases } from '../helpers/backend.ts';

const MISMATCH = /^folio: This database was written by processes with a different FOLIO_SECRET: start every process on it with the same FOLIO_SECRET as the others/;
const noStack = (text: string) => expect(text).not.toMatch(/^\s+at /m);

describe('the embedded store', () => {
  it('remembers a fingerprint of its secret, never the secret', async () => {
    const dataDir = tempDir();
    try {
      const config = loadConfig({ FOLIO_DATA_DIR: dataDir, FOLIO_SECRET: 'embedded-secret-0123456789abcdef' });
      const store = await openStore(config);
      const row = await store.db.selectFrom('folio_meta').selectAll().executeTakeFirstOrThrow();
      await store.close();
      expect(row).toEqual({ key: 'secret_fingerprint', value: secretFingerprint('embedded-secret-0123456789abcdef') });
      expect(readFileSync(path.join(dataDir, 'folio.db')).includes(Buffer.from('embedded-secret-0123456789abcdef'))).toBe(false);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('refuses to start when the secret file changed or was deleted (a new one would be generated)', async () => {
    const dataDir = tempDir();
    try {
      const env = { FOLIO_DATA_DIR: dataDir, LOG_LEVEL: 'silent' };
      expect((await runCli(['migrate'], env)).code).toBe(0);
      const secretFile = path.join(dataDir, 'secret');
      rmSync(secretFile);
      const deleted = await runCli(['migrate'], env);
      expect(deleted.code).toBe(78);
      expect(deleted.stderr.trim()).toMatch(MISMATCH);
      expect(deleted.stderr.trim().split('\n')).toHaveLength(1);
      noStack(deleted.stderr);
      writeFileSync(secretFile, 'another-secret-0123456789abcdefgh\n', { mode: 0o600 });
      const changed = await runCli(['project', 'list'], env);
      expect(changed.code).toBe(78);
      expect(changed.stderr.trim()).toMatch(MISMATCH);
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });
});

describe('an unreachable PostgreSQL', () => {
  it('is one sentence and exit code 69 for serve, worker and migrate', async () => {
    const env = { FOLIO_DATA_DIR: tempDir(), FOLIO_SECRET: 'pg-secret-0123456789abcdef', LOG_LEVEL: 'silent', DATABASE_URL: 'postgres://folio:hunter2-password@127.0.0.1:1/folio' };
    for (const command of [['migrate'], ['serve'], ['worker']]) {
      const r = await runCli(command, { ...env, PORT: '0' });
      expect(r.code, command.join(' ')).toBe(69);
      expect(r.stderr.trim()).toBe('folio: PostgreSQL at 127.0.0.1:1 does not answer (ECONNREFUSED): start it, or set DATABASE_URL to where it runs.');
      expect(r.stderr).not.toContain('hunter2');
      noStack(r.stderr);
    }
  });
});

describe.runIf(isScale)(`a shared PostgreSQL ${NEEDS_POSTGRES}`, () => {
  let databases: BackendDatabases;
  beforeAll(async () => {
    databases = await backendDatabases();
  });
  afterAll(async () => databases?.drop());

  const envWith = (secret: string | null) => ({
    ...databases.env,
    FOLIO_DATA_DIR: tempDir(),
    LOG_LEVEL: 'silent',
    ...(secret ? { FOLIO_SECRET: secret } : {}),
  });

  it('two processes starting together with the same secret on an empty database both start', async () => {
    const a = loadConfig(envWith('shared-secret-0123456789abcdef'));
    const b = loadConfig(envWith('shared-secret-0123456789abcdef'));
    const [sa, sb] = await Promise.all([openStore(a), openStore(b)]);
    await Promise.all([sa.close(), sb.close()]);
  });

  it('a process with another FOLIO_SECRET, or none (it would generate its own), refuses to start', async () => {
    const other = await runCli(['migrate'], envWith('another-secret-0123456789abcdef'));
    expect(other.code).toBe(78);
    expect(other.stderr.trim()).toMatch(MISMATCH);
    noStack(other.stderr);
    const none = await runCli(['serve'], { ...envWith(null), PORT: '0' });
    expect(none.code).toBe(78);
    expect(none.stderr.trim()).toMatch(MISMATCH);
  });

  it('a database that does not exist is one sentence saying to create it', async () => {
    const u = new URL(PG_ADMIN_URL);
    u.pathname = '/folio_missing_database';
    const r = await runCli(['migrate'], { FOLIO_DATA_DIR: tempDir(), FOLIO_SECRET: 'x-secret-0123456789abcdef', LOG_LEVEL: 'silent', DATABASE_URL: u.toString() });
    expect(r.code).toBe(69);
    expect(r.stderr.trim()).toMatch(/^folio: The PostgreSQL database "folio_missing_database" does not exist at 127\.0\.0\.1:5432: create it first \(createdb -h 127\.0\.0\.1 -p 5432 folio_missing_database\), then start Folio again\.$/);
    noStack(r.stderr);
  });
});
