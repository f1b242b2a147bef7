// What every `folio` command prints: tables and key–value views for people, JSON and CSV for
// programs. Text that came from elsewhere (a server, the model, the store) is cleaned before it
// reaches a terminal.

/**
 * Text made safe for a terminal: control characters (escape sequences that could move the cursor or
 * retitle the window, stray line breaks) become spaces.
 */
export function clean(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ');
}

/** Writes `text` as whole lines: a missing final line break is added. */
export function write(stream: NodeJS.WritableStream, text: string): void {
  stream.write(text.endsWith('\n') ? text : text + '\n');
}

/** Pretty-printed JSON, one value per output. */
export function writeJson(stream: NodeJS.WritableStream, value: unknown): void {
  write(stream, JSON.stringify(value, null, 2));
}

/** The command's result on stdout: `value` as JSON with --json, else the text `human()` makes. */
export function printResult(json: boolean | undefined, value: unknown, human: () => string): void {
  if (json) writeJson(process.stdout, value);
  else write(process.stdout, human());
}

/**
 * Rows as aligned columns under a header of the rows' keys, cells cleaned; `(none)` without rows.
 * Columns named in `rightAligned` (numbers) are aligned right.
 */
export function table(rows: Record<string, string>[], rightAligned: string[] = []): string {
  if (rows.length === 0) return '(none)';
  rows = rows.map((r) => Object.fromEntries(Object.entries(r).map(([k, v]) => [k, clean(v)])));
  const cols = Object.keys(rows[0]);
  const width = cols.map((c) => Math.max(c.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((cell, i) => (rightAligned.includes(cols[i]) ? cell.padStart(width[i]) : cell.padEnd(width[i])))
      .join('  ')
      .trimEnd();
  return [line(cols), ...rows.map((r) => line(cols.map((c) => r[c] ?? '')))].join('\n');
}

/** One record as `KEY  value` lines, keys padded to one width, values cleaned. An empty key continues the line above. */
export function fields(rows: [string, string][]): string {
  const w = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(w)}  ${clean(v)}`).join('\n');
}

/** CSV: the one writer the CLI and the dashboard share (src/client/csv.ts). */
export { toCsv as csv } from '../client/csv.ts';

/** A count with its noun in the right number: "1 file", "2 files", "12,500 lines". */
export function count(n: number, singular: string, plural = `${singular}s`): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? singular : plural}`;
}
