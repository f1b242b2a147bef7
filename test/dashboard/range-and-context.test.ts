// The dashboard's pure pieces of issue 34: the range an address asks for (web/src/dates.ts) and a
// suggestion job's prompt split into its words and its JSON context (web/src/prompt-context.ts),
// read from the prompt the suggestions service really writes (src/suggestions/proposals.ts).
import { describe, expect, it } from 'vitest';
import { addDays, apiRange, rangeFromQuery, rangeProblem, today } from '../../web/src/dates.ts';
import { splitContext } from '../../web/src/prompt-context.ts';
import { proposals } from '../../src/suggestions/proposals.ts';
import type { NotFoundRow } from '../../src/analytics/reports/not-found.ts';

const q = (search: string) => new URLSearchParams(search);

describe('the range in the address', () => {
  it('reads ?days=N as the last N days up to today, and ?from&to as written', () => {
    expect(rangeFromQuery(q('days=7'), 30)).toEqual({ from: addDays(today(), -6), to: today(), days: 7 });
    expect(rangeFromQuery(q('from=2026-11-01&to=2026-11-26'), 30)).toEqual({ from: '2026-11-01', to: '2026-11-26', days: null });
    expect(apiRange({ from: '2026-11-01', to: '2026-11-26', days: null })).toEqual({ dateFrom: '2026-11-01', dateTo: '2026-11-27' });
  });

  it('falls back to the default on a days value that is no whole number of days, and names a range it cannot ask for', () => {
    for (const bad of ['days=abc', 'days=0', 'days=-3', 'days=2.5', 'days=99999', '']) expect(rangeFromQuery(q(bad), 30).days).toBe(30);
    expect(rangeProblem(rangeFromQuery(q('from=2026-02-30&to=2026-03-01'), 30))).toMatch(/Pick both dates/);
    expect(rangeProblem(rangeFromQuery(q('from=2026-11-26&to=2026-11-01'), 30))).toBe('The start date is after the end date.');
    expect(rangeProblem(rangeFromQuery(q('from=<script>'), 30))).toMatch(/Pick both dates/);
  });
});

const row = (path: string, total: number): NotFoundRow => ({ path, human: total, ai: 0, total, derivedVisitors: total, views: total, firstSeen: 0, lastSeen: 0, referrers: [] });

describe("a suggestion job's prompt", () => {
  it('splits the broken-paths prompt into its words and its context, one row per path', () => {
    const { suggestions } = proposals({ projectId: 'p', rows: [row('/guides/authentication', 3), row('/docs/getting-started/installing-on-kubernetes', 4)], index: null, minVisitors: 3, inProgress: new Set(), days: 30 });
    const prompt = suggestions[0].prompt;
    const { text, context, json } = splitContext(prompt);
    expect(text).not.toMatch(/Context \(JSON\)|```/);
    expect(text).toMatch(/^Readers got "page not found"/);
    expect(context?.map((c) => [c.path, c.total])).toEqual([
      ['/guides/authentication', 3],
      ['/docs/getting-started/installing-on-kubernetes', 4],
    ]);
    expect(JSON.parse(json!)).toEqual(JSON.parse(/```json\n(.*)\n```/s.exec(prompt)![1]));
  });

  it('leaves a prompt whole when it has no context, or a context that is not JSON or not a list of paths', () => {
    const plain = 'Fix the typo on the install page.';
    expect(splitContext(plain)).toEqual({ text: plain, context: null, json: null });
    const broken = 'Words.\n\nContext (JSON):\n```json\n{not json\n```';
    expect(splitContext(broken)).toEqual({ text: broken, context: null, json: null });
    const other = splitContext('Words.\n\nContext (JSON):\n```json\n{"a":1}\n```');
    expect(other).toEqual({ text: 'Words.', context: null, json: '{\n  "a": 1\n}' });
    // Written by hand into a prompt: only numbers and strings reach the table.
    const hostile = splitContext('Words.\n\nContext (JSON):\n```json\n[{"path":"/a","visitors":{"total":{"x":1},"human":2},"candidates":[{"url":["/b"]},{"file":"b.md"},null]}]\n```');
    expect(hostile.context).toEqual([{ path: '/a', human: 2, ai: null, total: null, likely: ['b.md'] }]);
  });
});
