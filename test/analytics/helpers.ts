// Shared helpers of the analytics tests: a seeded PRNG, an independent reference computed with plain
// Sets, and validators of the upstream contract.
import { StringUnits } from '../../src/analytics/log-lines/code-units.ts';
import { CombinedReader } from '../../src/analytics/log-lines/combined-format.ts';
import { contentKeyInto } from '../../src/analytics/log-lines/content-key.ts';
import { emptyRecord, type LogRecord } from '../../src/analytics/log-lines/log-record.ts';
import { CLICKHOUSE_TEST_URL, isScale } from '../helpers/backend.ts';
import type { AnalyticsEngine } from '../../src/analytics/engine.ts';
import type { PagedQuery } from '../../src/contracts/analytics.ts';
import type { ReportParams } from '../../src/analytics/reports/report.ts';
import { views } from '../../src/analytics/reports/views.ts';
import { visitors } from '../../src/analytics/reports/visitors.ts';

/** True on the scale leg with ClickHouse: the analytics engine of every test server is ClickHouse, not DuckDB. */
export const ON_CLICKHOUSE = isScale && CLICKHOUSE_TEST_URL !== '';

export { upstreamValidator } from '../helpers/upstream.ts';

export { rng } from '../../bench/analytics/generate.ts';

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** An instant as an access log's time (CLF, UTC): `02/Jun/2025:10:00:00 +0000`. */
export function clf(ms: number): string {
  const d = new Date(ms);
  const p = (n: number) => String(n).padStart(2, '0');
  return `${p(d.getUTCDate())}/${MONTHS[d.getUTCMonth()]}/${d.getUTCFullYear()}:${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())} +0000`;
}

/** One combined line through the reader the imports use (CombinedReader over a string's units), or null. */
export function readCombined(line: string): LogRecord | null {
  const units = new StringUnits();
  units.set(line);
  const out = emptyRecord();
  return new CombinedReader().read(units, 0, line.length, out) ? out : null;
}

/** A line's content key as 16 hex digits, from the function the imports key lines with. */
export function contentKeyHex(line: string): string {
  const key = new Int32Array(2);
  contentKeyInto(line, key);
  return [key[0], key[1]].map((n) => (n >>> 0).toString(16).padStart(8, '0')).join('');
}

export interface RefEvent {
  ts: number;
  /** normalised path */
  path: string;
  visitor: string;
  cls: 'human' | 'ai' | 'none';
}

export const utf8Compare = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/** The visitors or the views report of an engine (the two `reference` computes). */
export function runPathReport(engine: AnalyticsEngine, mode: 'visitors' | 'views', params: ReportParams<typeof PagedQuery>) {
  return mode === 'visitors' ? engine.run(visitors, params) : engine.run(views, params);
}

/** Exact reference of the visitors (or views) query with plain Sets and arrays. */
export function reference(events: RefEvent[], from: number | null, to: number | null, mode: 'visitors' | 'views' = 'visitors') {
  const inRange = events.filter((e) => e.cls !== 'none' && (from === null || e.ts >= from) && (to === null || e.ts < to));
  const per = new Map<string, { h: Set<string>; a: Set<string>; t: Set<string>; vh: number; va: number }>();
  const th = new Set<string>();
  const ta = new Set<string>();
  const tt = new Set<string>();
  let vh = 0;
  let va = 0;
  for (const e of inRange) {
    let p = per.get(e.path);
    if (!p) per.set(e.path, (p = { h: new Set(), a: new Set(), t: new Set(), vh: 0, va: 0 }));
    (e.cls === 'human' ? p.h : p.a).add(e.visitor);
    (e.cls === 'human' ? th : ta).add(e.visitor);
    p.t.add(e.visitor);
    tt.add(e.visitor);
    if (e.cls === 'human') {
      p.vh++;
      vh++;
    } else {
      p.va++;
      va++;
    }
  }
  const rows = [...per.entries()].map(([path, p]) =>
    mode === 'visitors' ? { path, human: p.h.size, ai: p.a.size, total: p.t.size } : { path, human: p.vh, ai: p.va, total: p.vh + p.va },
  );
  rows.sort((x, y) => y.total - x.total || utf8Compare(x.path, y.path));
  const totals = mode === 'visitors' ? { human: th.size, ai: ta.size, total: tt.size } : { human: vh, ai: va, total: vh + va };
  return { totals, rows };
}
