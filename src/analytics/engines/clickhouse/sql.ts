// Literals and identifiers for ClickHouse SQL text. Debian's ClickHouse (18.16) has no query
// parameters ({name:Type}), so every value the engine puts in a query goes through `lit` (values) or
// `ident` (names), usually via the `sql` template tag. The output is portable: it parses the same on
// 18.16 and on current releases (no 18.16-only syntax, no newer-only syntax).
//
// Strings: single-quoted; `\` and `'` are backslash-escaped; every control character (U+0000–U+001F,
// U+007F) is written as `\xHH`, so the query text never holds a raw NUL, newline or tab; everything
// else (Unicode, emoji, right-to-left text, `--`, `/*`, `;`) is written as is, in UTF-8. A JavaScript
// string with a lone surrogate half cannot be encoded in UTF-8: it becomes U+FFFD, as every UTF-8
// encoder (and the JSON insert path) does.

/** A piece of SQL text that is inserted as is by `sql` (identifiers, keywords, fragments built by `sql`). */
export class Sql {
  readonly text: string;
  constructor(text: string) {
    this.text = text;
  }
  toString(): string {
    return this.text;
  }
}

/** A calendar day (UTC), rendered as a ClickHouse `Date`. */
export class SqlDate {
  /** Days since 1970-01-01. */
  readonly day: number;
  constructor(day: number) {
    if (!Number.isSafeInteger(day) || day < 0 || day > MAX_DATE_DAY) {
      throw new RangeError(`A ClickHouse Date holds days 0..${MAX_DATE_DAY} (1970-01-01 to 2105-12-31 on every release); got ${day}.`);
    }
    this.day = day;
  }
  /** `YYYY-MM-DD`. */
  iso(): string {
    return new Date(this.day * 86_400_000).toISOString().slice(0, 10);
  }
}

/**
 * The last day a ClickHouse `Date` holds on every release: 2105-12-31 (day 49,672). Current releases
 * go on to 2149-06-06, but 18.16's date table ends with 2105 and turns later dates into 0000-00-00.
 */
export const MAX_DATE_DAY = 49_672;

export type Literal = string | number | bigint | boolean | null | SqlDate | readonly Literal[];

const INT64_MIN = -(2n ** 63n);
const UINT64_MAX = 2n ** 64n - 1n;

function hex2(code: number): string {
  return code.toString(16).padStart(2, '0').toUpperCase();
}

/** A quoted ClickHouse string literal holding exactly `s` (as UTF-8). */
export function quoteString(s: string): string {
  const w = s.toWellFormed();
  let out = "'";
  let start = 0;
  for (let i = 0; i < w.length; i++) {
    const c = w.charCodeAt(i);
    let esc: string | null = null;
    if (c === 0x5c) esc = '\\\\';
    else if (c === 0x27) esc = "\\'";
    else if (c < 0x20 || c === 0x7f) esc = `\\x${hex2(c)}`;
    if (esc !== null) {
      out += w.slice(start, i) + esc;
      start = i + 1;
    }
  }
  return out + w.slice(start) + "'";
}

function numberLiteral(n: number): string {
  if (!Number.isFinite(n)) throw new RangeError(`Cannot put ${n} in SQL: only finite numbers.`);
  if (Number.isInteger(n)) {
    if (!Number.isSafeInteger(n)) throw new RangeError(`Cannot put ${n} in SQL exactly: pass integers beyond 2^53 as bigint.`);
    return Object.is(n, -0) ? '0' : String(n);
  }
  // Shortest round-trip form; subnormals do not parse on old releases, and nothing here needs them.
  if (Math.abs(n) < 2.2250738585072014e-308) throw new RangeError(`Cannot put the subnormal ${n} in SQL.`);
  return String(n);
}

function bigintLiteral(n: bigint): string {
  if (n < INT64_MIN || n > UINT64_MAX) throw new RangeError(`Cannot put ${n} in SQL: outside Int64/UInt64.`);
  return String(n);
}

/** The SQL literal of a value: string, number, bigint, boolean (1/0), null (NULL), SqlDate or array of these. */
export function lit(value: Literal): string {
  if (value === null) return 'NULL';
  switch (typeof value) {
    case 'string':
      return quoteString(value);
    case 'number':
      return numberLiteral(value);
    case 'bigint':
      return bigintLiteral(value);
    case 'boolean':
      return value ? '1' : '0';
  }
  if (value instanceof SqlDate) return `toDate('${value.iso()}')`;
  if (Array.isArray(value)) return `[${value.map((v) => lit(v)).join(', ')}]`;
  throw new TypeError(`Cannot put a ${Object.prototype.toString.call(value)} in SQL.`);
}

/** The right side of `x IN …`: `(a, b, …)`. An empty list matches nothing (`(NULL)` never equals). */
export function inList(values: readonly Literal[]): Sql {
  if (values.length === 0) return new Sql('(NULL)');
  return new Sql(`(${values.map((v) => lit(v)).join(', ')})`);
}

/** A quoted identifier (database, table, column name). */
export function ident(name: string): Sql {
  if (name.length === 0) throw new RangeError('An identifier must not be empty.');
  if (/[\u0000-\u001f\u007f]/.test(name) || name.toWellFormed() !== name) throw new RangeError('An identifier must not hold control characters or lone surrogates.');
  return new Sql('`' + name.replace(/[\\`]/g, (c) => '\\' + c) + '`');
}

/** Inserts SQL text as is (never user input). */
export function raw(text: string): Sql {
  return new Sql(text);
}

/** Joins fragments with a separator. */
export function join(parts: readonly (Sql | Literal)[], sep = ', '): Sql {
  return new Sql(parts.map((p) => (p instanceof Sql ? p.text : lit(p))).join(sep));
}

/**
 * Template tag: `sql\`SELECT … WHERE project = ${projectId}\`` renders every interpolated value with
 * `lit` and inserts `Sql` fragments (from `ident`, `raw`, `join` or a nested `sql`) as they are.
 */
export function sql(strings: TemplateStringsArray, ...values: (Sql | Literal)[]): Sql {
  let out = strings[0];
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    out += (v instanceof Sql ? v.text : lit(v)) + strings[i + 1];
  }
  return new Sql(out);
}
