// Shared setup for the agent benchmarks: a local code host, a scripted Chat Completions server and an
// in-process Folio server with the real agent handler.
import { startAgentStack, type AgentStack } from '../test/fixtures/agent-stack.ts';
import type { ChatRequest, FakeReply } from '../test/fixtures/fake-openai.ts';

export const TOKEN = 'ghp_bench_token_0123456789';

/** Each job writes one page named after its prompt, then finishes: stateless, so jobs can run concurrently. */
export function writeThenFinish(req: ChatRequest): FakeReply {
  const first = req.messages.find((m) => m.role === 'user');
  const n = /page (\d+)/.exec(String(first?.content ?? ''))?.[1] ?? '0';
  const wrote = req.messages.some((m) => m.role === 'tool');
  return wrote
    ? { toolCalls: [{ name: 'finish', args: { title: `Add page ${n}`, summary: `Added page ${n}.` } }] }
    : { toolCalls: [{ name: 'write_file', args: { path: `docs/page-${n}.md`, content: `# Page ${n}\n` } }] };
}

export type Bench = AgentStack;

export function startBench(env: Record<string, string> = {}): Promise<Bench> {
  return startAgentStack({ token: TOKEN, model: 'bench-model', responder: writeThenFinish, env: { FOLIO_RATE_LIMIT_CREATE: '0', ...env } });
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const i = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[i];
}

export async function waitDone(b: Bench, projectId: string, jobId: string, key: string, timeoutMs = 120_000): Promise<any> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const r = await b.server.api('GET', `/v2/agent/${projectId}/job/${jobId}`, { key });
    if (r.body.status !== 'active') return r.body;
    if (Date.now() > deadline) throw new Error(`job ${jobId} did not finish`);
    await new Promise((res) => setTimeout(res, 20));
  }
}
