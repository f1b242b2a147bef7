// Generated traffic as the engine's stored events (what the pipeline hands the engine), for the
// benchmarks that write through an engine directly.
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { SOURCE, type StoredEvent } from '../../src/analytics/engine.ts';
import { CLASS_CODE } from '../../src/analytics/traffic-class.ts';
import { REFERRER_HOSTS, USER_AGENTS, type Traffic } from './generate.ts';

const CLASSES = (() => {
  const rules = ClassificationRules.load();
  return USER_AGENTS.map((ua) => rules.classifyUserAgent(ua));
})();

/** Visitor ids: a 63-bit mix of the identity (what the keyed hash gives), so ids look random. */
export const visitorId = (v: number) => (BigInt(Math.imul(v, 0x9e3779b1) >>> 0) << 31n) ^ BigInt(v);

/** Events `order[from..to)` (or from..to in generation order) as stored events; one view in 50 is a not-found view. */
export function storedEvents(t: Traffic, projectId: string, from: number, to: number, order?: Uint32Array): StoredEvent[] {
  const batch: StoredEvent[] = [];
  for (let j = from; j < Math.min(t.n, to); j++) {
    const k = order ? order[j] : j;
    const c = CLASSES[t.ua[k]];
    batch.push({
      projectId,
      ts: t.ts[k],
      path: t.paths[t.path[k]],
      visitor: visitorId(t.visitor[k]),
      cls: CLASS_CODE[c.class],
      agent: c.agent,
      // Hosts, as the pipeline stores them; the site's own host as rows stored before ingest dropped it.
      referrer: t.referrer[k] < 0 ? null : REFERRER_HOSTS[t.referrer[k]],
      source: SOURCE.api,
      importKey: null,
      notFound: k % 50 === 0,
      group: 0,
    });
  }
  return batch;
}
