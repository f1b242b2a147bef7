// Access-log import: nginx/Apache combined logs and JSON lines. Only successful GET/HEAD requests for
// documents (not assets) become page views. Every line gets a content key (hash of the line and its
// occurrence among identical lines of the same second), so importing a file twice changes nothing.
import { createReadStream, statSync } from 'node:fs';
import { isIP } from 'node:net';
import { createGunzip } from 'node:zlib';
import { StringDecoder } from 'node:string_decoder';
import { Transform, type Readable } from 'node:stream';
import { classify } from './classify.ts';
import { CLS, SOURCE } from './engine.ts';
import { normalizePath, type VisitorIds } from './identity.ts';
import { parseInstant } from './dates.ts';
import { MAX_FUTURE_MS } from './ingest.ts';
import type { PendingEvent } from './writer.ts';

export type LogFormat = 'combined' | 'json' | 'auto';

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

/** parseClfTime with the minute cached: consecutive log lines share it, only the seconds differ. */
let clfMinuteKey = '';
let clfMinuteMs: number | null = null;
function clfTimeCached(s: string): number | null {
  // dd/Mon/yyyy:hh:mm:ss ±hhmm — the minute is s[0..17), the seconds s[18..20), the zone after.
  if (s.length !== 26 || s.charCodeAt(17) !== 58 || s.charCodeAt(20) !== 32) return parseClfTime(s);
  const key = s.slice(0, 17) + s.slice(20);
  if (key !== clfMinuteKey) {
    clfMinuteKey = key;
    clfMinuteMs = parseClfTime(s.slice(0, 17) + ':00' + s.slice(20));
  }
  const sec = (s.charCodeAt(18) - 48) * 10 + (s.charCodeAt(19) - 48);
  if (clfMinuteMs === null || sec < 0 || sec > 59) return null;
  return clfMinuteMs + sec * 1000;
}

const COMBINED = /^(\S+) \S+ \S+ \[([^\]]+)\] "([A-Z]+) (\S+)(?: [^"]*)?" (\d{3}) \S+(?: "((?:[^"\\]|\\.)*)" "((?:[^"\\]|\\.)*)")?/;

export function parseCombined(line: string): LogRecord | null {
  const m = COMBINED.exec(line);
  if (!m) return null;
  const ts = clfTimeCached(m[2]);
  if (ts === null) return null;
  const ref = m[6] === undefined || m[6] === '-' || m[6] === '' ? null : m[6];
  return { ts, ip: m[1], method: m[3], path: m[4], status: Number(m[5]), userAgent: m[7] ?? '', referrer: ref, accept: null };
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

function lookup(obj: Record<string, unknown>, field: string): unknown {
  if (field in obj) return obj[field];
  let cur: unknown = obj;
  for (const part of field.split('.')) {
    if (cur === null || typeof cur !== 'object') return undefined;
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
  return parseInstant(v) ?? parseClfTime(v) ?? (Number.isFinite(Date.parse(v)) ? Date.parse(v) : null);
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
  const ts = timeValue(first(o, fields.time));
  if (ts === null) return null;
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

/** 64-bit content key as 16 hex digits (two independent 32-bit FNV-1a style hashes). */
export function contentKey(s: string): string {
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
  return (h1 >>> 0).toString(16).padStart(8, '0') + (h2 >>> 0).toString(16).padStart(8, '0');
}

/** Turns log lines into import records, counting skips by reason. Stateful: identical lines in the same second get distinct keys. */
export class LineConverter {
  readonly format: LogFormat;
  readonly fields: Record<string, string[]>;
  readonly skipped: Record<SkipReason, number> = { unparseable: 0, method: 0, status: 0, asset: 0, empty: 0 };
  lines = 0;
  private seenTs = -1;
  private seen = new Map<string, number>();

  constructor(format: LogFormat = 'auto', fields: Record<string, string[]> = DEFAULT_FIELDS) {
    this.format = format;
    this.fields = fields;
  }

  convert(line: string): ImportRecord | null {
    this.lines++;
    let i = 0;
    while (i < line.length && (line.charCodeAt(i) === 32 || line.charCodeAt(i) === 9)) i++;
    if (i === line.length) {
      this.skipped.empty++;
      return null;
    }
    const json = this.format === 'json' || (this.format === 'auto' && line.charCodeAt(i) === 123);
    const rec = json ? parseJsonLine(line, this.fields) : parseCombined(line);
    if (!rec || !rec.path.startsWith('/')) {
      this.skipped.unparseable++;
      return null;
    }
    if (rec.method !== 'GET' && rec.method !== 'HEAD') {
      this.skipped.method++;
      return null;
    }
    if (!isSuccess(rec.status)) {
      this.skipped.status++;
      return null;
    }
    const path = normalizePath(rec.path);
    if (!isDocumentPath(path)) {
      this.skipped.asset++;
      return null;
    }
    if (rec.ts !== this.seenTs) {
      this.seenTs = rec.ts;
      this.seen.clear();
    }
    const key = contentKey(line);
    const n = (this.seen.get(key) ?? 0) + 1;
    this.seen.set(key, n);
    const out: ImportRecord = { t: rec.ts, p: path, ua: rec.userAgent, k: n === 1 ? key : contentKey(`${line}\n#${n}`) };
    if (rec.ip) out.ip = rec.ip;
    if (rec.referrer) out.r = rec.referrer;
    if (rec.accept) out.a = rec.accept;
    return out;
  }
}

export class RecordRejected extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

/** Server side of the bulk endpoint: validates one import record and classifies it. */
export function prepareImportRecord(raw: unknown, projectId: string, ids: VisitorIds, now: number): PendingEvent {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new RecordRejected('invalid_event', 'The line must be a JSON object.');
  const r = raw as Record<string, unknown>;
  if (typeof r.t !== 'number' || !Number.isSafeInteger(r.t) || r.t < 0) throw new RecordRejected('invalid_timestamp', '"t" must be milliseconds since 1970.');
  if (r.t > now + MAX_FUTURE_MS) throw new RecordRejected('future_timestamp', 'The timestamp is more than 5 minutes in the future.');
  if (typeof r.p !== 'string' || !r.p.startsWith('/') || r.p.length > 2048) throw new RecordRejected('invalid_path', '"p" must be a path starting with "/" (at most 2,048 characters).');
  if (typeof r.ua !== 'string' || r.ua.length > 1024) throw new RecordRejected('invalid_user_agent', '"ua" must be a string of at most 1,024 characters.');
  if (r.ip !== undefined && (typeof r.ip !== 'string' || isIP(r.ip) === 0)) throw new RecordRejected('invalid_ip', '"ip" must be an IPv4 or IPv6 address.');
  if (r.v !== undefined && (typeof r.v !== 'string' || r.v.length === 0 || r.v.length > 256)) throw new RecordRejected('invalid_visitor_id', '"v" must be a non-empty string.');
  if (r.ip === undefined && r.v === undefined) throw new RecordRejected('missing_identity', 'Send "ip" or "v" so the visitor can be counted.');
  if (r.k !== undefined && (typeof r.k !== 'string' || !/^[0-9a-f]{16}$/.test(r.k))) throw new RecordRejected('invalid_key', '"k" must be 16 lowercase hex digits.');
  for (const f of ['r', 'a'] as const) {
    if (r[f] !== undefined && (typeof r[f] !== 'string' || (r[f] as string).length > 2048)) throw new RecordRejected('invalid_field', `"${f}" must be a string.`);
  }
  const path = normalizePath(r.p);
  const c = classify(r.ua, path, r.a as string | undefined);
  return {
    projectId,
    ts: r.t,
    path,
    visitor: r.v !== undefined ? ids.fromGiven(r.v as string) : ids.fromIpAndAgent(r.ip as string, r.ua),
    cls: CLS[c.class],
    agent: c.agent,
    referrer: (r.r as string | undefined) ?? null,
    source: SOURCE.import,
    importKey: r.k === undefined ? null : BigInt.asIntN(64, BigInt('0x' + (r.k as string))),
  };
}

/**
 * Lines of a byte stream, with backpressure: the stream is read only as fast as the consumer takes
 * lines (readline's async iterator buffers the whole input while the consumer awaits).
 */
export class LineTooLongError extends Error {}

/**
 * The lines of each chunk of a byte stream, as one array per chunk (one await per chunk instead of
 * one per line: per-line async iteration cost ~0.5 µs a line on both sides of a log import).
 */
export async function* readLineChunks(stream: AsyncIterable<Buffer | string>, maxLine = Infinity): AsyncGenerator<string[]> {
  const decoder = new StringDecoder('utf8');
  let rest = '';
  for await (const chunk of stream) {
    if (rest.length > maxLine) throw new LineTooLongError(`A line is longer than ${maxLine} characters.`);
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
  if (rest.length > maxLine) throw new LineTooLongError(`A line is longer than ${maxLine} characters.`);
  if (rest !== '') yield [rest.endsWith('\r') ? rest.slice(0, -1) : rest];
}

export async function* readLines(stream: AsyncIterable<Buffer | string>, maxLine = Infinity): AsyncGenerator<string> {
  for await (const lines of readLineChunks(stream, maxLine)) yield* lines;
}

/** Opens a log file (`-` for stdin, `.gz` decompressed), as arrays of lines; counts raw bytes read for progress. */
export function openLog(file: string, onBytes: (n: number) => void): { lines: AsyncIterable<string[]>; size: number | null } {
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
  return { lines: readLineChunks(stream), size };
}
