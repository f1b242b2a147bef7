// Generated traffic written into a new DuckDB engine in chunks of 250,000 stored events (generation
// order: random days, so compaction sees every arrival order), then compacted once. The engine keeps
// the referring hosts per path the analytics service keeps (the built-in lists' AI assistants).
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import type { Traffic } from './generate.ts';
import { storedEvents } from './stored.ts';

export async function loadEngine(file: string, traffic: Traffic, projectId: string): Promise<{ engine: DuckDbEngine; loadS: number; compactS: number }> {
  const engine = await DuckDbEngine.open({ file, pathHosts: duckdbPathHosts(ClassificationRules.load().sources) });
  let t0 = performance.now();
  const CHUNK = 250_000;
  for (let s = 0; s < traffic.n; s += CHUNK) await engine.write(storedEvents(traffic, projectId, s, s + CHUNK));
  const loadS = (performance.now() - t0) / 1000;
  t0 = performance.now();
  await engine.compact();
  return { engine, loadS, compactS: (performance.now() - t0) / 1000 };
}
