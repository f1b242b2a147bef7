// A DuckDB analytics store written by the layout before versioning (test/fixtures/analytics-v0, made
// by the engine of commit 7c0a874: compacted twice with late rows, some rows left uncompacted) opens
// with the versioned engine, takes migration 1 and answers every count exactly as plain Sets over the
// events it holds, before and after a compaction.
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbEngine } from '../../src/analytics/engines/duckdb/index.ts';
import { LATEST_VERSION } from '../../src/analytics/engines/duckdb/schema.ts';
import { tempDir } from '../helpers/server.ts';
import { FIXTURE, fixtureEvents, UPGRADE_RANGES } from './fixture-v0.ts';
import { reference, runPathReport } from './helpers.ts';

describe('a store written before versioning', () => {
  const dir = tempDir('folio-upgrade-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('upgrades without losing a count', async () => {
    const file = path.join(dir, 'analytics.duckdb');
    copyFileSync(path.join(FIXTURE, 'analytics.duckdb'), file);
    const { projectId, ref } = fixtureEvents();
    const engine = await DuckDbEngine.open({ file, readConnections: 1 });
    try {
      expect(Number((await engine.sql('SELECT max(version) AS v FROM schema_version'))[0].v)).toBe(LATEST_VERSION);
      expect(engine.pendingRows()).toBe(0); // migration 2 folded the fixture's uncompacted rows
      const page = { limit: 1000, offset: 0 };
      for (const round of ['before compaction', 'after compaction']) {
        for (const [from, to] of UPGRADE_RANGES) {
          for (const mode of ['visitors', 'views'] as const) {
            const want = reference(ref, from, to, mode);
            const got = await runPathReport(engine, mode, { projectId, range: { from, to }, ...page });
            expect(got.totals, `${round} ${mode} ${from}..${to}`).toEqual(want.totals);
            expect(got.rows, `${round} ${mode} ${from}..${to}`).toEqual(want.rows);
          }
        }
        await engine.compact();
      }
    } finally {
      await engine.close();
    }
    // Opening it again applies nothing more.
    const again = await DuckDbEngine.open({ file, readConnections: 1 });
    expect((await again.sql('SELECT count(*) AS n FROM schema_version'))[0].n).toBe(BigInt(LATEST_VERSION));
    await again.close();
  });
});
