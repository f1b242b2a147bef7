// Where a mixed view's extra ingest cost goes, in process: the events API's steps on the same bodies
// as `events-api.ts --mix` (plain, and with the mix or one part of it), each step's CPU time per event
// (process.cpuUsage: all threads, so DuckDB's own count too). The steps: JSON.parse of the bodies; the
// records' checks, classification and identities (prepareBatch, and dropping the site's own
// referrers as ingest does); the DuckDB writes, several bodies per write as the server's group commit
// makes them (~1,930 events per write in events-api.ts with 4 clients); one compaction of everything;
// the store's closing checkpoint. DuckDB checkpoints its write-ahead log whenever it passes 16 MiB, so
// without that last step a round's total would depend on where the threshold happened to fall: a
// side left with 15 MiB of log not checkpointed looked ~400 ms cheaper per 1M events than one whose
// compaction crossed it (docs/benchmarks-analytics.md, issue 34, "a checkpoint at the boundary").
// Rounds alternate plain / mix, each on a fresh store; the extra per step is the median of the pairs.
// No HTTP: the server bench shows the whole, this one tells its steps apart with less noise.
// Usage: node bench/analytics/ingest-mix.ts [--events 300000] [--rounds 5] [--mix-parts all|not-found|referred|none] [--referred-views first|every] [--bodies-per-write 2] [--compact-every N]
//   --compact-every N  also compact whenever N events have been written since the last compaction (the server
//                      compacts on a 10 s timer and when 1M rows wait)
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { VisitorIds } from '../../src/analytics/identity.ts';
import { EVENTS_WIRE, prepareBatch } from '../../src/analytics/pipeline.ts';
import { dropOwnReferrers, ownHostsOf } from '../../src/analytics/own-hosts.ts';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import type { StoredEvent } from '../../src/analytics/engine.ts';
import type { PendingEvent } from '../../src/analytics/writer.ts';
import { generateTraffic } from './generate.ts';
import { bodies, mixParts, referredViews, pairedRatios, randomSessions, SITE } from './mix.ts';
import { median } from './compare.ts';

const { values } = parseArgs({
  options: {
    events: { type: 'string', default: '300000' },
    rounds: { type: 'string', default: '5' },
    'mix-parts': { type: 'string' },
    'referred-views': { type: 'string' },
    'bodies-per-write': { type: 'string', default: '2' },
    'compact-every': { type: 'string', default: '0' },
  },
});
const N = Number(values.events);
const ROUNDS = Number(values.rounds);
const PARTS = mixParts(values['mix-parts']);
const VIEWS = referredViews(values['referred-views']);
const PER_WRITE = Number(values['bodies-per-write']);
const COMPACT_EVERY = Number(values['compact-every']);
const STEPS = ['parse', 'prepare', 'write', 'compact', 'checkpoint'] as const;
type Step = (typeof STEPS)[number];

const traffic = generateTraffic({ events: N, days: 30, seed: 1 });
const order = randomSessions(traffic);
const sides = { plain: bodies(traffic, order), mix: bodies(traffic, order, PARTS, VIEWS) };
const rules = ClassificationRules.load();
const own = ownHostsOf([SITE]);
const cpuMs = () => {
  const c = process.cpuUsage();
  return (c.user + c.system) / 1000;
};

/** One round on a fresh store: CPU µs per event of each step. */
async function round(list: string[]): Promise<Record<Step, number>> {
  const ms: Record<Step, number> = { parse: 0, prepare: 0, write: 0, compact: 0, checkpoint: 0 };
  const step = async <T>(name: Step, fn: () => T | Promise<T>): Promise<T> => {
    const c0 = cpuMs();
    const out = await fn();
    ms[name] += cpuMs() - c0;
    return out;
  };
  const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-ingest-mix-'));
  const engine = await DuckDbEngine.open({ file: path.join(dir, 'analytics.duckdb'), pathHosts: duckdbPathHosts(rules.sources) });
  try {
    const ids = new VisitorIds('bench-secret-0123456789abcdef');
    const now = Date.now();
    let uncompacted = 0;
    for (let b = 0; b < list.length; b += PER_WRITE) {
      const write: PendingEvent[] = [];
      for (const body of list.slice(b, b + PER_WRITE)) {
        const records = await step('parse', () => (JSON.parse(body) as { events: unknown[] }).events);
        await step('prepare', () => {
          const { good } = prepareBatch(records, EVENTS_WIRE, 'prj_bench', rules, ids, now);
          dropOwnReferrers(good, own);
          write.push(...good);
        });
      }
      await step('write', () => {
        // Tagged in place, as the group-commit writer does: no copy per event.
        for (const e of write) (e as StoredEvent).group = 0;
        return engine.write(write as StoredEvent[]);
      });
      uncompacted += write.length;
      if (COMPACT_EVERY > 0 && uncompacted >= COMPACT_EVERY) {
        await step('compact', () => engine.compact());
        uncompacted = 0;
      }
    }
    await step('compact', () => engine.compact());
    // Closing checkpoints what is left of the write-ahead log (and frees the store: a few ms).
    await step('checkpoint', () => engine.close());
  } finally {
    await engine.close();
    rmSync(dir, { recursive: true, force: true });
  }
  return Object.fromEntries(STEPS.map((s) => [s, (ms[s] * 1000) / N])) as Record<Step, number>;
}

const results = { plain: [] as Record<Step, number>[], mix: [] as Record<Step, number>[] };
for (let r = 1; r <= ROUNDS; r++) {
  for (const side of ['plain', 'mix'] as const) {
    const res = await round(sides[side]);
    results[side].push(res);
    console.log(`round ${r}, ${side}: ${STEPS.map((s) => `${s} ${res[s].toFixed(2)}`).join(', ')} µs/event`);
  }
}
const total = (x: Record<Step, number>) => STEPS.reduce((a, s) => a + x[s], 0);
console.log(`\n${N.toLocaleString('en-US')} events, ${PER_WRITE * 1000} per write, ${COMPACT_EVERY > 0 ? `compacted every ${COMPACT_EVERY.toLocaleString('en-US')} events and at the end` : 'compacted at the end'}, mix parts: ${PARTS}, referred views: ${VIEWS}, median of ${ROUNDS} alternating rounds, Node ${process.version}`);
console.log('| step | plain µs/event | mix µs/event | mix − plain (median of pairs) |');
console.log('|---|---:|---:|---:|');
for (const s of [...STEPS, 'total'] as const) {
  const get = (x: Record<Step, number>) => (s === 'total' ? total(x) : x[s]);
  const plain = results.plain.map(get);
  const mix = results.mix.map(get);
  const diffs = plain.map((p, i) => mix[i] - p);
  console.log(`| ${s} | ${median(plain).toFixed(2)} | ${median(mix).toFixed(2)} | ${median(diffs) >= 0 ? '+' : ''}${median(diffs).toFixed(2)} |`);
}
const pairs = pairedRatios(results.plain.map(total), results.mix.map(total));
console.log(`mix / plain CPU per event: ${pairs.median.toFixed(2)}× by the pairs of rounds (${pairs.min.toFixed(2)}–${pairs.max.toFixed(2)})`);
