// Shared setup for end-to-end agent tests: a code host (git smart HTTP + GitHub/GitLab APIs), a fake
// Chat Completions server and a real Folio server with the real agent handler.
import { expect } from 'vitest';
import { startCodeHost, type CodeHostServer } from '../fixtures/git-server.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../fixtures/fake-openai.ts';
import { startTestServer, type TestServer } from '../helpers/server.ts';

export const TOKEN = 'ghp_e2e_secret_token_0123456789';

export interface E2E {
  host: CodeHostServer;
  llm: FakeOpenAI;
  server: TestServer;
  close(): Promise<void>;
}

export async function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  const host = await startCodeHost({ token: TOKEN });
  const llm = await startFakeOpenAI();
  const server = await startTestServer({
    env: {
      FOLIO_MODEL: 'openai-compatible/test-model',
      OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl,
      OPENAI_COMPATIBLE_API_KEY: 'sk-compat-secret-key',
      GITHUB_TOKEN: TOKEN,
      GITLAB_TOKEN: TOKEN,
      FOLIO_POLL: '100',
      FOLIO_WORKERS: '2',
      ...env,
    },
  });
  return {
    host,
    llm,
    server,
    async close() {
      await server.close();
      await llm.close();
      await host.close();
    },
  };
}

export async function waitForJob(
  server: TestServer,
  projectId: string,
  jobId: string,
  key: string,
  until: (job: { status: string }) => boolean = (j) => j.status !== 'active',
  timeoutMs = 30_000,
): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await server.api('GET', `/v2/agent/${projectId}/job/${jobId}`, { key });
    expect(res.status).toBe(200);
    if (until(res.body)) return res.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} still ${res.body.status}: ${JSON.stringify(res.body)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

export async function jobEvents(server: TestServer, projectId: string, jobId: string, key: string): Promise<{ type: string; data: any }[]> {
  const out: { type: string; data: any }[] = [];
  let after = 0;
  for (;;) {
    const res = await server.api('GET', `/v2/agent/${projectId}/job/${jobId}/events?after=${after}`, { key });
    expect(res.status).toBe(200);
    out.push(...res.body.events);
    if (!res.body.hasMore) return out;
    after = res.body.nextAfter;
  }
}
