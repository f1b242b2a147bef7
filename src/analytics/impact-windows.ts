// The before and after of a change, one code for every place that measures one: a merged job's
// impact (equal windows either side of the merge) and a started suggestion's outcome (its traffic,
// then the time since its merge or completion). "After" is compared only once it covers a day
// (MIN_AFTER_MS): "0 in 0 days" is no outcome. A merged job's windows are whole UTC days, the day of
// the merge left out (equalWindows). Lengths are told in days with one decimal.
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
  /** The length used (ms): `days` whole days unless clipped. */
  length: number;
  /** Why the windows are shorter than asked, in a sentence; null when they are not. */
  clipped: string | null;
}

/** The start of the UTC day `t` is in. */
const dayStart = (t: number) => Math.floor(t / DAY_MS) * DAY_MS;

/** "1 whole day", "14 whole days". */
const wholeDays = (n: number) => (n === 1 ? '1 whole day' : `${n} whole days`);

/** "1 day", "2.5 days": a time in days with one decimal. */
const daysOf = (ms: number) => (inDays(ms) === 1 ? '1 day' : `${inDays(ms)} days`);

/** The whole days (days since the epoch) between the two windows: the merge's, in neither. */
export function daysBetween({ before, after }: Pick<EqualWindows, 'before' | 'after'>): number[] {
  return Array.from({ length: (after.from - before.to) / DAY_MS }, (_, i) => before.to / DAY_MS + i);
}

/**
 * When a merge at `at` can first be measured: once the first whole UTC day after the merge's day is
 * over (24 to 48 hours after the merge).
 */
export const firstMeasurable = (at: number) => dayStart(at) + 2 * DAY_MS;

/** Whole UTC days after the merge's day that are over by `now` (0 before firstMeasurable). */
const daysOverSince = (at: number, now: number) => Math.max(0, Math.floor((dayStart(now) - dayStart(at) - DAY_MS) / DAY_MS));

/**
 * Where the before-window would open unclipped by the data: `days` whole days (fewer when fewer are
 * over since the merge's day) before the merge's day. Traffic recorded at or before it leaves the
 * windows unclipped, so an engine need not find the first event when it finds one there.
 */
export const beforeOpens = (at: number, days: number, now: number) => dayStart(at) - Math.min(days, daysOverSince(at, now)) * DAY_MS;

/**
 * Equal windows of whole UTC days either side of the day of a merge at `at`: the merge's own day is
 * in neither (part of it came before the merge, part after), nor is today (not over). `days` long,
 * clipped to the whole days over since the merge's day and to the whole days of recorded traffic
 * before it (`firstEvent`: the earliest stored event, null when none). Whole days are what the day
 * tables hold, so every count is read from them. Null until firstMeasurable.
 */
export function equalWindows(at: number, days: number, now: number, firstEvent: number | null): EqualWindows | null {
  const mergeDay = dayStart(at);
  const over = daysOverSince(at, now);
  if (over < 1) return null;
  let n = days;
  let clipped: string | null = null;
  if (over < n) {
    n = over;
    clipped = `The pull request was merged ${daysOf(now - at)} ago: both windows are ${wholeDays(n)} instead of ${days}.`;
  }
  // Data that starts after the before-window opens would make "before" look emptier than it was:
  // only the whole days of recorded traffic count.
  if (firstEvent !== null && firstEvent < at) {
    const recorded = Math.max(0, (mergeDay - Math.ceil(firstEvent / DAY_MS) * DAY_MS) / DAY_MS);
    if (recorded < n) {
      n = recorded;
      clipped = `The recorded traffic starts ${daysOf(at - firstEvent)} before the merge: both windows are ${wholeDays(n)} instead of ${days}.`;
    }
  }
  const length = n * DAY_MS;
  return { before: { from: mergeDay - length, to: mergeDay }, after: { from: mergeDay + DAY_MS, to: mergeDay + DAY_MS + length }, length, clipped };
}
