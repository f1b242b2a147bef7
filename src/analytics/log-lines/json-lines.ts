// JSON-lines access logs: each value is looked up under the field names servers commonly use
// (or the operator's `--map name=field.path`), so most JSON log formats import without configuration.
import { parseInstant } from '../dates.ts';
import { parseClfTime } from './clf-time.ts';
import type { LogRecord } from './log-record.ts';

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
