// Visitor identity and path normalisation. Only keyed hashes are stored, never raw IPs.
import { createHmac } from 'node:crypto';

/** A 63-bit keyed visitor id (HMAC-SHA256 with the server secret, first 8 bytes, top bit cleared). */
export type VisitorId = bigint;

function hmac64(secret: string, data: string): bigint {
  const d = createHmac('sha256', secret).update(data).digest();
  return d.readBigUInt64BE(0) & 0x7fff_ffff_ffff_ffffn;
}

/**
 * A bounded two-generation cache: lookups try the current generation, then the previous one (a hit
 * there is copied forward); when the current one is full it becomes the previous one. Entries in use
 * survive a turnover, unlike a cache that is cleared when full.
 */
class Generations<V> {
  private cur = new Map<string, V>();
  private old = new Map<string, V>();
  private readonly max: number;
  constructor(max: number) {
    this.max = max;
  }
  get(key: string): V | undefined {
    const v = this.cur.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }
  set(key: string, v: V): void {
    if (this.cur.size >= this.max) {
      this.old = this.cur;
      this.cur = new Map();
    }
    this.cur.set(key, v);
  }
}

export class VisitorIds {
  private readonly secret: string;
  /** Visitor ids of caller-given ids. */
  private readonly given = new Generations<bigint>(100_000);
  /**
   * Visitor ids of (IP, user agent), by user agent then IP: logs repeat a few thousand user agents, so
   * the lookup hashes only the short IP string instead of a long concatenated key, and the HMAC
   * (~3.5 µs) runs once per identity while it stays cached.
   */
  private agents = new Map<string, Map<string, bigint>>();
  private oldAgents = new Map<string, Map<string, bigint>>();
  private agentEntries = 0;
  private readonly agentEntriesMax: number;

  /** `cacheEntries`: (IP, user agent) ids per cache generation (two generations are kept). */
  constructor(secret: string, opts: { cacheEntries?: number } = {}) {
    this.secret = secret;
    this.agentEntriesMax = opts.cacheEntries ?? 400_000;
  }

  /** Server-side events and log lines: keyed hash of IP + user agent. */
  fromIpAndAgent(ip: string, userAgent: string): bigint {
    return this.cachedIpAndAgent(ip, userAgent) ?? this.remember(ip, userAgent, this.hashIpAndAgent(ip, userAgent));
  }

  /** fromIpAndAgent without the cache (for callers that keep their own). */
  hashIpAndAgent(ip: string, userAgent: string): bigint {
    return hmac64(this.secret, `ip\u0000${ip}\u0000${userAgent}`);
  }

  /** The id of (IP, user agent) if it is cached (so the IP was seen and checked before), else undefined. */
  cachedIpAndAgent(ip: string, userAgent: string): bigint | undefined {
    const v = this.agents.get(userAgent)?.get(ip);
    if (v !== undefined) return v;
    const old = this.oldAgents.get(userAgent)?.get(ip);
    return old === undefined ? undefined : this.remember(ip, userAgent, old);
  }

  private remember(ip: string, userAgent: string, v: bigint): bigint {
    if (this.agentEntries >= this.agentEntriesMax) {
      this.oldAgents = this.agents;
      this.agents = new Map();
      this.agentEntries = 0;
    }
    let byIp = this.agents.get(userAgent);
    if (byIp === undefined) this.agents.set(userAgent, (byIp = new Map()));
    byIp.set(ip, v);
    this.agentEntries++;
    return v;
  }

  /** A caller-given visitor id (server events) or the browser script's first-party id. */
  fromGiven(visitorId: string): bigint {
    let v = this.given.get(visitorId);
    if (v === undefined) {
      v = hmac64(this.secret, `id\u0000${visitorId}`);
      this.given.set(visitorId, v);
    }
    return v;
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
