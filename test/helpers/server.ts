// Starts a real Folio server on a random port with its own data directory, for integration tests.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadConfig } from '../../src/config.ts';
import { startServer, type RunningServer } from '../../src/http/server.ts';
import type { JobHandler } from '../../src/jobs/handler.ts';
import type { KeyScope } from '../../src/store/schema.ts';
import type { ProjectInput } from '../../src/store/projects.ts';
import { backendDatabases, type BackendDatabases } from './backend.ts';
import { LOCAL_GIT_ENV } from '../fixtures/git-server.ts';

export interface TestServer extends RunningServer {
  dataDir: string;
  env: Record<string, string>;
  createProject(input?: Partial<ProjectInput>): Promise<string>;
  createKey(projectId: string, scope?: KeyScope, expiresAt?: number | null): Promise<string>;
  /** fetch against the server with an optional API key. */
  api(method: string, urlPath: string, opts?: { key?: string; body?: unknown; headers?: Record<string, string> }): Promise<{ status: number; headers: Headers; body: any; text: string }>;
}

export function tempDir(prefix = 'folio-test-'): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}

export async function startTestServer(
  opts: {
    env?: Record<string, string>;
    jobHandler?: JobHandler;
    workers?: number;
    dataDir?: string;
    /** Databases prepared by the caller (e.g. filled by the CLI first); the caller drops them. */
    databases?: BackendDatabases;
  } = {},
): Promise<TestServer> {
  const dataDir = opts.dataDir ?? tempDir();
  const ownsDatabases = opts.databases === undefined;
  const databases = opts.databases ?? (await backendDatabases());
  const env: Record<string, string> = {
    ...databases.env,
    ...LOCAL_GIT_ENV,
    PORT: '0',
    HOST: '127.0.0.1',
    FOLIO_DATA_DIR: dataDir,
    LOG_LEVEL: 'silent',
    FOLIO_SECRET: 'test-secret-0123456789abcdef',
    ANTHROPIC_API_KEY: 'test-anthropic-key',
    FOLIO_POLL: '200',
    // Mintlify's CLI (~15 s a build) runs only in the tests about the site build (test/site-build/).
    FOLIO_BUILD_TOOLS_DIR: path.join(dataDir, 'no-build-tools'),
    // Beside the data directory (never inside it), removed with it.
    FOLIO_BUILD_DIR: `${dataDir}-build`,
    // Projects point at repositories that need not exist; test/admin/repository-check.test.ts turns it on.
    FOLIO_REPOSITORY_CHECK: 'false',
    ...opts.env,
  };
  const config = loadConfig(env);
  const server = await startServer(config, { jobHandler: opts.jobHandler, workers: opts.workers });
  const ownsDir = opts.dataDir === undefined;
  return {
    ...server,
    dataDir,
    env,
    async close() {
      await server.close();
      if (ownsDatabases) await databases.drop();
      if (ownsDir) rmSync(dataDir, { recursive: true, force: true });
      rmSync(`${dataDir}-build`, { recursive: true, force: true });
    },
    async createProject(input = {}) {
      const row = await server.services.projects.create({ name: 'Docs', repositoryUrl: 'https://github.com/acme/docs', ...input });
      return row.id;
    },
    async createKey(projectId, scope = 'write', expiresAt = null) {
      return (await server.services.keys.store.create({ projectId, scope, expiresAt })).key;
    },
    async api(method, urlPath, o = {}) {
      const headers: Record<string, string> = { ...o.headers };
      if (o.key) headers.authorization = `Bearer ${o.key}`;
      let body: string | undefined;
      if (o.body !== undefined) {
        body = typeof o.body === 'string' ? o.body : JSON.stringify(o.body);
        headers['content-type'] ??= 'application/json';
      }
      const res = await fetch(server.url + urlPath, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = undefined;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {}
      return { status: res.status, headers: res.headers, body: parsed, text };
    },
  };
}
