// The visitors-query comparison both engines' benchmarks run: Folio's answer must equal the plain
// distinct count's, then Folio, (a) the plain query and (b) the GROUP BY floor are timed alternately.
// Also the round-robin the other reports are timed in.
import type { PagedCounts } from '../../src/analytics/reports/path-page.ts';
import { isDeepStrictEqual } from 'node:util';

export const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

export const timed = async <T>(fn: () => Promise<T>): Promise<[number, T]> => {
  const s = performance.now();
  const r = await fn();
  return [performance.now() - s, r];
};

type Rows = Record<string, unknown>[];

/**
 * Times each function in turn, `runs` rounds (round-robin, so every ratio is of times taken under the
 * same load); a function named `xNaive` must answer as `x` does (deep equality). Each report (not
 * naive, not `baseline`) is timed right after a run of `baseline`: `ratio[x]` holds x's time over
 * that run's, per round, so a burst of load on a shared machine (seconds long) touches both sides
 * of a ratio, where the medians of separate times can take it on one side only.
 */
export async function roundRobin(
  timings: Record<string, () => Promise<unknown>>,
  runs: number,
  baseline = 'visitors',
): Promise<{ t: Record<string, number[]>; ratio: Record<string, number[]>; identical: boolean }> {
  const t: Record<string, number[]> = Object.fromEntries(Object.keys(timings).map((k) => [k, []]));
  const ratio: Record<string, number[]> = {};
  const answers: Record<string, unknown> = {};
  let identical = true;
  for (let r = 0; r < runs; r++) {
    for (const [name, fn] of Object.entries(timings)) {
      const paired = name !== baseline && !name.endsWith('Naive') && baseline in timings;
      const [base] = paired ? await timed(timings[baseline]) : [0];
      const [ms, answer] = await timed(fn);
      t[name].push(ms);
      if (paired) (ratio[name] ??= []).push(ms / base);
      if (name.endsWith('Naive')) identical &&= isDeepStrictEqual(answer, answers[name.replace('Naive', '')]);
      else answers[name] = answer;
    }
  }
  return { t, ratio, identical };
}

export interface Comparison {
  same: boolean;
  totals: PagedCounts['totals'];
  times: { ours: number[]; a: number[]; b: number[] };
  /** Medians in ms. */
  m: { ours: number; a: number; b: number };
}

/**
 * `plain` answers [per-path rows (path, h, a, t), site totals (h, a, t)] with distinct counts;
 * `floor` is the GROUP BY path row count.
 */
export async function compareVisitors(ours: () => Promise<PagedCounts>, plain: () => Promise<[Rows, Rows]>, floor: () => Promise<unknown>, runs: number): Promise<Comparison> {
  const mine = await ours();
  const [rowsA, totA] = await plain();
  const expected = { human: Number(totA[0].h), ai: Number(totA[0].a), total: Number(totA[0].t) };
  const expectedRows = rowsA.map((r) => ({ path: String(r.path), human: Number(r.h), ai: Number(r.a), total: Number(r.t) }));
  const same = JSON.stringify(mine.totals) === JSON.stringify(expected) && JSON.stringify(mine.rows) === JSON.stringify(expectedRows);

  const times = { ours: [] as number[], a: [] as number[], b: [] as number[] };
  await floor();
  for (let r = 0; r < runs; r++) {
    times.ours.push((await timed(ours))[0]);
    times.a.push((await timed(plain))[0]);
    times.b.push((await timed(floor))[0]);
  }
  return { same, totals: mine.totals, times, m: { ours: median(times.ours), a: median(times.a), b: median(times.b) } };
}
