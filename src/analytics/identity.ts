// Visitor identity and path normalisation. Only keyed hashes are stored, never raw IPs.
import { createHmac } from 'node:crypto';

/** A 63-bit keyed visitor id (HMAC-SHA256 with the server secret, first 8 bytes, top bit cleared). */
export type VisitorId = bigint;

function hmac64(secret: string, data: string): bigint {
  const d = createHmac('sha256', secret).update(data).digest();
  return d.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
}

export class VisitorIds {
  private readonly secret: string;
  private readonly cache = new Map<string, bigint>();
  private static readonly CACHE_MAX = 100_000;

  constructor(secret: string) {
    this.secret = secret;
  }

  private cached(key: string): bigint {
    let v = this.cache.get(key);
    if (v === undefined) {
      v = hmac64(this.secret, key);
      if (this.cache.size >= VisitorIds.CACHE_MAX) this.cache.clear();
      this.cache.set(key, v);
    }
    return v;
  }

  /** Server-side events and log lines: keyed hash of IP + user agent. */
  fromIpAndAgent(ip: string, userAgent: string): bigint {
    return this.cached(`ip\u0000${ip}\u0000${userAgent}`);
  }

  /** A caller-given visitor id (server events) or the browser script's first-party id. */
  fromGiven(visitorId: string): bigint {
    return this.cached(`id\u0000${visitorId}`);
  }

  /** Browser without storage: hash of IP + user agent salted with the UTC day, so it cannot be followed across days. */
  daily(ip: string, userAgent: string, at: number): bigint {
    const day = Math.floor(at / 86_400_000);
    return hmac64(this.secret, `day\u0000${day}\u0000${ip}\u0000${userAgent}`);
  }
}

/** Strips the query string and fragment; keeps the path otherwise exactly as sent. */
export function normalizePath(raw: string): string {
  let end = raw.length;
  const q = raw.indexOf('?');
  if (q !== -1) end = q;
  const h = raw.indexOf('#');
  if (h !== -1 && h < end) end = h;
  return end === raw.length ? raw : raw.slice(0, end);
}

/** A path from a full URL or a path; null when it is neither. */
export function pathFromUrlOrPath(raw: string): string | null {
  if (raw.startsWith('/')) return normalizePath(raw);
  try {
    const u = new URL(raw);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return u.pathname;
  } catch {
    return null;
  }
}
