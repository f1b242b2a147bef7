// Shared setup for end-to-end agent tests: a code host (git smart HTTP + GitHub/GitLab APIs), a fake
// Chat Completions server and a real Folio server with the real agent handler.
import { expect } from 'vitest';
import { startAgentStack, type AgentStack } from '../fixtures/agent-stack.ts';
import type { TestServer } from '../helpers/server.ts';

export const TOKEN = 'ghp_e2e_secret_token_0123456789';

export type E2E = AgentStack;

export function startE2E(env: Record<string, string> = {}): Promise<E2E> {
  return startAgentStack({
    token: TOKEN,
    model: 'test-model',
    env: { OPENAI_COMPATIBLE_API_KEY: 'sk-compat-secret-key', GITLAB_TOKEN: TOKEN, FOLIO_WORKERS: '2', ...env },
  });
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
