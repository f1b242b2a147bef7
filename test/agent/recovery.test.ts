// Recovery: the server process is SIGKILLed mid-run (after the pull request was opened but before the
// run recorded it); a restarted server resumes the job from what was pushed and ends with exactly one PR.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { openStore } from '../../src/store/database.ts';
import { ProjectsService } from '../../src/admin/projects.ts';
import { ApiKeyStore } from '../../src/store/api-keys.ts';
import { startCodeHost, type CodeHostServer, LOCAL_GIT_ENV } from '../fixtures/git-server.ts';
import { sequence, startFakeOpenAI, toolCall, type FakeOpenAI } from '../fixtures/fake-openai.ts';
import { tempDir } from '../helpers/server.ts';
import { TOKEN } from './e2e-helpers.ts';

const ROOT = path.resolve(import.meta.dirname, '../..');

async function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = net.createServer();
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

function serve(env: Record<string, string>): ChildProcess {
  return spawn(path.join(ROOT, 'node_modules/.bin/node'), ['bin/folio.mjs', 'serve'], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', ...env },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

async function waitReady(base: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      const r = await fetch(`${base}/v2/agent/none/job/none`);
      if (r.status > 0) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error('server did not start');
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('recovery after SIGKILL', () => {
  let host: CodeHostServer;
  let llm: FakeOpenAI;
  let dataDir: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    host = await startCodeHost({ token: TOKEN });
    llm = await startFakeOpenAI();
    dataDir = tempDir('folio-recovery-');
  });
  afterAll(async () => {
    for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
    await llm.close();
    await host.close();
    rmSync(dataDir, { recursive: true, force: true });
  });

  it('ends with exactly one pull request', async () => {
    const port = await freePort();
    const env = {
      ...LOCAL_GIT_ENV,
      FOLIO_DATA_DIR: dataDir,
      PORT: String(port),
      HOST: '127.0.0.1',
      LOG_LEVEL: 'silent',
      FOLIO_SECRET: 'recovery-secret-0123456789',
      FOLIO_MODEL: 'openai-compatible/test-model',
      OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl,
      GITHUB_TOKEN: TOKEN,
      GITHUB_API_URL: `${host.origin}/api/v3`,
      FOLIO_LEASE: '1500ms',
      FOLIO_HEARTBEAT: '300ms',
      FOLIO_POLL: '200ms',
      FOLIO_WORKERS: '1',
    };
    const url = host.createRepo('acme/recover', { 'README.md': '# Docs\n', 'docs/index.md': '# Home\n' });
    const config = loadConfig(env);
    const store = await openStore(config);
    const project = await new ProjectsService(store.db, config).create({ name: 'Docs', repositoryUrl: url, codeHost: 'github' });
    const { key } = await new ApiKeyStore(store.db).create({ projectId: project.id, scope: 'write' });
    await store.close();
    const base = `http://127.0.0.1:${port}`;

    const first = serve(env);
    children.push(first);
    await waitReady(base);
    llm.setResponder(
      sequence([
        toolCall('write_file', { path: 'docs/recover.md', content: '# Recover\n' }),
        toolCall('finish', { title: 'Add recover page', summary: 'Added the page.' }),
      ]),
    );
    host.github.hangAfterCreate = true;
    const opened = host.github.nextCreate();
    const res = await fetch(`${base}/v2/agent/${project.id}/job`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ prompt: 'Add a recover page' }),
    });
    expect(res.status).toBe(201);
    const jobId = ((await res.json()) as { id: string }).id;
    await opened;
    // The PR exists, but the run never learned its link: kill the process right here.
    first.kill('SIGKILL');
    await new Promise((r) => first.once('exit', r));
    host.github.hangAfterCreate = false;

    // The resumed run starts from the pushed branch; the model has nothing more to do.
    llm.setResponder(sequence([toolCall('finish', { title: 'Add recover page', summary: 'The page is already on the branch.' })]));
    const second = serve(env);
    children.push(second);
    await waitReady(base);
    const deadline = Date.now() + 30_000;
    let job: { status: string; prLink: string | null; error: unknown; source: { ref: string } };
    for (;;) {
      const r = await fetch(`${base}/v2/agent/${project.id}/job/${jobId}`, { headers: { authorization: `Bearer ${key}` } });
      job = (await r.json()) as typeof job;
      if (job.status !== 'active' || Date.now() > deadline) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    second.kill('SIGTERM');
    await new Promise((r) => second.once('exit', r));
    expect(job.error).toBeNull();
    expect(job.status).toBe('completed');
    expect(host.github.pulls.filter((p) => p.repo === 'recover')).toHaveLength(1);
    expect(job.prLink).toBe(`${host.origin}/acme/recover/pull/1`);
    expect(host.log('acme/recover', job.source.ref)).toEqual(['Add recover page', 'Initial docs']);
    expect(host.github.invalid()).toEqual([]);
  });
});
