// Log lines into page views, one line at a time: the format's reader (combined or JSON lines), then
// the filters (method, status, documents only), then the line's content key. A document that answered
// 404 or 410 is accepted as a not-found view (`notFound`).
import { normalizePath } from '../identity.ts';
import { Rejected } from '../pipeline.ts';
import { CombinedReader } from './combined-format.ts';
import { StringUnits } from './code-units.ts';
import { contentKeyInto, Repeats } from './content-key.ts';
import { DEFAULT_FIELDS, parseJsonLine } from './json-lines.ts';
import { emptyRecord, type LogRecord } from './log-record.ts';
import { isDocumentPath, isNotFoundStatus, isSuccess } from './page-views.ts';

export type LogFormat = 'combined' | 'json' | 'auto';

export type SkipReason = 'unparseable' | 'method' | 'status' | 'asset' | 'empty';

/**
 * Turns log lines into page views, counting skips by reason. Stateful: identical lines in the same
 * second get distinct keys (occurrence n > 1 is keyed as the line plus `\n#n`).
 */
export class LineConverter {
  readonly format: LogFormat;
  readonly fields: Record<string, string[]>;
  readonly skipped: Record<SkipReason, number> = { unparseable: 0, method: 0, status: 0, asset: 0, empty: 0 };
  lines = 0;
  /** Lines refused by a rule of the pipeline before they could become records (an unreadable time). */
  rejected = 0;
  readonly errors: { line: number; code: string; error: string }[] = [];
  /** The last accepted line: its fields (path normalised), reused for the next line. */
  readonly rec: LogRecord = emptyRecord();
  /** The last accepted line answered 404 or 410: a not-found view. */
  notFound = false;
  /** The last accepted line's content key: [high, low]. */
  readonly key = new Int32Array(2);
  private readonly combined = new CombinedReader();
  private readonly units = new StringUnits();
  /** Repeats of identical lines within one second. */
  readonly repeats = new Repeats();

  constructor(format: LogFormat = 'auto', fields: Record<string, string[]> = DEFAULT_FIELDS) {
    this.format = format;
    this.fields = fields;
  }

  private reject(err: Rejected): void {
    this.rejected++;
    if (this.errors.length < 20) this.errors.push({ line: this.lines, code: err.code, error: err.message });
  }

  /** Counts a line too long to read (its bytes were dropped unread) as rejected. */
  tooLong(maxBytes: number): void {
    this.lines++;
    this.reject(new Rejected('line_too_long', `The line is longer than ${maxBytes} bytes; it was not read.`));
  }

  /** Reads one line into `rec` and `key`; false (and the reason counted) when the line is skipped. */
  next(line: string): boolean {
    this.lines++;
    const start = firstNonBlank(line);
    if (start === line.length) {
      this.skipped.empty++;
      return false;
    }
    if (!this.read(line, start)) {
      this.skipped.unparseable++;
      return false;
    }
    if (!this.isPageView(this.rec)) return false;
    if (Number.isNaN(this.rec.ts)) {
      this.reject(new Rejected('invalid_timestamp', 'The time of the line is not ISO 8601, CLF or milliseconds since 1970.'));
      return false;
    }
    this.keyLine(line);
    return true;
  }

  /** The line's fields into `rec`, by its format (`auto`: a line starting with `{` is JSON). */
  private read(line: string, start: number): boolean {
    if (this.format === 'json' || (this.format === 'auto' && line.charCodeAt(start) === 123)) {
      const r = parseJsonLine(line, this.fields);
      if (r) Object.assign(this.rec, r);
      return r !== null;
    }
    this.units.set(line);
    return this.combined.read(this.units, 0, line.length, this.rec);
  }

  /** The filters, in order (the byte reader applies the same): method, status, then documents only (path normalised). */
  private isPageView(rec: LogRecord): boolean {
    if (rec.method !== 'GET' && rec.method !== 'HEAD') {
      this.skipped.method++;
      return false;
    }
    // 404 and 410 for a document: a not-found view (stored apart); any other unsuccessful status is skipped.
    this.notFound = isNotFoundStatus(rec.status);
    if (!this.notFound && !isSuccess(rec.status)) {
      this.skipped.status++;
      return false;
    }
    rec.path = normalizePath(rec.path);
    if (!isDocumentPath(rec.path)) {
      this.skipped.asset++;
      return false;
    }
    return true;
  }

  /** The line's content key into `key`, numbered by its occurrence among identical lines of its second. */
  private keyLine(line: string): void {
    const key = this.key;
    contentKeyInto(line, key);
    const n = this.repeats.occurrence(this.rec.ts, key[0], key[1]);
    if (n > 1) contentKeyInto(`${line}\n#${n}`, key);
  }
}

/** The index of the first character that is not a space or tab (the line's length for a blank line). */
function firstNonBlank(line: string): number {
  let i = 0;
  while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
  return i;
}
