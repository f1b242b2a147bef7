// Date bounds of analytics queries: `dateFrom` inclusive, `dateTo` exclusive.
// `YYYY-MM-DD` is 00:00 UTC; full ISO 8601 with an offset is honoured; no offset means UTC.
import { CodedError } from '../errors.ts';

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;

const DATE_ONLY = /^(\d{4})-(\d{2})-(\d{2})$/;
const DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?([Zz]|[+-]\d{2}(?::?\d{2})?)?$/;

function validDay(y: number, m: number, d: number): boolean {
  if (m < 1 || m > 12 || d < 1) return false;
  return d <= new Date(Date.UTC(y, m, 0)).getUTCDate();
}

/** Milliseconds since the epoch, or null when `raw` is not ISO 8601 / YYYY-MM-DD or names an impossible date. */
export function parseInstant(raw: string): number | null {
  let m = DATE_ONLY.exec(raw);
  if (m) {
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    return validDay(y, mo, d) ? Date.UTC(y, mo - 1, d) : null;
  }
  m = DATE_TIME.exec(raw);
  if (!m) return null;
  const [y, mo, d, h, mi] = [Number(m[1]), Number(m[2]), Number(m[3]), Number(m[4]), Number(m[5])];
  const s = m[6] === undefined ? 0 : Number(m[6]);
  if (!validDay(y, mo, d) || h > 24 || mi > 59 || s > 59 || (h === 24 && (mi > 0 || s > 0 || Number(m[7] ?? 0) > 0))) return null;
  const ms = m[7] === undefined ? 0 : Math.floor(Number(`0.${m[7]}`) * 1000);
  let offsetMin = 0;
  const tz = m[8];
  if (tz && tz !== 'Z' && tz !== 'z') {
    const t = /^([+-])(\d{2}):?(\d{2})?$/.exec(tz);
    if (!t) return null;
    const oh = Number(t[2]);
    const om = t[3] === undefined ? 0 : Number(t[3]);
    if (oh > 23 || om > 59) return null;
    offsetMin = (t[1] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const at = Date.UTC(y, mo - 1, d, h, mi, s, ms) - offsetMin * 60_000;
  return Number.isFinite(at) ? at : null;
}

export interface Range {
  /** Inclusive lower bound in ms, or null for unbounded. */
  from: number | null;
  /** Exclusive upper bound in ms, or null for unbounded. */
  to: number | null;
}

export function parseRange(q: { dateFrom?: string; dateTo?: string }): Range {
  const bound = (name: 'dateFrom' | 'dateTo'): number | null => {
    const raw = q[name];
    if (raw === undefined) return null;
    const at = parseInstant(raw);
    if (at === null) {
      throw new CodedError('invalid_date', `${name} "${raw}" is not a date: use YYYY-MM-DD or ISO 8601 such as 2025-01-31T10:00:00+02:00.`, {
        details: [{ message: `${name} is not an ISO 8601 date`, path: `/querystring/${name}` }],
      });
    }
    return at;
  };
  const from = bound('dateFrom');
  const to = bound('dateTo');
  if (from !== null && to !== null && from > to) {
    throw new CodedError('invalid_date_range', 'dateFrom must not be after dateTo (dateFrom is inclusive, dateTo exclusive).', {
      details: [{ message: 'dateFrom is after dateTo', path: '/querystring/dateFrom' }],
    });
  }
  return { from, to };
}

/** A range split for the engines: whole days from the day tables, partial days from raw events. */
export interface DaySplit {
  /** Whole UTC days [d1, d2) read from the day tables; null bounds are open. `none` when no whole day is in range. */
  days: { d1: number | null; d2: number | null } | 'none';
  /** Partial-day millisecond ranges [from, to) read from raw events. */
  edges: [number, number][];
}

export function splitRange(range: Range): DaySplit {
  const { from, to } = range;
  const aligned = (x: number | null) => x === null || x % DAY_MS === 0;
  if (aligned(from) && aligned(to)) {
    return { days: { d1: from === null ? null : from / DAY_MS, d2: to === null ? null : to / DAY_MS }, edges: [] };
  }
  const fd1 = from === null ? null : Math.ceil(from / DAY_MS);
  const fd2 = to === null ? null : Math.floor(to / DAY_MS);
  if (fd1 !== null && fd2 !== null && fd1 >= fd2) return { days: 'none', edges: [[from!, to!]] };
  const edges: [number, number][] = [];
  if (from !== null && from % DAY_MS !== 0) edges.push([from, fd1! * DAY_MS]);
  if (to !== null && to % DAY_MS !== 0) edges.push([fd2! * DAY_MS, to]);
  return { days: { d1: fd1, d2: fd2 }, edges };
}
