// Per-line cost of reading combined-log lines in process (no DuckDB): the combined-line reader alone
// (on strings and on bytes), the string path (LineConverter + ImportColumnsBuilder.add) and the byte
// path (log-bytes/reader.ts), over the same lines of a generated log. Each is run `--rounds` times; the best round is printed (caches warm).
// Usage: node bench/analytics/parse.ts [--lines 300000] [--rounds 3]
import { parseArgs } from 'node:util';
import { DeferredVisitors } from '../../src/analytics/deferred-visitors.ts';
import { VisitorIds } from '../../src/analytics/identity.ts';
import { ImportColumnsBuilder } from '../../src/analytics/import-columns.ts';
import { ClassificationRules } from '../../src/analytics/classify.ts';
import { AsciiBytes, StringUnits } from '../../src/analytics/log-lines/code-units.ts';
import { CombinedReader } from '../../src/analytics/log-lines/combined-format.ts';
import { LineConverter } from '../../src/analytics/log-lines/line-converter.ts';
import { emptyRecord } from '../../src/analytics/log-lines/log-record.ts';
import { ByteLineImporter } from '../../src/analytics/log-bytes/reader.ts';
import { generateTraffic, writeCombinedLog } from './generate.ts';
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';

const { values } = parseArgs({ options: { lines: { type: 'string', default: '300000' }, rounds: { type: 'string', default: '3' } } });
const N = Number(values.lines);
const dir = mkdtempSync(path.join(os.tmpdir(), 'folio-bench-parse-'));
const file = path.join(dir, 'access.log');
await writeCombinedLog(generateTraffic({ events: N, days: 30, seed: 1 }), file);
const buf = readFileSync(file);
rmSync(dir, { recursive: true });
const bounds: number[] = [];
for (let s = 0, nl = buf.indexOf(10); nl !== -1; s = nl + 1, nl = buf.indexOf(10, s)) bounds.push(s, nl);
const strings = Array.from({ length: bounds.length / 2 }, (_, i) => buf.toString('utf8', bounds[2 * i], bounds[2 * i + 1]));

function best(name: string, run: () => number): void {
  let min = Infinity;
  let accepted = 0;
  for (let r = 0; r < Number(values.rounds); r++) {
    const t = performance.now();
    accepted = run();
    min = Math.min(min, performance.now() - t);
  }
  console.log(`${name.padEnd(44)} ${((min * 1000) / strings.length).toFixed(2)} µs/line (${accepted} of ${strings.length} lines read)`);
}

const ids = new VisitorIds('bench-secret-0123456789abcdef');
const rules = ClassificationRules.load();
// One converter and builder per path across rounds: visitor ids and interned values stay cached, so
// the best round measures reading, not first-sight hashing. The byte path runs first, before the
// reader has seen any string: its functions are then measured as the import worker uses them on an
// ASCII log (only ever on bytes).
const byteBuilder = new ImportColumnsBuilder('prj', rules, ids, Date.now(), 1 << 16);
const fast = new ByteLineImporter(new LineConverter('auto'), byteBuilder, ids, new DeferredVisitors());
best('byte path: ByteLineImporter.line', () => {
  const builder = byteBuilder;
  let n = 0;
  for (let i = 0; i < bounds.length; i += 2) {
    if (fast.line(buf, bounds[i], bounds[i + 1])) n++;
    if (builder.full) builder.take();
  }
  return n;
});

const stringConv = new LineConverter('auto');
const stringBuilder = new ImportColumnsBuilder('prj', rules, ids, Date.now(), 1 << 16);
best('string path: LineConverter + builder.add', () => {
  const conv = stringConv;
  const builder = stringBuilder;
  let n = 0;
  for (let i = 0; i < bounds.length; i += 2) {
    // Decoded here, as the import worker decodes a line the byte path leaves to the string path.
    if (conv.next(buf.toString('utf8', bounds[i], bounds[i + 1]))) builder.add(conv, conv.lines), n++;
    if (builder.full) builder.take();
  }
  return n;
});

const reader = new CombinedReader();
const rec = emptyRecord();
const units = new StringUnits();
best('combined reader, strings into records', () => strings.filter((l) => (units.set(l), reader.read(units, 0, l.length, rec))).length);
const bytes = new AsciiBytes();
bytes.codes = buf;
best('combined reader, bytes into offsets', () => {
  let n = 0;
  for (let i = 0; i < bounds.length; i += 2) if (reader.scan(bytes, bounds[i], bounds[i + 1]) !== null) n++;
  return n;
});
