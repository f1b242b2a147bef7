// Access-log import: nginx/Apache combined logs and JSON lines. Only successful GET/HEAD requests for
// documents (not assets) become page views. Every line gets a content key (hash of the line and its
// occurrence among identical lines of the same second), so importing a file twice changes nothing.
import { createReadStream, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import { Transform, type Readable } from 'node:stream';
import { normalizePath } from './identity.ts';
import { Rejected } from './pipeline.ts';
import { parseInstant } from './dates.ts';
import { CodedError } from '../errors.ts';

export type LogFormat = 'combined' | 'json' | 'auto';

/** A clear, expected failure of an import (missing project or file, locked store): one sentence, no stack. */
export class ImportError extends CodedError {
  constructor(message: string) {
    super('import_failed', message);
  }
}

/** What an import reports as it reads: each file as it starts, then bytes of it and lines so far. */
export interface ImportProgress {
  file(name: string, size: number | null): void;
  update(bytes: number, lines: number): void;
}

/** A parsed log line, before the document/status filters. */
export interface LogRecord {
  ts: number;
  ip: string;
  method: string;
  path: string;
  status: number;
  userAgent: string;
  referrer: string | null;
  accept: string | null;
}

/** What the importer sends to the server per view (NDJSON line of the bulk endpoint). */
export interface ImportRecord {
  /** ms since the epoch */
  t: number;
  p: string;
  ua: string;
  ip?: string;
  v?: string;
  r?: string;
  a?: string;
  /** 16 hex digits: the line's content key. */
  k?: string;
}

export type SkipReason = 'unparseable' | 'method' | 'status' | 'asset' | 'empty';

const MONTHS: Record<string, number> = { Jan: 0, Feb: 1, Mar: 2, Apr: 3, May: 4, Jun: 5, Jul: 6, Aug: 7, Sep: 8, Oct: 9, Nov: 10, Dec: 11 };

/** `10/Oct/2000:13:55:36 -0700` → ms. */
export function parseClfTime(s: string): number | null {
  const m = /^(\d{2})\/([A-Z][a-z]{2})\/(\d{4}):(\d{2}):(\d{2}):(\d{2})(?: ([+-])(\d{2})(\d{2}))?$/.exec(s);
  if (!m) return null;
  const mon = MONTHS[m[2]];
  if (mon === undefined) return null;
  const off = m[7] ? (m[7] === '-' ? -1 : 1) * (Number(m[8]) * 60 + Number(m[9])) : 0;
  return Date.UTC(Number(m[3]), mon, Number(m[1]), Number(m[4]), Number(m[5]), Number(m[6])) - off * 60_000;
}

/**
 * The CLF time `line[start, end)` in ms, with the minute cached: consecutive log lines share it and
 * only the seconds differ, so most lines cost a 23-character comparison with the cached minute.
 */
class ClfClock {
  private line = '';
  private start = -1;
  private minuteMs: number | null = null;

  at(line: string, start: number, end: number): number | null {
    // dd/Mon/yyyy:hh:mm:ss ±hhmm — the minute is [0, 17), the seconds [18, 20), the zone [20, 26).
    if (end - start !== 26 || line.charCodeAt(start + 17) !== 58 || line.charCodeAt(start + 20) !== 32) return parseClfTime(line.slice(start, end));
    const s1 = line.charCodeAt(start + 18) - 48;
    const s2 = line.charCodeAt(start + 19) - 48;
    if (s1 < 0 || s1 > 5 || s2 < 0 || s2 > 9) return null;
    if (!this.sameMinute(line, start)) {
      this.line = line;
      this.start = start;
      this.minuteMs = parseClfTime(line.slice(start, start + 17) + ':00' + line.slice(start + 20, end));
    }
    return this.minuteMs === null ? null : this.minuteMs + (s1 * 10 + s2) * 1000;
  }

  private sameMinute(line: string, start: number): boolean {
    if (this.start < 0) return false;
    const prev = this.line;
    const p = this.start;
    for (let i = 0; i < 17; i++) if (line.charCodeAt(start + i) !== prev.charCodeAt(p + i)) return false;
    for (let i = 20; i < 26; i++) if (line.charCodeAt(start + i) !== prev.charCodeAt(p + i)) return false;
    return true;
  }
}

const COMBINED = /^(\S+) \S+ \S+ \[([^\]]+)\] "([A-Z]+) (\S+)(?: [^"]*)?" (\d{3}) \S+(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?/;

/** A parsed log line, reused from line to line (no allocation per line). */
function emptyRecord(): LogRecord {
  return { ts: 0, ip: '', method: '', path: '', status: 0, userAgent: '', referrer: null, accept: null };
}

/** True when line[from, to) is non-empty printable ASCII without spaces (what `\S+` surely matches). */
function isToken(line: string, from: number, to: number): boolean {
  if (to <= from) return false;
  for (let i = from; i < to; i++) {
    const c = line.charCodeAt(i);
    if (c < 33 || c > 126) return false;
  }
  return true;
}

/**
 * Combined-format lines into `out`. Ordinary lines take a scanner that finds the fields with indexOf
 * (3× cheaper than the regex and its capture strings); a line it is not sure about — escapes in the
 * quoted fields, non-ASCII before the request's protocol, a missing protocol or missing quoted fields
 * — goes to the regex, so both accept the same lines with the same fields.
 */
export class CombinedParser {
  private readonly clock = new ClfClock();

  parse(line: string, out: LogRecord): boolean {
    return this.scan(line, out) || this.match(line, out);
  }

  private scan(line: string, out: LogRecord): boolean {
    const s1 = line.indexOf(' ');
    const s2 = line.indexOf(' ', s1 + 1);
    const s3 = line.indexOf(' ', s2 + 1);
    if (s1 <= 0 || s3 < 0 || !isToken(line, 0, s1) || !isToken(line, s1 + 1, s2) || !isToken(line, s2 + 1, s3)) return false;
    if (line.charCodeAt(s3 + 1) !== 91) return false; // [
    const tEnd = line.indexOf(']', s3 + 2);
    if (tEnd <= s3 + 2 || line.charCodeAt(tEnd + 1) !== 32 || line.charCodeAt(tEnd + 2) !== 34) return false;
    const rq = tEnd + 3;
    const rqEnd = line.indexOf('"', rq);
    if (rqEnd < 0) return false;
    let m = rq;
    while (m < rqEnd && line.charCodeAt(m) >= 65 && line.charCodeAt(m) <= 90) m++;
    if (m === rq || line.charCodeAt(m) !== 32) return false;
    const pEnd = line.indexOf(' ', m + 1);
    if (pEnd < 0 || pEnd > rqEnd || !isToken(line, m + 1, pEnd)) return false;
    // " ddd bytes "referrer" "user agent"
    const st = rqEnd + 2;
    if (line.charCodeAt(rqEnd + 1) !== 32 || line.charCodeAt(st + 3) !== 32) return false;
    const d0 = line.charCodeAt(st) - 48;
    const d1 = line.charCodeAt(st + 1) - 48;
    const d2 = line.charCodeAt(st + 2) - 48;
    if (d0 < 0 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return false;
    const bEnd = line.indexOf(' ', st + 4);
    if (bEnd < 0 || !isToken(line, st + 4, bEnd) || line.charCodeAt(bEnd + 1) !== 34) return false;
    const rEnd = line.indexOf('"', bEnd + 2);
    if (rEnd < 0 || line.charCodeAt(rEnd + 1) !== 32 || line.charCodeAt(rEnd + 2) !== 34) return false;
    const uEnd = line.indexOf('"', rEnd + 3);
    if (uEnd < 0) return false;
    const esc = line.indexOf('\\', bEnd);
    if (esc !== -1 && esc < uEnd) return false;
    const ts = this.clock.at(line, s3 + 2, tEnd);
    if (ts === null) return false; // the regex gives the same verdict
    out.ts = ts;
    out.ip = line.slice(0, s1);
    out.method = m - rq === 3 && line.charCodeAt(rq) === 71 && line.charCodeAt(rq + 1) === 69 && line.charCodeAt(rq + 2) === 84 ? 'GET' : line.slice(rq, m);
    out.path = line.slice(m + 1, pEnd);
    out.status = d0 * 100 + d1 * 10 + d2;
    out.referrer = rEnd === bEnd + 2 || (rEnd === bEnd + 3 && line.charCodeAt(bEnd + 2) === 45) ? null : line.slice(bEnd + 2, rEnd);
    out.userAgent = line.slice(rEnd + 3, uEnd);
    out.accept = null;
    return true;
  }

  private match(line: string, out: LogRecord): boolean {
    const m = COMBINED.exec(line);
    if (!m) return false;
    const ts = this.clock.at(m[2], 0, m[2].length);
    if (ts === null) return false;
    out.ts = ts;
    out.ip = m[1];
    out.method = m[3];
    out.path = m[4];
    out.status = Number(m[5]);
    out.userAgent = m[7] ?? '';
    out.referrer = m[6] === undefined || m[6] === '-' || m[6] === '' ? null : m[6];
    out.accept = null;
    return true;
  }

  /** The regex alone (tests compare the scanner with it). */
  matchOnly(line: string): LogRecord | null {
    const out = emptyRecord();
    return this.match(line, out) ? out : null;
  }
}

const sharedParser = new CombinedParser();

export function parseCombined(line: string): LogRecord | null {
  const out = emptyRecord();
  return sharedParser.parse(line, out) ? out : null;
}

/** Field names tried, in order, for each value of a JSON log line; `--map name=field.path` puts a field first. */
export const DEFAULT_FIELDS: Record<string, string[]> = {
  time: ['time', 'timestamp', '@timestamp', 'ts', 'time_local', 'time_iso8601', 'date'],
  ip: ['ip', 'remote_addr', 'client_ip', 'clientIp', 'remoteAddr', 'remote_ip'],
  method: ['method', 'request_method', 'http_method', 'verb'],
  path: ['path', 'uri', 'request_uri', 'url', 'request_path'],
  request: ['request'],
  status: ['status', 'status_code', 'statusCode', 'response_status'],
  userAgent: ['user_agent', 'userAgent', 'http_user_agent', 'ua', 'agent'],
  referrer: ['referrer', 'referer', 'http_referer', 'http_referrer'],
  accept: ['accept', 'http_accept'],
};

/** A field of the line's own object (never one inherited from Object.prototype, whatever a map names). */
function lookup(obj: Record<string, unknown>, field: string): unknown {
  if (Object.hasOwn(obj, field)) return obj[field];
  let cur: unknown = obj;
  for (const part of field.split('.')) {
    if (cur === null || typeof cur !== 'object' || !Object.hasOwn(cur, part)) return undefined;
    cur = (cur as Record<string, unknown>)[part];
  }
  return cur;
}

function first(obj: Record<string, unknown>, names: string[]): unknown {
  for (const n of names) {
    const v = lookup(obj, n);
    if (v !== undefined && v !== null && v !== '') return v;
  }
  return undefined;
}

function timeValue(v: unknown): number | null {
  if (typeof v === 'number' && Number.isFinite(v)) return v > 1e11 ? Math.round(v) : Math.round(v * 1000);
  if (typeof v !== 'string') return null;
  if (/^\d+(\.\d+)?$/.test(v)) return timeValue(Number(v));
  const iso = parseInstant(v);
  if (iso !== null) return iso;
  // An ISO-looking time that parseInstant refused is impossible (Date.parse would roll 02-30 into March).
  if (/^\d{4}-\d{2}-\d{2}/.test(v)) return null;
  return parseClfTime(v) ?? (Number.isFinite(Date.parse(v)) ? Date.parse(v) : null);
}

export function parseJsonLine(line: string, fields: Record<string, string[]> = DEFAULT_FIELDS): LogRecord | null {
  let obj: unknown;
  try {
    obj = JSON.parse(line);
  } catch {
    return null;
  }
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) return null;
  const o = obj as Record<string, unknown>;
  const time = first(o, fields.time);
  if (time === undefined) return null;
  // A time that is there but unreadable is the record's fault, not the format's: NaN, rejected as invalid_timestamp.
  const ts = timeValue(time) ?? NaN;
  let method = first(o, fields.method);
  let path = first(o, fields.path);
  const request = first(o, fields.request);
  if (typeof request === 'string') {
    const m = /^([A-Z]+) (\S+)/.exec(request);
    if (m) {
      method ??= m[1];
      path ??= m[2];
    }
  }
  if (typeof path === 'string' && /^https?:\/\//.test(path)) {
    try {
      path = new URL(path).pathname;
    } catch {
      return null;
    }
  }
  const status = Number(first(o, fields.status) ?? 200);
  const ip = first(o, fields.ip);
  const ua = first(o, fields.userAgent);
  const ref = first(o, fields.referrer);
  const accept = first(o, fields.accept);
  if (typeof path !== 'string' || !Number.isInteger(status)) return null;
  return {
    ts,
    ip: typeof ip === 'string' ? ip : '',
    method: typeof method === 'string' ? method.toUpperCase() : 'GET',
    path,
    status,
    userAgent: typeof ua === 'string' ? ua : '',
    referrer: typeof ref === 'string' && ref !== '-' ? ref : null,
    accept: typeof accept === 'string' ? accept : null,
  };
}

const DOC_EXT = new Set(['html', 'htm', 'md', 'mdx']);

/** A page, not an asset: no file extension, .html/.md/.mdx, or llms.txt / llms-full.txt. */
export function isDocumentPath(path: string): boolean {
  const last = path.slice(path.lastIndexOf('/') + 1);
  if (/^llms(-full)?\.txt$/i.test(last)) return true;
  const dot = last.lastIndexOf('.');
  if (dot <= 0) return true;
  return DOC_EXT.has(last.slice(dot + 1).toLowerCase());
}

export function isSuccess(status: number): boolean {
  return (status >= 200 && status < 300) || status === 304;
}

/**
 * The 64-bit content key of `s` (two independent 32-bit FNV-1a style hashes) into key[0] (high half)
 * and key[1] (low half). Stored keys of earlier imports depend on it: never change it.
 */
export function contentKeyInto(s: string, key: Int32Array): void {
  let h1 = 0x811c9dc5;
  let h2 = 0x9747b28c;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995);
    h2 ^= h2 >>> 15;
  }
  h1 ^= h1 >>> 13;
  h1 = Math.imul(h1, 0xc2b2ae35);
  h1 ^= h1 >>> 16;
  key[0] = h1;
  key[1] = h2;
}

const hex8 = (n: number) => (n >>> 0).toString(16).padStart(8, '0');

/** The content key as 16 hex digits (the bulk endpoint's `k`). */
export function contentKey(s: string): string {
  const key = new Int32Array(2);
  contentKeyInto(s, key);
  return hex8(key[0]) + hex8(key[1]);
}

/**
 * Counts identical lines (equal content keys) within one second: the first is occurrence 1, the next 2, …
 * Keys are looked up by their high half (a small-integer map key: no allocation per line), with a
 * chain of entries per high half (newest first), so the count is exact. Entries of earlier seconds
 * (index below `start`) no longer count; the tables are emptied only when they grow large, not every
 * second (most seconds of a docs site's log hold a line or two).
 */
export class Repeats {
  private second = -1;
  private start = 0;
  private readonly byHigh = new Map<number, number>();
  private readonly low: number[] = [];
  private readonly count: number[] = [];
  private readonly next: number[] = [];

  occurrence(ts: number, hi: number, lo: number): number {
    if (ts !== this.second) {
      this.second = ts;
      if (this.low.length >= 4096) {
        this.byHigh.clear();
        this.low.length = this.count.length = this.next.length = 0;
      }
      this.start = this.low.length;
    }
    const first = this.byHigh.get(hi) ?? -1;
    for (let j = first; j >= this.start; j = this.next[j]) if (this.low[j] === lo) return ++this.count[j];
    this.byHigh.set(hi, this.low.length);
    this.low.push(lo);
    this.count.push(1);
    this.next.push(first);
    return 1;
  }
}

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
  /** The last accepted line's content key: [high, low]. */
  readonly key = new Int32Array(2);
  private readonly combined = new CombinedParser();
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
    let i = 0;
    while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (i === line.length) {
      this.skipped.empty++;
      return false;
    }
    const rec = this.rec;
    const json = this.format === 'json' || (this.format === 'auto' && line.charCodeAt(i) === 123);
    let ok: boolean;
    if (json) {
      const r = parseJsonLine(line, this.fields);
      if (r) Object.assign(rec, r);
      ok = r !== null;
    } else {
      ok = this.combined.parse(line, rec);
    }
    if (!ok) {
      this.skipped.unparseable++;
      return false;
    }
    if (rec.method !== 'GET' && rec.method !== 'HEAD') {
      this.skipped.method++;
      return false;
    }
    if (!isSuccess(rec.status)) {
      this.skipped.status++;
      return false;
    }
    rec.path = normalizePath(rec.path);
    if (!isDocumentPath(rec.path)) {
      this.skipped.asset++;
      return false;
    }
    if (Number.isNaN(rec.ts)) {
      this.reject(new Rejected('invalid_timestamp', 'The time of the line is not ISO 8601, CLF or milliseconds since 1970.'));
      return false;
    }
    const key = this.key;
    contentKeyInto(line, key);
    const n = this.repeats.occurrence(rec.ts, key[0], key[1]);
    if (n > 1) contentKeyInto(`${line}\n#${n}`, key);
    return true;
  }

  /** The line as a record of the bulk endpoint, or null when skipped. */
  convert(line: string): ImportRecord | null {
    if (!this.next(line)) return null;
    const rec = this.rec;
    const out: ImportRecord = { t: rec.ts, p: rec.path, ua: rec.userAgent, k: hex8(this.key[0]) + hex8(this.key[1]) };
    if (rec.ip) out.ip = rec.ip;
    if (rec.referrer) out.r = rec.referrer;
    if (rec.accept) out.a = rec.accept;
    return out;
  }
}

/**
 * Lines of a byte stream, with backpressure: the stream is read only as fast as the consumer takes
 * lines (readline's async iterator buffers the whole input while the consumer awaits).
 */
export class LineTooLongError extends CodedError {
  constructor(maxLine: number) {
    super('line_too_long', `A line is longer than ${maxLine} characters.`);
  }
}

/**
 * The lines of each chunk of a byte stream, as one array per chunk (one await per chunk instead of
 * one per line: per-line async iteration cost ~0.5 µs a line on both sides of a log import).
 */
export async function* readLineChunks(stream: AsyncIterable<Buffer | string>, maxLine = Infinity): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of stream) {
    if (rest.length > maxLine) throw new LineTooLongError(maxLine);
    const text = rest + (typeof chunk === 'string' ? chunk : decoder.write(chunk));
    const out: string[] = [];
    let start = 0;
    for (let nl = text.indexOf('\n'); nl !== -1; nl = text.indexOf('\n', start)) {
      const end = nl > start && text.charCodeAt(nl - 1) === 13 ? nl - 1 : nl;
      out.push(text.slice(start, end));
      start = nl + 1;
    }
    rest = text.slice(start);
    if (out.length > 0) yield out;
  }
  rest += decoder.end();
  if (rest.length > maxLine) throw new LineTooLongError(maxLine);
  if (rest !== '') yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}

export async function* readLines(stream: AsyncIterable<Buffer | string>, maxLine = Infinity): AsyncGenerator<string> {
  for await (const lines of readLineChunks(stream, maxLine)) yield* lines;
}

/** A clear sentence for an error reading a log file, or null for an unexpected one. */
export function logReadProblem(err: unknown, file: string): string | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `File not found: ${file}`;
  if (code === 'EACCES' || code === 'EPERM') return `Cannot read ${file}: permission denied.`;
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') return `${file} is not a valid gzip file.`;
  return null;
}

/** Opens a log file (`-` for stdin, `.gz` decompressed) as a byte stream; counts raw bytes read for progress. */
export function openLogBytes(file: string, onBytes: (n: number) => void): { stream: Readable; size: number | null } {
  const raw: Readable = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 1 << 20 });
  const size = file === '-' ? null : statSync(file).size;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      onBytes(chunk.length);
      cb(null, chunk);
    },
  });
  let stream: Readable = raw.pipe(counter);
  if (file.endsWith('.gz')) stream = stream.pipe(createGunzip());
  raw.on('error', (err) => stream.destroy(err));
  return { stream, size };
}
