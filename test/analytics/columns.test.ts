// The DuckDB column copier (engines/duckdb/columns.ts): what goes in whole vectors comes back row by
// row, NULLs included, on full and partial chunks; and the C-API bindings it calls are the exact
// version node-api itself is built on.
import { createRequire } from 'node:module';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { BIGINT, DOUBLE, DuckDBInstance, INTEGER, UTINYINT, VARCHAR } from '@duckdb/node-api';
import { ChunkFiller, CHUNK_ROWS } from '../../src/analytics/engines/duckdb/columns.ts';

const TYPES = [INTEGER, BIGINT, BIGINT, UTINYINT, DOUBLE, VARCHAR, BIGINT];

describe('ChunkFiller', () => {
  it('copies typed-array columns, times without BigInt, constants, strings and NULLs into DuckDB exactly', async () => {
    const instance = await DuckDBInstance.create(':memory:');
    const c = await instance.connect();
    await c.run('CREATE TABLE t (i INTEGER NOT NULL, ts BIGINT NOT NULL, seq BIGINT NOT NULL, u UTINYINT NOT NULL, d DOUBLE NOT NULL, s VARCHAR, k BIGINT)');
    const expected: unknown[][] = [];
    const ap = await c.createAppender('t');
    for (const rows of [CHUNK_ROWS, 130, 1]) {
      const i32 = Int32Array.from({ length: rows }, (_, j) => j * 7 - 500);
      const ts = Float64Array.from({ length: rows }, (_, j) => 1_767_225_600_000 + j * 86_400_001 + (j % 2 === 0 ? 2 ** 52 : 0));
      const u8 = Uint8Array.from({ length: rows }, (_, j) => j % 256);
      const dbl = Float64Array.from({ length: rows }, (_, j) => j / 3);
      const str = (j: number) => (j % 3 === 0 ? null : `ü-${j}-${'x'.repeat(j % 20)}`);
      const keys = BigInt64Array.from({ length: rows }, (_, j) => BigInt(j) * -1_000_000_007n);
      const f = new ChunkFiller(TYPES, rows);
      f.copy(0, i32);
      f.int64FromNumbers(1, ts);
      f.int64Constant(2, 42n);
      f.copy(3, u8);
      f.copy(4, dbl);
      f.strings(5, str);
      f.copy(6, keys);
      f.nullWhere(6, (j) => j % 5 === 0);
      ap.appendDataChunk(f.chunk);
      for (let j = 0; j < rows; j++) expected.push([i32[j], BigInt(ts[j]), 42n, u8[j], dbl[j], str(j), j % 5 === 0 ? null : keys[j]]);
    }
    ap.flushSync();
    ap.closeSync();
    const got = (await c.runAndReadAll('SELECT * FROM t')).getRows();
    expect(got.length).toBe(expected.length);
    expect(got).toEqual(expected);
    c.closeSync();
    instance.closeSync();
  });

  it('refuses a column of the wrong length and a chunk over DuckDB vector size', () => {
    const f = new ChunkFiller([INTEGER], 10);
    expect(() => f.copy(0, new Int32Array(9))).toThrow(/9 values for 10 rows/);
    expect(() => new ChunkFiller([INTEGER], CHUNK_ROWS + 1)).toThrow(/at most 2048 rows/);
  });

  it('uses the exact @duckdb/node-bindings version that @duckdb/node-api pins', () => {
    const require = createRequire(import.meta.url);
    const apiPackage = JSON.parse(readFileSync(require.resolve('@duckdb/node-api/package.json'), 'utf8')) as { dependencies: Record<string, string> };
    const ours = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { dependencies: Record<string, string> };
    expect(ours.dependencies['@duckdb/node-bindings']).toBe(apiPackage.dependencies['@duckdb/node-bindings']);
  });
});
