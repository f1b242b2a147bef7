// THE ingest pipeline: one function turns a raw page-view record into a stored event — validate →
// classify → visitor id — with one rejection type and one set of rules, for every way in: the events
// API, the browser's collect endpoint, the bulk import endpoint (NDJSON, and raw logs read by the
// direct import's reader) and the direct log import. Each way in only maps its wire names onto the
// record's fields (a `Wire`).
import { CodedError } from '../errors.ts';
import { isIP } from 'node:net';
import { Memo } from '../util/memo.ts';
import type { ClassificationRules } from './classify.ts';
import { parseInstant } from './dates.ts';
import { referrerHost, SOURCE } from './engine.ts';
import { CLASS_CODE } from './traffic-class.ts';
import { normalizePath } from './identity.ts';
import type { PendingEvent } from './writer.ts';

export const MAX_EVENTS_PER_REQUEST = 1000;
/** Timestamps further ahead than this are refused (clock skew allowance). */
export const MAX_FUTURE_MS = 5 * 60_000;
/** Longest values, in UTF-16 code units. The path limit applies after the query and fragment are removed. */
export const LIMITS = { path: 2048, userAgent: 1024, referrer: 2048, accept: 1024, visitorId: 256 } as const;
// No text field may hold a control character (U+0000–U+001F, U+007F): none is meaningful in a page
// view, and NUL cannot be stored by every engine. A path is held to more (PATH_REFUSED): it is shown
// to people and, as data, to the agent, where a line separator or a text-direction override would make
// it read as something else. Percent-encoded forms (%E2%80%AE) are plain text and stay as sent.

/** The one rejection: a stable code and one clear sentence naming the field as the caller sent it. */
export class Rejected extends CodedError {}

/** A rejected record of a batch: its index (or line) and the reason. */
export interface Rejection {
  index: number;
  code: string;
  error: string;
}

export type Field = 'timestamp' | 'path' | 'userAgent' | 'ip' | 'visitorId' | 'referrer' | 'accept' | 'key' | 'status';

/** How a way in names the record's fields on the wire (and which it accepts at all). */
export interface Wire {
  /** wire name → field */
  readonly fields: Readonly<Record<string, Field>>;
  /** field → wire name, for messages */
  readonly names: Readonly<Partial<Record<Field, string>>>;
  readonly source: number;
}

function wire(fields: Record<string, Field>, source: number, serverNames: Partial<Record<Field, string>> = {}): Wire {
  const names: Partial<Record<Field, string>> = { ...serverNames };
  for (const [w, f] of Object.entries(fields)) names[f] = w;
  return { fields, names, source };
}

/** `POST …/events`: `{timestamp?, path, userAgent, ip?, visitorId?, referrer?, accept?, status?}` (timestamp ISO 8601). */
export const EVENTS_WIRE = wire(
  { timestamp: 'timestamp', path: 'path', userAgent: 'userAgent', ip: 'ip', visitorId: 'visitorId', referrer: 'referrer', accept: 'accept', status: 'status' },
  SOURCE.api,
);
/** `POST …/import` NDJSON and log lines: `{t, p, ua, ip?, v?, r?, a?, k?, s?}` (t in ms, k the line's 16-hex content key, s the HTTP status). */
export const IMPORT_WIRE = wire({ t: 'timestamp', p: 'path', ua: 'userAgent', ip: 'ip', v: 'visitorId', r: 'referrer', a: 'accept', k: 'key', s: 'status' }, SOURCE.import);
/** `POST …/collect` from the browser script: `{path, referrer?, visitorId?, status?}`; user agent, Accept and IP come from the request. */
export const COLLECT_WIRE = wire({ path: 'path', referrer: 'referrer', visitorId: 'visitorId', status: 'status' }, SOURCE.script, {
  userAgent: 'User-Agent',
  accept: 'Accept',
  ip: 'client address',
});

/** Statuses that say the page is not there: such a view goes to the not-found report, not to the others. */
const NOT_FOUND_STATUSES = new Set([404, 410]);

/** An HTTP status of the view, when the way in knows it; true when it says "not found". */
function notFoundStatus(v: unknown, name: string): boolean {
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 100 || v > 599) {
    throw new Rejected('invalid_status', `"${name}" must be an HTTP status code, a whole number from 100 to 599.`);
  }
  return NOT_FOUND_STATUSES.has(v);
}

/** Fields the server supplies beside the wire's (collect: from the request's headers and socket). */
export interface ServerFields {
  userAgent?: string;
  ip?: string;
  accept?: string;
}

/** Visitor ids: keyed hashes (identity.ts VisitorIds), or a stand-in that defers them (the direct import). */
export interface Identities {
  fromIpAndAgent(ip: string, userAgent: string): bigint;
  fromGiven(visitorId: string): bigint;
  /** The browser without storage: salted with the UTC day of `at`. */
  daily(ip: string, userAgent: string, at: number): bigint;
}

const CONTROL = /[\u0000-\u001f\u007f]/;
/**
 * Refused in a path: C0 and C1 controls and DEL (U+0000–U+001F, U+007F–U+009F), the line and paragraph
 * separators (U+2028, U+2029), and the marks that change the direction text is shown in (U+061C,
 * U+200E, U+200F, U+202A–U+202E, U+2066–U+2069).
 */
const PATH_REFUSED = /[\u0000-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
const KEY = /^[0-9a-f]{16}$/;

/** Paths checked recently (logs and batches repeat a few thousand paths): raw → normalised path or a Rejected. */
const pathMemo = new Memo<string, string | Rejected>(20_000);
/** IP strings known to be valid addresses. */
const ipMemo = new Memo<string, true>(200_000);

function checkPath(raw: string, name: string): string {
  const hit = pathMemo.get(raw);
  if (hit !== undefined) {
    if (typeof hit === 'string') return hit;
    throw hit;
  }
  let out: string | Rejected;
  if (raw.charCodeAt(0) !== 47) out = new Rejected('invalid_path', `"${name}" must start with "/".`);
  else {
    const path = normalizePath(raw);
    if (path.length > LIMITS.path) out = new Rejected('field_too_long', `"${name}" is longer than ${LIMITS.path} characters (without its query string).`);
    else if (PATH_REFUSED.test(path)) out = new Rejected('invalid_path', `"${name}" must not contain control characters, line separators or text-direction marks.`);
    else out = path;
  }
  if (raw.length <= 4096) {
    pathMemo.set(raw, out);
  }
  if (typeof out === 'string') return out;
  throw out;
}

function checkIp(ip: unknown, name: string): string {
  if (typeof ip === 'string' && ip.length <= 64) {
    if (ipMemo.get(ip)) return ip;
    if (isIP(ip) !== 0) {
      ipMemo.set(ip, true);
      return ip;
    }
  }
  throw new Rejected('invalid_ip', `"${name}" must be an IPv4 or IPv6 address.`);
}

/** A string field within its limit; `controlCode`: the rejection when it holds a control character (checked unless null). */
function text(v: unknown, name: string, limit: number, controlCode: string | null = 'invalid_field'): string {
  if (typeof v !== 'string') throw new Rejected('invalid_field', `"${name}" must be a string.`);
  if (v.length > limit) throw new Rejected('field_too_long', `"${name}" is longer than ${limit} characters.`);
  if (controlCode !== null && CONTROL.test(v)) throw new Rejected(controlCode, `"${name}" must not contain control characters.`);
  return v;
}

/** Referrers seen recently → their hosts (a few sources send most readers). */
const referrerMemo = new Memo<string, string | null>(20_000);

function hostOfReferrer(referrer: string): string | null {
  let host = referrerMemo.get(referrer);
  if (host === undefined) referrerMemo.set(referrer, (host = referrerHost(referrer)));
  return host;
}

/** Days of canonical ISO times seen (`YYYY-MM-DD` → ms): batches, even out of order, share a few days. */
const dayMemo = new Memo<string, number>(4096);

const digit = (s: string, i: number) => {
  const d = s.charCodeAt(i) - 48;
  return d >= 0 && d <= 9 ? d : -1;
};
const two = (s: string, i: number) => {
  const a = digit(s, i);
  const b = digit(s, i + 1);
  return a < 0 || b < 0 ? -1 : a * 10 + b;
};

/** `YYYY-MM-DDTHH:MM:SS(.sss)?Z` (what toISOString writes) from the day cache, else parseInstant. */
function isoInstant(v: string): number | null {
  const len = v.length;
  if ((len === 24 || len === 20) && v.charCodeAt(len - 1) === 90 && v.charCodeAt(10) === 84 && v.charCodeAt(13) === 58 && v.charCodeAt(16) === 58) {
    const h = two(v, 11);
    const m = two(v, 14);
    const sec = two(v, 17);
    let ms = 0;
    let ok = h >= 0 && h <= 23 && m >= 0 && m <= 59 && sec >= 0 && sec <= 59;
    if (ok && len === 24) {
      const a = digit(v, 20);
      const b = digit(v, 21);
      const c = digit(v, 22);
      ok = v.charCodeAt(19) === 46 && a >= 0 && b >= 0 && c >= 0;
      ms = a * 100 + b * 10 + c;
    }
    if (ok) {
      const dayText = v.slice(0, 10);
      let day = dayMemo.get(dayText);
      if (day === undefined) {
        const at = parseInstant(dayText);
        if (at === null) return null;
        dayMemo.set(dayText, (day = at));
      }
      return day + h * 3_600_000 + m * 60_000 + sec * 1000 + ms;
    }
  }
  return parseInstant(v);
}

/** User agents checked recently: raw → the value or its Rejected. */
const uaMemo = new Memo<string, string | Rejected>(20_000);

function checkUserAgent(v: unknown, name: string): string {
  if (typeof v === 'string') {
    const hit = uaMemo.get(v);
    if (hit !== undefined) {
      if (typeof hit === 'string') return hit;
      throw hit;
    }
  }
  let out: string | Rejected;
  try {
    out = text(v, name, LIMITS.userAgent, 'invalid_user_agent');
    if (out.trim() === '') out = new Rejected('invalid_user_agent', `"${name}" must not be empty.`);
  } catch (err) {
    if (!(err instanceof Rejected)) throw err;
    out = err;
  }
  if (typeof v === 'string' && v.length <= LIMITS.userAgent * 2) {
    uaMemo.set(v, out);
  }
  if (typeof out === 'string') return out;
  throw out;
}

function timestampOf(v: unknown, name: string, now: number): number {
  let at: number | null;
  if (typeof v === 'string') {
    at = v.length <= 64 ? isoInstant(v) : null;
    if (at === null) throw new Rejected('invalid_timestamp', `"${name}" is not an ISO 8601 time: "${v.slice(0, 64)}".`);
  } else if (typeof v === 'number') {
    if (!Number.isSafeInteger(v)) throw new Rejected('invalid_timestamp', `"${name}" must be whole milliseconds since 1970.`);
    at = v;
  } else {
    throw new Rejected('invalid_timestamp', `"${name}" must be an ISO 8601 string or milliseconds since 1970.`);
  }
  if (at < 0) throw new Rejected('invalid_timestamp', `"${name}" is before 1970.`);
  if (at > now + MAX_FUTURE_MS) throw new Rejected('future_timestamp', `"${name}" is more than 5 minutes in the future.`);
  return at;
}

/** Fields of a record, read from its wire names (reused from record to record). */
interface Fields {
  timestamp: unknown;
  path: unknown;
  userAgent: unknown;
  ip: unknown;
  visitorId: unknown;
  referrer: unknown;
  accept: unknown;
  key: unknown;
  status: unknown;
}

const present = (v: unknown) => v !== undefined && v !== null;

/**
 * The record function: validates a raw record (an object in `wire`'s names), classifies it and
 * derives its visitor id. Throws Rejected, always for the first broken rule in this order: shape,
 * unknown field, path, user agent, IP, visitor id, identity, timestamp, referrer, Accept, key, status.
 * `now` is the time of arrival (the timestamp of a record without one); `rules` the lists in force.
 */
export function prepareRecord(raw: unknown, w: Wire, projectId: string, rules: ClassificationRules, ids: Identities, now: number, server?: ServerFields): PendingEvent {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new Rejected('invalid_event', 'The event must be a JSON object.');
  const f: Fields = { timestamp: undefined, path: undefined, userAgent: undefined, ip: undefined, visitorId: undefined, referrer: undefined, accept: undefined, key: undefined, status: undefined };
  const r = raw as Record<string, unknown>;
  for (const k in r) {
    const field = w.fields[k];
    if (field === undefined || !Object.hasOwn(w.fields, k)) {
      throw new Rejected('unknown_field', `Unknown field "${k.slice(0, 64)}"; allowed: ${Object.keys(w.fields).join(', ')}.`);
    }
    f[field] = r[k];
  }
  if (server) {
    if (server.userAgent !== undefined) f.userAgent = server.userAgent;
    if (server.ip !== undefined) f.ip = server.ip;
    if (server.accept !== undefined) f.accept = server.accept;
  }
  const n = w.names;
  if (!present(f.path)) throw new Rejected('missing_field', `"${n.path}" is required.`);
  const path = checkPath(text(f.path, n.path!, 1 << 20, null), n.path!);
  if (!present(f.userAgent)) throw new Rejected('missing_field', `"${n.userAgent}" is required.`);
  const userAgent = checkUserAgent(f.userAgent, n.userAgent!);
  const ip = present(f.ip) ? checkIp(f.ip, n.ip!) : undefined;
  let visitorId: string | undefined;
  if (present(f.visitorId)) {
    visitorId = text(f.visitorId, n.visitorId!, LIMITS.visitorId, 'invalid_visitor_id');
    if (visitorId.length === 0) throw new Rejected('invalid_visitor_id', `"${n.visitorId}" must not be empty.`);
  }
  if (visitorId === undefined && ip === undefined) throw new Rejected('missing_identity', `Send "${n.ip ?? 'ip'}" or "${n.visitorId}" so the visitor can be counted.`);
  const ts = present(f.timestamp) ? timestampOf(f.timestamp, n.timestamp!, now) : now;
  // Only the referrer's host is kept (no path or query string of another site).
  const referrer = present(f.referrer) ? hostOfReferrer(text(f.referrer, n.referrer!, LIMITS.referrer)) : null;
  const accept = present(f.accept) ? text(f.accept, n.accept!, LIMITS.accept) : undefined;
  let importKey: bigint | null = null;
  if (present(f.key)) {
    if (typeof f.key !== 'string' || !KEY.test(f.key)) throw new Rejected('invalid_key', `"${n.key}" must be 16 lowercase hex digits.`);
    importKey = BigInt.asIntN(64, BigInt('0x' + f.key));
  }
  const notFound = present(f.status) ? notFoundStatus(f.status, n.status!) : false;
  const c = rules.classify(userAgent, path, accept);
  let visitor: bigint;
  if (w.source === SOURCE.script) {
    // The browser script's own first-party id, or (no storage) a hash salted with the day.
    visitor = visitorId !== undefined ? ids.fromGiven(`browser:${visitorId}`) : ids.daily(ip!, userAgent, ts);
  } else {
    visitor = visitorId !== undefined ? ids.fromGiven(visitorId) : ids.fromIpAndAgent(ip!, userAgent);
  }
  // A not-found view also keeps the identity the server derives from the address (collect: the
  // request's; events and log lines: the given one), which a client-chosen visitorId cannot multiply.
  // (Without a given id on a server-side way in, that is the visitor id itself: no second lookup.)
  const derivedVisitor = !notFound || ip === undefined ? null : visitorId === undefined && w.source !== SOURCE.script ? visitor : ids.fromIpAndAgent(ip, userAgent);
  return { projectId, ts, path, visitor, cls: CLASS_CODE[c.class], agent: c.agent, referrer, source: w.source, importKey, notFound, derivedVisitor };
}

/** prepareRecord for a batch: good events and the rejections by index. */
export function prepareBatch(
  records: readonly unknown[],
  w: Wire,
  projectId: string,
  rules: ClassificationRules,
  ids: Identities,
  now: number,
  keyOf?: (index: number) => bigint,
): { good: PendingEvent[]; rejected: Rejection[] } {
  const good: PendingEvent[] = [];
  const rejected: Rejection[] = [];
  for (let i = 0; i < records.length; i++) {
    try {
      const e = prepareRecord(records[i], w, projectId, rules, ids, now);
      if (keyOf) e.importKey = keyOf(i);
      good.push(e);
    } catch (err) {
      if (!(err instanceof Rejected)) throw err;
      rejected.push({ index: i, code: err.code, error: err.message });
    }
  }
  return { good, rejected };
}
