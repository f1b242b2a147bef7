// UTC days as the analytics API reads them (YYYY-MM-DD), for the pages' date ranges.

export const DAY = 86_400_000;

/** The UTC day of a time, YYYY-MM-DD. */
export const isoDay = (at: Date | number) => new Date(at).toISOString().slice(0, 10);

export const today = () => isoDay(Date.now());

/** The day `n` days after `day` (before, for negative `n`). */
export const addDays = (day: string, n: number) => isoDay(Date.parse(day) + n * DAY);

/** The last `days` days up to today, as the API's range (dateTo exclusive). */
export function lastDays(days: number): { dateFrom: string; dateTo: string } {
  return { dateFrom: addDays(today(), -(days - 1)), dateTo: addDays(today(), 1) };
}
