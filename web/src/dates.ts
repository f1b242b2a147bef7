// The dashboard's one date format: ISO 8601 in UTC — days as YYYY-MM-DD (as the analytics API reads
// them), times as YYYY-MM-DD HH:MM — in inputs, chart axes and tables alike.

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

/** A time as `YYYY-MM-DD HH:MM` (UTC); `fallback` when there is none. */
export function isoMinute(iso: string | null | undefined, fallback = '—'): string {
  if (!iso) return fallback;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? fallback : `${d.toISOString().slice(0, 10)} ${d.toISOString().slice(11, 16)}`;
}

/** Whether `text` is a real day written YYYY-MM-DD. */
export const isIsoDay = (text: string) => /^\d{4}-\d{2}-\d{2}$/.test(text) && !Number.isNaN(Date.parse(text)) && isoDay(Date.parse(text)) === text;
