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
import { DuckDBInstance } from '@duckdb/node-api';
import { check, DAYS, generate } from '../analytics-clickhouse/keys-reference.ts';

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

describe('a store written before migration 5 (first-seen rows per referring host and agent)', () => {
  const dir = tempDir('folio-upgrade-v5-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('backfills them from the compacted events, and the referrers and AI-companies reports stay exact', async () => {
    const file = path.join(dir, 'analytics.duckdb');
    // A version-4 store: what this engine writes, less the tables migration 5 adds (the rest is the same layout).
    const early = generate(21, 700, 1, 3);
    const late = generate(22, 500, 0, DAYS);
    const engine = await DuckDbEngine.open({ file, readConnections: 1 });
    for (let s = 0; s < early.events.length; s += 350) await engine.write(early.events.slice(s, s + 350));
    await engine.compact();
    await engine.write(late.events);
    await engine.close();
    const instance = await DuckDBInstance.create(file);
    const c = await instance.connect();
    for (const q of ['DROP TABLE daily_keys', 'DROP TABLE daily_agents', 'DELETE FROM schema_version WHERE version = 5']) await c.run(q);
    c.closeSync();
    instance.closeSync();

    const upgraded = await DuckDbEngine.open({ file, readConnections: 1 });
    try {
      expect(Number((await upgraded.sql('SELECT max(version) AS v FROM schema_version'))[0].v)).toBe(LATEST_VERSION);
      // The compacted events were folded in by the migration; the late ones wait for the next compaction.
      expect(Number((await upgraded.sql('SELECT count(*) AS n FROM daily_keys'))[0].n)).toBeGreaterThan(0);
      expect(upgraded.pendingRows()).toBeGreaterThan(0);
      const both = [...early.ref, ...late.ref];
      await check(upgraded, both, 'after migration 5, late rows not compacted');
      await upgraded.compact();
      await check(upgraded, both, 'after migration 5 and a compaction');
    } finally {
      await upgraded.close();
    }
  });
});
