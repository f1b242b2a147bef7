// The dashboard's one date format: ISO 8601 in UTC — days as YYYY-MM-DD (as the analytics API reads
// them), times as YYYY-MM-DD HH:MM — in chart axes, tables and addresses alike (a date picker's value
// is YYYY-MM-DD too; it shows it in the browser's format).

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

/** A range of whole days, both included, as the Analytics and Insights pages keep it in their address. */
export interface DayRange {
  from: string;
  to: string;
  /** Set when the range is "the last `days` days up to today" (`?days=N`), so a link keeps following today. */
  days: number | null;
}

/**
 * The range an address asks for: `?from=YYYY-MM-DD&to=YYYY-MM-DD` (both included), `?days=N` (the last
 * N days up to today), or the last `defaultDays`. Dates are returned as written: the page says if one is not a day.
 */
export function rangeFromQuery(query: URLSearchParams, defaultDays: number): DayRange {
  const from = query.get('from');
  const to = query.get('to');
  if (from !== null || to !== null) return { from: from ?? '', to: to ?? today(), days: null };
  const n = Number(query.get('days'));
  const days = Number.isInteger(n) && n >= 1 && n <= 3660 ? n : defaultDays;
  return { from: addDays(today(), -(days - 1)), to: today(), days };
}

/** Why the range cannot be asked for, or null. */
export function rangeProblem({ from, to }: DayRange): string | null {
  if (!isIsoDay(from) || !isIsoDay(to)) return 'Pick both dates (YYYY-MM-DD).';
  return from > to ? 'The start date is after the end date.' : null;
}

/** The API's form of a range: dateTo is exclusive. */
export const apiRange = ({ from, to }: DayRange) => ({ dateFrom: from, dateTo: addDays(to, 1) });
