// The date range of the Analytics and Insights pages: two date pickers and the quick ranges. The range
// lives in the page's address (router.tsx useRangeQuery), so a reload or a shared link shows the same view.
import type { ReactNode } from 'react';
import type { DayRange } from '../dates.ts';

const PRESETS = [7, 30, 90] as const;

export function RangeFields({ id, range, setDays, setDates, children }: { id: string; range: DayRange; setDays: (days: number) => void; setDates: (from: string, to: string) => void; children?: ReactNode }) {
  return (
    <form className="card range" onSubmit={(e) => e.preventDefault()} aria-label="Date range">
      <div className="field day-field">
        <label htmlFor={`${id}-from`}>From</label>
        <input id={`${id}-from`} type="date" value={range.from} max={range.to || undefined} onChange={(e) => setDates(e.target.value, range.to)} />
      </div>
      <div className="field day-field">
        <label htmlFor={`${id}-to`}>To (inclusive)</label>
        <input id={`${id}-to`} type="date" value={range.to} min={range.from || undefined} onChange={(e) => setDates(range.from, e.target.value)} />
      </div>
      <div className="presets" role="group" aria-label="Quick ranges">
        {PRESETS.map((d) => (
          <button key={d} type="button" className={d === range.days ? 'button small' : 'button small secondary'} aria-pressed={d === range.days} onClick={() => setDays(d)}>
            Last {d} days
          </button>
        ))}
      </div>
      {children}
    </form>
  );
}
