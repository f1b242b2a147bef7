// The one escaping function for ClickHouse SQL (18.16 has no query parameters): hostile values are
// rendered as literals, round-tripped through a real ClickHouse INSERT … VALUES and SELECT, and
// compared byte for byte; the same values inserted through the JSON path are found by `= literal`.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ClickHouseClient } from '@clickhouse/client';
import { ident, inList, join, lit, MAX_DATE_DAY, quoteString, raw, sql, SqlDate, type Literal } from '../../src/analytics/engines/clickhouse/sql.ts';
import { rng } from '../analytics/helpers.ts';
import { CLICKHOUSE_URL, dropDatabase, freshName, NEEDS, requireClickHouse, serverClient } from './helpers.ts';

const CONTROL = Array.from({ length: 32 }, (_, i) => String.fromCharCode(i)).join('') + '\u007f';

function randomString(r: () => number, len: number): string {
  const pools = [
    () => String.fromCharCode(Math.floor(r() * 128)),
    () => ["'", '\\', '"', '`', '\0', '\n', '\t', '\r', '-', '/', '*', ';', '{', '}', '?', '$', '%'][Math.floor(r() * 17)],
    () => String.fromCodePoint(0x80 + Math.floor(r() * 0x780)),
    () => String.fromCodePoint(0x4e00 + Math.floor(r() * 0x5000)),
    () => String.fromCodePoint(0x1f300 + Math.floor(r() * 0x300)),
    () => String.fromCodePoint(0x590 + Math.floor(r() * 0x100)), // Hebrew, right to left
  ];
  let s = '';
  while (s.length < len) s += pools[Math.floor(r() * pools.length)]();
  return s;
}

export const HOSTILE: string[] = [
  '',
  "'",
  "''",
  '\\',
  "\\'",
  "'\\",
  "\\\\'",
  "\\''\\",
  "x' OR '1'='1",
  "a'; DROP TABLE t; --",
  "'); DROP DATABASE x; --",
  '/* comment */',
  '*/ SELECT 1 /*',
  '-- line comment',
  'a -- b\nc',
  '#',
  '\0',
  'a\0b',
  '\0\0\0',
  '\\0',
  '\\x41',
  '\\N',
  'NULL',
  '\n',
  '\r\n',
  '\t',
  CONTROL,
  '\u2028\u2029',
  '\u0085',
  '"double"',
  '`back`',
  '{name:String}',
  '{x:UInt8}',
  '?',
  '$1',
  '%s%d%%',
  'FORMAT JSON',
  ' leading and trailing ',
  'café',
  'cafe\u0301',
  '日本語のテキスト',
  '😀👍🏽👨‍👩‍👧‍👦🇩🇪',
  'שלום עולם',
  'مرحبا بالعالم',
  '\u202Eevil\u202C',
  '\uFEFFbom',
  '\u200B\u200D',
  '\uFFFD',
  '\uFFFF',
  '𝕏',
  'a'.repeat(10_000),
  "\\'".repeat(5_000),
  ('\0\n\t\'\\😀שלום' + 'x'.repeat(50)).repeat(3_000),
];

describe('ClickHouse SQL literals (text)', () => {
  it('quotes strings: backslash and quote escaped, control characters as \\xHH, the rest as is', () => {
    expect(quoteString('')).toBe("''");
    expect(quoteString("it's")).toBe("'it\\'s'");
    expect(quoteString('a\\b')).toBe("'a\\\\b'");
    expect(quoteString("\\'")).toBe("'\\\\\\''");
    expect(quoteString('a\0b\n\t\u007f')).toBe("'a\\x00b\\x0A\\x09\\x7F'");
    expect(quoteString('😀 שלום -- /* */ ;')).toBe("'😀 שלום -- /* */ ;'");
    expect(quoteString('\uD800x')).toBe("'\uFFFDx'");
    for (const s of HOSTILE) {
      const q = quoteString(s);
      expect(q).not.toMatch(/[\u0000-\u001f\u007f]/);
      // The only unescaped quotes are the delimiters.
      expect(q.slice(1, -1).replace(/\\[\s\S]/g, '')).not.toContain("'");
    }
  });

  it('renders numbers, bigints, booleans, null, dates and arrays', () => {
    expect(lit(0)).toBe('0');
    expect(lit(-0)).toBe('0');
    expect(lit(-17)).toBe('-17');
    expect(lit(Number.MAX_SAFE_INTEGER)).toBe('9007199254740991');
    expect(lit(0.5)).toBe('0.5');
    expect(lit(-9223372036854775808n)).toBe('-9223372036854775808');
    expect(lit(18446744073709551615n)).toBe('18446744073709551615');
    expect(lit(true)).toBe('1');
    expect(lit(false)).toBe('0');
    expect(lit(null)).toBe('NULL');
    expect(lit(new SqlDate(0))).toBe("toDate('1970-01-01')");
    expect(lit(new SqlDate(20_000))).toBe("toDate('2024-10-04')");
    expect(lit(new SqlDate(MAX_DATE_DAY))).toBe("toDate('2105-12-31')");
    expect(lit([1, 'a', null, [2n]])).toBe("[1, 'a', NULL, [2]]");
    expect(lit([])).toBe('[]');
    expect(inList([1, 2]).text).toBe('(1, 2)');
    expect(inList(['x']).text).toBe("('x')");
  });

  it('refuses values it cannot render exactly', () => {
    for (const bad of [NaN, Infinity, -Infinity, 2 ** 53, -(2 ** 60), 5e-324]) expect(() => lit(bad)).toThrow(RangeError);
    expect(() => lit(2n ** 64n)).toThrow(RangeError);
    expect(() => lit(-(2n ** 63n) - 1n)).toThrow(RangeError);
    expect(() => lit({} as unknown as Literal)).toThrow(TypeError);
    expect(() => lit(new Date() as unknown as Literal)).toThrow(TypeError);
    expect(() => lit(undefined as unknown as Literal)).toThrow(TypeError);
    for (const d of [-1, MAX_DATE_DAY + 1, 1.5, NaN]) expect(() => new SqlDate(d)).toThrow(RangeError);
    expect(() => ident('')).toThrow(RangeError);
    expect(() => ident('a\0b')).toThrow(RangeError);
  });

  it('the sql tag renders values and keeps fragments', () => {
    const q = sql`SELECT ${raw('x')} FROM ${ident('my`table')} WHERE a = ${"o'k"} AND b IN ${inList([1, 2])} AND ${join([sql`c = ${3}`, sql`d = ${null}`], ' AND ')}`;
    expect(q.text).toBe("SELECT x FROM `my\\`table` WHERE a = 'o\\'k' AND b IN (1, 2) AND c = 3 AND d = NULL");
  });
});

describe.skipIf(!CLICKHOUSE_URL)(`ClickHouse SQL literals round-trip through a real server ${NEEDS}`, () => {
  const db = freshName('folio_chsql');
  let c: ClickHouseClient;
  const big = { max_query_size: String(64 * 1024 * 1024) };
  const select = async (q: string) => (await (await c.query({ query: q, format: 'JSONEachRow', clickhouse_settings: big })).json()) as Record<string, unknown>[];

  const strings = (() => {
    const r = rng(99);
    const random = Array.from({ length: 200 }, () => randomString(r, 1 + Math.floor(r() * 60)));
    return [...HOSTILE, ...random, '\uD800', 'a\uDC00b', '\uDBFF\uDFFF'];
  })();
  // What the server must hold: the UTF-8 bytes (lone surrogate halves become U+FFFD, as in any UTF-8 encoder).
  const bytesOf = (s: string) => Buffer.from(s.toWellFormed(), 'utf8').toString('hex').toUpperCase();

  beforeAll(async () => {
    await requireClickHouse();
    c = serverClient();
    await c.command({ query: sql`CREATE DATABASE ${ident(db)}`.text });
    await c.command({ query: sql`CREATE TABLE ${ident(db)}.s (id UInt32, via String, s String, n Nullable(String), a Array(String)) ENGINE = MergeTree ORDER BY id`.text });
  });

  afterAll(async () => {
    await c?.close();
    if (CLICKHOUSE_URL) await dropDatabase(db);
  });

  it('SELECT of each literal returns exactly its bytes', async () => {
    for (const s of strings) {
      const rows = await select(`SELECT hex(${lit(s)}) AS h, ${lit(s)} AS s`);
      expect(rows[0].h, JSON.stringify(s.slice(0, 80))).toBe(bytesOf(s));
      expect(rows[0].s).toBe(s.toWellFormed());
    }
  });

  it('INSERT … VALUES with literals stores exactly the bytes; the JSON insert path agrees; `= literal` finds each row', async () => {
    const values = strings.map((s, i) => sql`(${i}, 'values', ${s}, ${i % 2 ? s : null}, ${[s, '', s]})`);
    await c.command({ query: sql`INSERT INTO ${ident(db)}.s (id, via, s, n, a) VALUES ${join(values)}`.text });
    await c.insert({
      table: `${db}.s`,
      // JSON.stringify writes a lone surrogate half as \uD800, which ClickHouse refuses: the engine stores
      // toWellFormed() strings (U+FFFD), as here.
      values: strings.map((x) => x.toWellFormed()).map((s, i) => ({ id: 100_000 + i, via: 'json', s, n: i % 2 ? s : null, a: [s, '', s] })),
      format: 'JSONEachRow',
    });
    const rows = await select(`SELECT id, via, hex(s) AS h, hex(ifNull(n, '')) AS hn, isNull(n) AS nn, arrayMap(x -> hex(x), a) AS ha FROM ${db}.s ORDER BY id`);
    expect(rows.length).toBe(strings.length * 2);
    for (const r of rows) {
      const i = Number(r.id) % 100_000;
      const s = strings[i];
      const label = `${r.via} #${i} ${JSON.stringify(s.slice(0, 60))}`;
      expect(r.h, label).toBe(bytesOf(s));
      expect(Number(r.nn), label).toBe(i % 2 ? 0 : 1);
      if (i % 2) expect(r.hn, label).toBe(bytesOf(s));
      expect(r.ha, label).toEqual([bytesOf(s), '', bytesOf(s)]);
    }
    // Equality with the literal finds exactly the two copies (VALUES and JSON) of each distinct string.
    for (const s of new Set(strings.map((x) => x.toWellFormed()))) {
      const expected = strings.flatMap((x, i) => (x.toWellFormed() === s ? [i, 100_000 + i] : [])).sort((a, b) => a - b);
      const got = await select(`SELECT id FROM ${db}.s WHERE s = ${lit(s)} AND has(a, ${lit(s)}) ORDER BY id`);
      expect(got.map((r) => Number(r.id)), JSON.stringify(s.slice(0, 60))).toEqual(expected);
      const inl = await select(`SELECT count() AS n FROM ${db}.s WHERE s IN ${inList([s, 'definitely not stored \u0000'])}`);
      expect(Number(inl[0].n)).toBe(expected.length);
    }
  });

  it('numbers, bigints, dates and arrays round-trip through typed columns', async () => {
    const t = `${db}.n`;
    await c.command({ query: `CREATE TABLE ${t} (id UInt8, i64 Int64, u64 UInt64, f Float64, d Date, ai Array(Int64)) ENGINE = MergeTree ORDER BY id` });
    const cases: [number, bigint, bigint, number, number, bigint[]][] = [
      [1, -(2n ** 63n), 0n, 0.1, 0, []],
      [2, 2n ** 63n - 1n, 2n ** 64n - 1n, -1.5e-300, MAX_DATE_DAY, [-(2n ** 63n), 2n ** 63n - 1n, 0n]],
      [3, -1n, 1n, 123456.789, 20_240, [5n]],
      [4, 0n, 9007199254740993n, 2.2250738585072014e-308, 1, [-1n, 1n]],
    ];
    const values = cases.map(([id, i, u, f, d, a]) => sql`(${id}, ${i}, ${u}, ${f}, ${new SqlDate(d)}, ${a})`);
    await c.command({ query: `INSERT INTO ${t} VALUES ${join(values).text}` });
    const rows = await select(`SELECT id, toString(i64) AS i, toString(u64) AS u, f, toUInt16(d) AS d, arrayMap(x -> toString(x), ai) AS a FROM ${t} ORDER BY id`);
    expect(rows.map((r) => [Number(r.id), BigInt(r.i as string), BigInt(r.u as string), Number(r.f), Number(r.d), (r.a as string[]).map(BigInt)])).toEqual(cases);
    // Literals in comparisons select the right rows.
    expect(await select(`SELECT id FROM ${t} WHERE i64 = ${lit(-(2n ** 63n))} AND u64 = ${lit(0n)} AND d = ${lit(new SqlDate(0))}`)).toEqual([{ id: 1 }]);
    expect(await select(`SELECT id FROM ${t} WHERE u64 = ${lit(2n ** 64n - 1n)} AND d >= ${lit(new SqlDate(MAX_DATE_DAY))}`)).toEqual([{ id: 2 }]);
    expect(await select(`SELECT id FROM ${t} WHERE i64 IN ${inList([-1n, 0n])} ORDER BY id`)).toEqual([{ id: 3 }, { id: 4 }]);
    const d = await select(`SELECT toString(${lit(new SqlDate(20_000))}) AS s`);
    expect(d[0].s).toBe('2024-10-04');
  });

  it('quoted identifiers hold hostile names (database, table and column)', async () => {
    const names = ['weird name', 'back`tick', 'back\\slash', "qu'ote", 'ünï😀', 'select', '--x', '1leading'];
    for (const [i, name] of names.entries()) {
      const table = sql`${ident(db)}.${ident(name)}`;
      await c.command({ query: sql`CREATE TABLE ${table} (${ident(name)} String, k UInt8) ENGINE = MergeTree ORDER BY k`.text });
      await c.command({ query: sql`INSERT INTO ${table} VALUES (${name}, ${i})`.text });
      const rows = await select(sql`SELECT ${ident(name)} AS v FROM ${table}`.text);
      expect(rows).toEqual([{ v: name }]);
    }
    const listed = await select(sql`SELECT name FROM system.tables WHERE database = ${db} AND name IN ${inList(names)} ORDER BY name`.text);
    expect(listed.map((r) => r.name)).toEqual([...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b))));
  });
});
