// Shared setup for the agent benchmarks: a local code host, a scripted Chat Completions server and an
// in-process Folio server with the real agent handler.
import { startCodeHost, type CodeHostServer } from '../test/fixtures/git-server.ts';
import { startFakeOpenAI, type ChatRequest, type FakeOpenAI, type FakeReply } from '../test/fixtures/fake-openai.ts';
import { startTestServer, type TestServer } from '../test/helpers/server.ts';

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

export interface Bench {
  host: CodeHostServer;
  llm: FakeOpenAI;
  server: TestServer;
  close(): Promise<void>;
}

export async function startBench(env: Record<string, string> = {}): Promise<Bench> {
  const host = await startCodeHost({ token: TOKEN });
  const llm = await startFakeOpenAI(writeThenFinish);
  const server = await startTestServer({
    env: {
      FOLIO_MODEL: 'openai-compatible/bench-model',
      OPENAI_COMPATIBLE_BASE_URL: llm.baseUrl,
      GITHUB_TOKEN: TOKEN,
      FOLIO_POLL: '100',
      FOLIO_RATE_LIMIT_CREATE: '0',
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
