// Typed-array columns into DuckDB data chunks, copied a whole vector at a time through the C API's
// vector calls (@duckdb/node-bindings, the layer @duckdb/node-api is built on). node-api's per-cell
// `setItem` cost ~0.5 µs per row of 10 columns on the request thread in a CPU profile (a JS call per
// cell, BigInt shifts per validity bit, a BigInt per time value); a bulk copy costs a few nanoseconds
// per cell (docs/benchmarks-analytics.md, "Events API: where the time went"). Every DuckDB write of
// event rows goes through here.
import duckdb from '@duckdb/node-bindings';
import { DuckDBDataChunk, type DuckDBType } from '@duckdb/node-api';

/** DuckDB's vector size: a data chunk holds at most this many rows. */
export const CHUNK_ROWS = 2048;

// Scratch shared by every chunk: each copy into a vector is synchronous, so one set is enough.
const int64 = new BigInt64Array(CHUNK_ROWS);
const int64Words = new Uint32Array(int64.buffer);
const validity = new Uint8Array(CHUNK_ROWS / 8);

/** One data chunk of `rows` rows being filled column by column. */
export class ChunkFiller {
  readonly chunk: DuckDBDataChunk;
  private readonly rows: number;

  constructor(types: readonly DuckDBType[], rows: number) {
    if (rows > CHUNK_ROWS) throw new Error(`a data chunk holds at most ${CHUNK_ROWS} rows`);
    this.chunk = DuckDBDataChunk.create(types, rows);
    this.rows = rows;
  }

  private vector(col: number): duckdb.Vector {
    return duckdb.data_chunk_get_vector(this.chunk.chunk, col);
  }

  /** A fixed-width column (INTEGER from Int32Array, BIGINT from BigInt64Array, UTINYINT from Uint8Array, DOUBLE from Float64Array). */
  copy(col: number, values: Int32Array | BigInt64Array | Uint8Array | Float64Array): void {
    if (values.length !== this.rows) throw new Error(`column ${col}: ${values.length} values for ${this.rows} rows`);
    duckdb.copy_data_to_vector(this.vector(col), 0, values.buffer as ArrayBuffer, values.byteOffset, values.byteLength);
  }

  /** A BIGINT column of whole, non-negative numbers below 2^53 (times in ms), without a BigInt per row. */
  int64FromNumbers(col: number, values: Float64Array): void {
    const w = int64Words;
    for (let i = 0; i < this.rows; i++) {
      const v = values[i];
      // Little-endian words, as DuckDB's vectors on every platform it ships for.
      w[2 * i] = v % 4_294_967_296;
      w[2 * i + 1] = Math.floor(v / 4_294_967_296);
    }
    this.copy(col, int64.subarray(0, this.rows));
  }

  /** A BIGINT column of one value. */
  int64Constant(col: number, value: bigint): void {
    this.copy(col, int64.subarray(0, this.rows).fill(value));
  }

  /** A VARCHAR column: `valueOf(row)`, null for NULL. */
  strings(col: number, valueOf: (row: number) => string | null): void {
    const v = this.vector(col);
    this.nullWhere(col, (i) => {
      const s = valueOf(i);
      if (s === null) return true;
      duckdb.vector_assign_string_element(v, i, s);
      return false;
    });
  }

  /** Marks the rows where `isNull(row)` as NULL (a column copied with `copy` is otherwise all valid). */
  nullWhere(col: number, isNull: (row: number) => boolean): void {
    const valid = validity.fill(0xff);
    let nulls = 0;
    for (let i = 0; i < this.rows; i++) {
      if (isNull(i)) {
        valid[i >> 3] &= ~(1 << (i & 7));
        nulls++;
      }
    }
    if (nulls > 0) {
      const v = this.vector(col);
      duckdb.vector_ensure_validity_writable(v);
      duckdb.copy_data_to_vector_validity(v, 0, valid.buffer, 0, Math.ceil(this.rows / 64) * 8);
    }
  }
}
