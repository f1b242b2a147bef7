// Latency from `POST job` to the first model request, p50 and p99 (target p50 under 50 ms).
// Run: node_modules/.bin/node bench/agent-latency.ts [jobs=100]
import { percentile, startBench, waitDone } from './agent-common.ts';

const N = Number(process.argv[2] ?? 100);
const b = await startBench({ FOLIO_WORKERS: '2' });
try {
  const url = b.host.createRepo('bench/latency', {
    'docs.json': '{"navigation": []}\n',
    ...Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`docs/p${i}.mdx`, `---\ntitle: P${i}\n---\n\n# P${i}\n`])),
  });
  const projectId = await b.server.createProject({ repositoryUrl: url, codeHost: 'github' });
  const key = await b.server.createKey(projectId);
  // The model finishes at once without changes, so each job is: claim, fetch, worktree, first request.
  b.llm.setResponder(() => ({ toolCalls: [{ name: 'finish', args: { title: 'No-op', summary: 'Nothing to change.' } }] }));
  const latencies: number[] = [];
  for (let i = 0; i < N + 3; i++) {
    const before = b.llm.requests.length;
    const t0 = performance.now();
    const res = await b.server.api('POST', `/v2/agent/${projectId}/job`, { key, body: { prompt: `Check page ${i}` } });
    if (res.status !== 201) throw new Error(`create failed: ${res.status} ${res.text}`);
    await b.llm.waitForRequests(before + 1);
    const dt = b.llm.arrivals[before] - t0;
    if (i >= 3) latencies.push(dt); // first jobs create the mirror: measured by agent-workspace.ts
    await waitDone(b, projectId, res.body.id, key);
  }
  latencies.sort((x, y) => x - y);
  console.log(`agent latency: POST job -> first model request, ${latencies.length} jobs (warm mirror, 200-page repo over smart HTTP)`);
  console.log(`  p50 ${percentile(latencies, 50).toFixed(1)} ms   p90 ${percentile(latencies, 90).toFixed(1)} ms   p99 ${percentile(latencies, 99).toFixed(1)} ms   max ${latencies.at(-1)!.toFixed(1)} ms`);
} finally {
  await b.close();
}
