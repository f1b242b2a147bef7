// The referrers and AI-companies reports count distinct visitors over seen_keys and seen_path_keys rows without summing
// `sign` (a row a fold replaced always has a live version of its key and day holding its bits): they
// stay exact while late rows' cancellations are not merged yet (merges stopped) and after the merges
// collapsed them. On 18.16 (FOLIO_TEST_CLICKHOUSE_URL) and on 26.x (chdb).
import { afterAll, describe, expect, it, vi } from 'vitest';
import type { ClickHouseEngine } from '../../src/analytics/engines/clickhouse/index.ts';
import { ident } from '../../src/analytics/engines/clickhouse/sql.ts';
import { closeChdb, openChdbEngine } from './chdb.ts';
import { check, DAYS, generate } from './keys-reference.ts';
import { CLICKHOUSE_URL, dropDatabase, freshName, NEEDS, openEngine, requireClickHouse } from './helpers.ts';

vi.setConfig({ testTimeout: 240_000 });
const BACKENDS = [
  { name: `ClickHouse server ${NEEDS}`, skip: !CLICKHOUSE_URL, open: async (db: string) => (await requireClickHouse(), openEngine(db)), drop: dropDatabase },
  { name: 'ClickHouse 26.x in-process (chdb)', skip: false, open: openChdbEngine, drop: async () => {} },
];
afterAll(closeChdb);

const TABLES = ['seen', 'seen_site', 'seen_keys', 'seen_path_keys'];

describe.each(BACKENDS)('$name: first-seen key rows before and after merges', ({ skip, open, drop }) => {
  it.skipIf(skip)('count exactly with unmerged cancellations of late rows, and once merges collapsed them', async () => {
    const database = freshName('folio_chmerge');
    const engine: ClickHouseEngine = await open(database);
    const db = ident(database).text;
    const cancellations = async (t = 'seen_keys') => Number((await engine.sql(`SELECT count() AS n FROM ${db}.${t} WHERE sign = -1`))[0].n);
    try {
      const early = generate(31, 800, 2, 2);
      await engine.write(early.events);
      await engine.compact();
      for (const t of TABLES) await engine.exec(`SYSTEM STOP MERGES ${db}.${t}`);
      const late = generate(32, 800, 0, DAYS);
      await engine.write(late.events);
      await engine.compact();
      const both = [...early.ref, ...late.ref];
      expect(await cancellations()).toBeGreaterThan(0);
      expect(await cancellations('seen_path_keys')).toBeGreaterThan(0);
      await check(engine, both, 'cancellations not merged');
      for (const t of TABLES) {
        await engine.exec(`SYSTEM START MERGES ${db}.${t}`);
        await engine.exec(`OPTIMIZE TABLE ${db}.${t} FINAL`);
      }
      expect(await cancellations()).toBe(0);
      expect(await cancellations('seen_path_keys')).toBe(0);
      await check(engine, both, 'merged');
    } finally {
      await engine.close();
      await drop(database);
    }
  });
});
