// Times of the Common Log Format (`10/Oct/2000:13:55:36 -0700`), read with the minute cached:
// consecutive log lines share it and only the seconds differ.
import type { CodeUnits } from './code-units.ts';

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };

/** `10/Oct/2000:13:55:36 -0700` → ms. */
export function parseClfTime(s: string): number | null {
  const m = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?: ([+-])(\d{2})(\d{2}))?$/.exec(s);
  if (!m) return null;
  const mon = MONTHS[m[2]];
  if (mon === undefined) return null;
  const off = m[7] ? (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) : 0;
  return Date.UTC(Number(m[3]), mon, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - off * 60_000;
}

/** Length of `dd/Mon/yyyy:hh:mm:ss ±hhmm`: the minute is [0, 17), the seconds [18, 20), the zone [20, 26). */
const FULL = 26;

/**
 * The CLF time of `units.codes[s, e)` in ms, with the minute cached: most lines cost a comparison of 24
 * code units with the cached minute. Anything not in the usual 26-unit shape is parsed in full.
 */
export class ClfClock {
  private readonly minute = new Uint16Array(FULL);
  private haveMinute = false;
  private minuteMs: number | null = null;

  at(units: CodeUnits, s: number, e: number): number | null {
    if (e - s !== FULL || units.codes[s + 17] !== 58 || units.codes[s + 20] !== 32) return parseClfTime(units.text(s, e));
    const tens = units.codes[s + 18] - 48;
    const ones = units.codes[s + 19] - 48;
    if (tens < 0 || tens > 5 || ones < 0 || ones > 9) return null;
    if (!this.sameMinute(units, s)) {
      for (let i = 0; i < FULL; i++) this.minute[i] = units.codes[s + i];
      this.haveMinute = true;
      this.minuteMs = parseClfTime(units.text(s, s + 17) + ':00' + units.text(s + 20, e));
    }
    return this.minuteMs === null ? null : this.minuteMs + (tens * 10 + ones) * 1000;
  }

  private sameMinute(units: CodeUnits, s: number): boolean {
    if (!this.haveMinute) return false;
    for (let i = 0; i < FULL; i++) if (i !== 18 && i !== 19 && this.minute[i] !== units.codes[s + i]) return false;
    return true;
  }
}
