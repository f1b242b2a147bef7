// The before/after windows of a merged job (analytics/impact-windows.ts): whole UTC days either side
// of the merge's day, that day and today in neither; when a merge first becomes measurable; clipping
// to the days since the merge and to the whole days of recorded traffic, down to none.
import { describe, expect, it } from 'vitest';
import { beforeOpens, equalWindows, firstMeasurable } from '../../src/analytics/impact-windows.ts';

const DAY = 86_400_000;
const HOUR = 3_600_000;
const D = Date.UTC(2026, 10, 10); // the merge's day
const window = (from: number, to: number) => ({ from, to });

describe('equal windows of whole days around a merge', () => {
  it('leaves the merge\'s day and today out, and is measurable once the first whole day after the merge\'s day is over', () => {
    for (const at of [D, D + 13 * HOUR, D + DAY - 1]) {
      expect(firstMeasurable(at)).toBe(D + 2 * DAY);
      expect(equalWindows(at, 14, D + 2 * DAY - 1, null)).toBeNull();
      // Ten whole days after the merge's day are over (today, the 12th day after, is not): not clipped.
      const w = equalWindows(at, 3, D + 11 * DAY + 5 * HOUR, null);
      expect(w).toEqual({ before: window(D - 3 * DAY, D), after: window(D + DAY, D + 4 * DAY), length: 3 * DAY, clipped: null });
    }
    const first = equalWindows(D + 23 * HOUR, 14, D + 2 * DAY, null);
    expect(first).toMatchObject({ before: window(D - DAY, D), after: window(D + DAY, D + 2 * DAY), length: DAY });
    expect(first?.clipped).toBe('The pull request was merged 1 day ago: both windows are 1 whole day instead of 14.');
  });

  it('clips to the whole days of recorded traffic before the merge, down to none', () => {
    const at = D + 12 * HOUR;
    const now = D + 30 * DAY;
    // Traffic from the start of a day counts that day; from inside a day, the next.
    expect(equalWindows(at, 14, now, D - 5 * DAY)).toMatchObject({ length: 5 * DAY, before: window(D - 5 * DAY, D) });
    const inside = equalWindows(at, 14, now, D - 5 * DAY + 1);
    expect(inside).toMatchObject({ length: 4 * DAY, before: window(D - 4 * DAY, D), after: window(D + DAY, D + 5 * DAY) });
    expect(inside?.clipped).toMatch(/^The recorded traffic starts 5\.5 days before the merge: both windows are 4 whole days instead of 14\.$/);
    // Traffic that starts on the merge's day: no whole day before it, nothing to compare.
    const none = equalWindows(at, 14, now, D + HOUR);
    expect(none).toMatchObject({ length: 0, before: window(D, D), after: window(D + DAY, D + DAY) });
    expect(none?.clipped).toMatch(/both windows are 0 whole days instead of 14/);
    // Traffic that starts after the merge leaves the windows as asked (an empty "before" is the answer).
    expect(equalWindows(at, 14, now, at + HOUR)).toMatchObject({ length: 14 * DAY, clipped: null });
  });

  it('tells where the before-window would open, for the engines\' probe of the first event', () => {
    expect(beforeOpens(D + 12 * HOUR, 14, D + 30 * DAY)).toBe(D - 14 * DAY);
    // Fewer whole days over since the merge's day: the windows, and so the probe, are shorter.
    expect(beforeOpens(D + 12 * HOUR, 14, D + 4 * DAY + HOUR)).toBe(D - 3 * DAY);
  });
});
