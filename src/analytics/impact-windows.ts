// The before and after of a change, one code for every place that measures one: a merged job's
// impact (equal windows either side of the merge) and a started suggestion's outcome (its traffic,
// then the time since its merge or completion). "After" is compared only once it covers a day
// (MIN_AFTER_MS): "0 in 0 days" is no outcome. Lengths are told in days with one decimal.
import { DAY_MS } from './dates.ts';

/** The shortest "after" that is compared with "before": a few hours without a visitor is no outcome yet. */
export const MIN_AFTER_MS = DAY_MS;

/** Windows asked for are `days` long: 1 to MAX_DAYS, DEFAULT_DAYS unless asked. */
export const DEFAULT_DAYS = 14;
export const MAX_DAYS = 90;

/** A length in days with one decimal, as the answers give it. */
export const inDays = (ms: number) => Math.round((Math.max(0, ms) / DAY_MS) * 10) / 10;

export interface Window {
  from: number;
  /** Exclusive. */
  to: number;
}

/** The time since `since` up to `now`, and whether it is long enough to compare (MIN_AFTER_MS). */
export function afterSince(since: number, now: number): Window & { ready: boolean } {
  return { from: since, to: now, ready: now - since >= MIN_AFTER_MS };
}

export interface EqualWindows {
  before: Window;
  after: Window;
  /** The length used (ms): `days` unless clipped. */
  length: number;
  /** Why the windows are shorter than asked, in a sentence; null when they are not. */
  clipped: string | null;
}

/**
 * Equal windows before and after `at` (a merge), `days` long, clipped to the time since `at` and to
 * the first event there is (`firstEvent`: the earliest stored event, null when none). Null while the
 * time since `at` is shorter than MIN_AFTER_MS.
 */
export function equalWindows(at: number, days: number, now: number, firstEvent: number | null): EqualWindows | null {
  const asked = days * DAY_MS;
  const since = now - at;
  if (since < MIN_AFTER_MS) return null;
  let length = asked;
  let clipped: string | null = null;
  if (since < length) {
    length = since;
    clipped = `The pull request was merged ${inDays(since)} days ago: both windows are ${inDays(length)} days instead of ${days}.`;
  }
  // Data that starts after the before-window opens would make "before" look emptier than it was.
  if (firstEvent !== null && firstEvent > at - length && firstEvent < at) {
    length = at - firstEvent;
    clipped = `The recorded traffic starts ${inDays(at - firstEvent)} days before the merge: both windows are ${inDays(length)} days instead of ${days}.`;
  }
  return { before: { from: at - length, to: at }, after: { from: at, to: at + length }, length, clipped };
}
