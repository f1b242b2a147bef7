// Validation of server-side events: each bad event is rejected with its index, a stable code and a
// clear reason; the good ones are kept.
import { isIP } from 'node:net';
import { classify } from './classify.ts';
import { parseInstant } from './dates.ts';
import { CLS, SOURCE } from './engine.ts';
import { normalizePath, type VisitorIds } from './identity.ts';
import type { PendingEvent } from './writer.ts';

export const MAX_EVENTS_PER_REQUEST = 1000;
export const MAX_FUTURE_MS = 5 * 60_000;
const LIMITS = { path: 2048, userAgent: 1024, referrer: 2048, accept: 1024, visitorId: 256 };
const FIELDS = new Set(['timestamp', 'path', 'userAgent', 'ip', 'visitorId', 'referrer', 'accept']);

export interface Rejection {
  index: number;
  code: string;
  error: string;
}

export interface RawEvent {
  timestamp?: string;
  path: string;
  userAgent: string;
  ip?: string;
  visitorId?: string;
  referrer?: string;
  accept?: string;
}

export class EventRejected extends Error {
  readonly code: string;
  constructor(code: string, message: string) {
    super(message);
    this.code = code;
  }
}

function str(e: Record<string, unknown>, field: keyof typeof LIMITS, required: boolean): string | undefined {
  const v = e[field];
  if (v === undefined || v === null) {
    if (required) throw new EventRejected('missing_field', `"${field}" is required.`);
    return undefined;
  }
  if (typeof v !== 'string') throw new EventRejected('invalid_field', `"${field}" must be a string.`);
  if (v.length > LIMITS[field]) throw new EventRejected('field_too_long', `"${field}" is longer than ${LIMITS[field]} characters.`);
  return v;
}

/** Validates one event of the events API and turns it into a stored event. Throws EventRejected. */
export function prepareApiEvent(raw: unknown, projectId: string, ids: VisitorIds, now: number): PendingEvent {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) throw new EventRejected('invalid_event', 'The event must be a JSON object.');
  const e = raw as Record<string, unknown>;
  for (const k of Object.keys(e)) {
    if (!FIELDS.has(k)) throw new EventRejected('unknown_field', `Unknown field "${k}"; allowed: ${[...FIELDS].join(', ')}.`);
  }
  const rawPath = str(e, 'path', true)!;
  if (!rawPath.startsWith('/')) throw new EventRejected('invalid_path', 'The path must start with "/".');
  if (/[\u0000-\u001f\u007f]/.test(rawPath)) throw new EventRejected('invalid_path', 'The path must not contain control characters.');
  const path = normalizePath(rawPath);
  const userAgent = str(e, 'userAgent', true)!;
  if (userAgent.trim() === '') throw new EventRejected('invalid_user_agent', 'The userAgent must not be empty.');
  const ipRaw = e.ip;
  if (ipRaw !== undefined && ipRaw !== null && (typeof ipRaw !== 'string' || isIP(ipRaw) === 0)) {
    throw new EventRejected('invalid_ip', 'The ip must be an IPv4 or IPv6 address.');
  }
  const visitorId = str(e, 'visitorId', false);
  if (visitorId !== undefined && visitorId.length === 0) throw new EventRejected('invalid_visitor_id', 'The visitorId must not be empty.');
  if (visitorId === undefined && (ipRaw === undefined || ipRaw === null)) {
    throw new EventRejected('missing_identity', 'Send "ip" or "visitorId" so the visitor can be counted.');
  }
  let ts = now;
  const t = e.timestamp;
  if (t !== undefined && t !== null) {
    if (typeof t !== 'string') throw new EventRejected('invalid_timestamp', 'The timestamp must be an ISO 8601 string.');
    const at = parseInstant(t);
    if (at === null) throw new EventRejected('invalid_timestamp', `The timestamp "${t.slice(0, 64)}" is not ISO 8601.`);
    if (at > now + MAX_FUTURE_MS) throw new EventRejected('future_timestamp', 'The timestamp is more than 5 minutes in the future.');
    if (at < 0) throw new EventRejected('invalid_timestamp', 'The timestamp is before 1970.');
    ts = at;
  }
  const referrer = str(e, 'referrer', false) ?? null;
  const accept = str(e, 'accept', false);
  const c = classify(userAgent, path, accept);
  return {
    projectId,
    ts,
    path,
    visitor: visitorId !== undefined ? ids.fromGiven(visitorId) : ids.fromIpAndAgent(ipRaw as string, userAgent),
    cls: CLS[c.class],
    agent: c.agent,
    referrer,
    source: SOURCE.api,
    importKey: null,
  };
}
