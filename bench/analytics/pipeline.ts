// The record function's cost per event, in process: the events API's bodies (1,000 events each,
// IP + user agent, ISO times) are parsed, then run through prepareBatch. Round 1 hashes every new
// identity (a fresh VisitorIds, as a server that just started); later rounds find the ids cached, so
// the difference is the keyed hash. Complements events-api.ts, which measures the whole server.
// Usage: node bench/analytics/pipeline.ts [--events 300000] [--rounds 4]
import { parseArgs } from 'node:util';
import { EVENTS_WIRE, prepareBatch } from '../../src/analytics/pipeline.ts';
import { VisitorIds } from '../../src/analytics/identity.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { generateTraffic, ipOf, timeOrder, USER_AGENTS } from './generate.ts';

const { values } = parseArgs({ options: { events: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '4' } } });
const N = Number(values.events);
const t = generateTraffic({ events: N, days: 30, seed: 1 });
const order = timeOrder(t);
const bodies: string[] = [];
for (let s = 0; s < N; s += 1000) {
  const events = [];
  for (let j = s; j < Math.min(N, s + 1000); j++) {
    const k = order[j];
    events.push({ timestamp: new Date(t.ts[k]).toISOString(), path: t.paths[t.path[k]], userAgent: USER_AGENTS[t.ua[k]], ip: ipOf(t.visitor[k]) });
  }
  bodies.push(JSON.stringify({ events }));
}
const ids = new VisitorIds('bench-secret-0123456789abcdef');
const rules = ClassificationRules.load();
const now = Date.now();
for (let round = 1; round <= Number(values.rounds); round++) {
  let parse = 0;
  let prepare = 0;
  let good = 0;
  for (const body of bodies) {
    const t0 = performance.now();
    const { events } = JSON.parse(body) as { events: unknown[] };
    const t1 = performance.now();
    good += prepareBatch(events, EVENTS_WIRE, 'prj_bench', rules, ids, now).good.length;
    prepare += performance.now() - t1;
    parse += t1 - t0;
  }
  if (good !== N) throw new Error(`${good} of ${N} events accepted`);
  const us = (ms: number) => ((ms * 1000) / N).toFixed(2);
  console.log(`round ${round}${round === 1 ? ' (every identity hashed)' : ' (ids cached)'}: JSON.parse ${us(parse)} µs/event, prepareBatch ${us(prepare)} µs/event`);
}
