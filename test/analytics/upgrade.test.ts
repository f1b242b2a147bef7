// A DuckDB analytics store written by the layout before versioning (test/fixtures/analytics-v0, made
// by the engine of commit 7c0a874: compacted twice with late rows, some rows left uncompacted) opens
// with the versioned engine, takes migration 1 and answers every count exactly as plain Sets over the
// events it holds, before and after a compaction.
import { copyFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { DuckDbEngine, type DuckDbOptions } from '../../src/analytics/engines/duckdb/index.ts';
import { LATEST_VERSION } from '../../src/analytics/engines/duckdb/schema.ts';
import { RAW_VIEWS } from '../../src/analytics/engines/duckdb/not-found.ts';
import { tempDir } from '../helpers/server.ts';
import { FIXTURE, fixtureEvents, UPGRADE_RANGES } from './fixture-v0.ts';
import { reference, runPathReport } from './helpers.ts';
import { DuckDBInstance } from '@duckdb/node-api';
import { check, DAYS, generate, RULES } from '../analytics-clickhouse/keys-reference.ts';
import { duckdbPathHosts } from '../../src/analytics/reports/referrers.ts';
import { KEY_KIND } from '../../src/analytics/traffic-class.ts';

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
    // A version-4 store: what this engine writes, less the tables migrations 5 and 6 add (the rest is the same layout).
    const { both } = await writeOlderStore(file, [...UNDO_9, ...UNDO_8, ...UNDO_7, 'DROP TABLE daily_keys', 'DROP TABLE daily_agents', 'DROP TABLE daily_path_keys', 'DELETE FROM schema_version WHERE version >= 5']);
    const upgraded = await DuckDbEngine.open({ file, readConnections: 1 });
    try {
      expect(Number((await upgraded.sql('SELECT max(version) AS v FROM schema_version'))[0].v)).toBe(LATEST_VERSION);
      // The compacted events were folded in by the migration; the late ones wait for the next compaction.
      expect(Number((await upgraded.sql('SELECT count(*) AS n FROM daily_keys'))[0].n)).toBeGreaterThan(0);
      expect(upgraded.pendingRows()).toBeGreaterThan(0);
      await check(upgraded, both, 'after migration 5, late rows not compacted');
      await upgraded.compact();
      await check(upgraded, both, 'after migration 5 and a compaction');
    } finally {
      await upgraded.close();
    }
  });
});

describe('a store written before migration 6 (first-seen rows per path, referring host and agent)', () => {
  const dir = tempDir('folio-upgrade-v6-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('backfills them from the compacted events, the same rows a compaction makes, and the per-path report stays exact', async () => {
    const file = path.join(dir, 'analytics.duckdb');
    const pathKeys = 'SELECT * FROM daily_path_keys ORDER BY ALL';
    // A version-5 store: what this engine writes, less the table migration 6 adds.
    const { both, kept } = await writeOlderStore(file, [...UNDO_9, ...UNDO_8, ...UNDO_7, 'DROP TABLE daily_path_keys', 'DELETE FROM schema_version WHERE version >= 6'], pathKeys);
    const upgraded = await DuckDbEngine.open({ file, readConnections: 1 });
    try {
      expect(Number((await upgraded.sql('SELECT max(version) AS v FROM schema_version'))[0].v)).toBe(LATEST_VERSION);
      // The compacted events were folded in by the migration as the compaction had; the late ones wait for the next one.
      expect(kept.length).toBeGreaterThan(0);
      expect(await upgraded.sql(pathKeys)).toEqual(kept);
      expect(upgraded.pendingRows()).toBeGreaterThan(0);
      await check(upgraded, both, 'after migration 6, late rows not compacted');
      await upgraded.compact();
      await check(upgraded, both, 'after migration 6 and a compaction');
    } finally {
      await upgraded.close();
    }
  });
});

describe('a store written before migration 8 (the referring hosts kept per path)', () => {
  const dir = tempDir('folio-upgrade-v8-');
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('keeps only the AI assistants\' rows per path when the service opens it, the rows a compaction makes, and stays exact', async () => {
    const file = path.join(dir, 'analytics.duckdb');
    const hostRows = `SELECT * FROM daily_path_keys WHERE kind = ${KEY_KIND.host} ORDER BY ALL`;
    const service = { readConnections: 1, pathHosts: duckdbPathHosts(RULES.sources) };
    // What a store kept from the start makes of the same writes (early compacted, late not yet).
    const direct = await writeStore(path.join(dir, 'direct.duckdb'), service);
    const want = await direct.sql(hostRows);
    await direct.close();
    // A version-7 store: every host's rows per path, as each store kept them before.
    const { both } = await writeOlderStore(file, [...UNDO_9, ...UNDO_8, 'DELETE FROM schema_version WHERE version >= 8']);
    const upgraded = await DuckDbEngine.open({ file, ...service });
    try {
      expect(Number((await upgraded.sql('SELECT max(version) AS v FROM schema_version'))[0].v)).toBe(LATEST_VERSION);
      expect(await upgraded.sql(hostRows)).toEqual(want);
      const hosts = (await upgraded.sql(`SELECT DISTINCT k FROM (${hostRows}) ORDER BY k`)).map((r) => r.k);
      expect(hosts).toEqual(['chat.openai.com', 'chatgpt.com', 'claude.ai', 'www.perplexity.ai']);
      await check(upgraded, both, 'after migration 8, late rows not compacted');
      await upgraded.compact();
      await check(upgraded, both, 'after migration 8 and a compaction');
    } finally {
      await upgraded.close();
    }
  });
});

/** Migration 9 undone: migration 7's not-found view again (these stores hold no not-found views). */
const UNDO_9 = ['DROP VIEW not_found', RAW_VIEWS[1]];

/** Migration 8 undone: its table goes. */
const UNDO_8 = ['DROP TABLE path_hosts'];

/** Migration 7 undone on a store without not-found views in `events_raw`: the tables get their old names back. */
const UNDO_7 = [
  'DROP VIEW events',
  'DROP VIEW not_found',
  'ALTER TABLE events_raw RENAME TO events',
  'ALTER TABLE not_found_stored RENAME TO not_found',
];

/** Early views (compacted) and late views for earlier days (not compacted). */
function stored() {
  const early = generate(21, 700, 1, 3);
  const late = generate(22, 500, 0, DAYS);
  return { early, late, both: [...early.ref, ...late.ref] };
}

/** A store with stored()'s early views compacted and its late ones not yet. */
async function writeStore(file: string, opts: Omit<DuckDbOptions, 'file'>): Promise<DuckDbEngine> {
  const { early, late } = stored();
  const engine = await DuckDbEngine.open({ file, ...opts });
  for (let s = 0; s < early.events.length; s += 350) await engine.write(early.events.slice(s, s + 350));
  await engine.compact();
  await engine.write(late.events);
  return engine;
}

/**
 * Writes stored() with this engine, reads `before` (the rows to compare after the upgrade), then makes
 * the store an older version by `undo` (the rest of the layout is the same).
 */
async function writeOlderStore(file: string, undo: string[], before?: string) {
  const { both } = stored();
  const engine = await writeStore(file, { readConnections: 1 });
  const kept = before === undefined ? [] : await engine.sql(before);
  await engine.close();
  const instance = await DuckDBInstance.create(file);
  const c = await instance.connect();
  for (const q of undo) await c.run(q);
  c.closeSync();
  instance.closeSync();
  return { both, kept };
}
