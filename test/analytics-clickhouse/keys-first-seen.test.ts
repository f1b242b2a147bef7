// The referrers and AI-companies reports stay exact on DuckDB, on ClickHouse 18.16 (the server of
// FOLIO_TEST_CLICKHOUSE_URL) and on ClickHouse 26.x (chdb, always), against plain Sets, whatever has
// been compacted (DuckDB) or folded (ClickHouse): rows written before a compaction, after it (not
// compacted yet), late rows for earlier days, the site's own host and whole-URL referrers, visitors
// sent by two hosts of one class or company, and ranges of whole days (the first-seen layout) or with
// a bound inside a day (raw events), and after retention deleted the first days.
import { afterAll, describe, expect, it, vi } from 'vitest';
import { freshName } from './helpers.ts';
import { threeEngines } from './engines.ts';
import { check, DAY, DAYS, generate, START } from './keys-reference.ts';

vi.setConfig({ testTimeout: 240_000, hookTimeout: 120_000 });
const { backends: BACKENDS, cleanup } = threeEngines('folio-keys-first-seen-');
afterAll(cleanup);

describe.each(BACKENDS)('$name: referrers and AI companies over the first-seen layout', ({ skip, open, drop }) => {
  it.skipIf(skip)('count exactly as plain Sets before and after compaction, with late rows, for whole-day and partial ranges', async () => {
    const store = freshName('folio_keys_fs');
    const engine = await open(store);
    try {
      // Days 2–3 first, compacted; then rows of days 0–5 (late rows for the days before) not compacted yet.
      const first = generate(5, 900, 2, 2);
      for (let s = 0; s < first.events.length; s += 300) await engine.write(first.events.slice(s, s + 300));
      await check(engine, first.ref, 'nothing compacted');
      await engine.compact();
      await check(engine, first.ref, 'all compacted');
      const late = generate(6, 900, 0, DAYS);
      for (let s = 0; s < late.events.length; s += 300) await engine.write(late.events.slice(s, s + 300));
      const both = [...first.ref, ...late.ref];
      await check(engine, both, 'late rows not compacted yet');
      await engine.compact();
      await check(engine, both, 'late rows compacted');
      // A visitor sent by two hosts of one class (and one company) counts once in each.
      const twice = both.filter((e) => e.cls === 'human' && e.company === 'OpenAI');
      expect(new Set(twice.map((e) => e.host)).size).toBeGreaterThan(1);
      // Retention: the days before the cut-off are gone, and keys first seen before it count from it.
      const cutoff = START / DAY + 2;
      await engine.deleteBefore(cutoff);
      await check(engine, both.filter((e) => e.ts >= cutoff * DAY), 'after retention');
    } finally {
      await engine.close();
      await drop(store);
    }
  });

  it.skipIf(skip)('count a visitor once on a day whose views were compacted in two batches', async () => {
    const store = freshName('folio_keys_same_day');
    const engine = await open(store);
    try {
      // Every visitor of the last day has views in both batches: a second row of the same day per key.
      const first = generate(7, 300, DAYS - 1, 1);
      await engine.write(first.events);
      await engine.compact();
      const second = generate(8, 300, DAYS - 1, 1);
      await engine.write(second.events);
      const both = [...first.ref, ...second.ref];
      await check(engine, both, 'second batch not compacted yet');
      await engine.compact();
      await check(engine, both, 'second batch compacted');
    } finally {
      await engine.close();
      await drop(store);
    }
  });
});
