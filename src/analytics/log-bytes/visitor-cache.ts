// Visitor ids of the byte reader's lines, cached per user agent by IPv4 address as a number (no key
// string per line). A new identity is hashed here, or given a placeholder that the writing thread
// hashes (deferred-visitors.ts).
import type { DeferredVisitors } from '../deferred-visitors.ts';
import type { VisitorIds } from '../identity.ts';

/** A user agent seen in the log, with its cached visitor ids. */
export interface UserAgent {
  bytes: Uint8Array;
  ua: string;
  /** Visitor ids by IPv4 address (as a signed 32-bit number: a small-integer map key), this generation and the one before. */
  visitors: Map<number, bigint>;
  oldVisitors: Map<number, bigint> | null;
  generation: number;
}

/** Ids kept per generation: when one holds this many the next starts (as in VisitorIds). */
const MAX_VISITORS = 400_000;

export class AgentVisitorCache {
  private readonly ids: VisitorIds;
  private readonly deferred: DeferredVisitors | null;
  private generation = 0;
  private generationSize = 0;

  constructor(ids: VisitorIds, deferred: DeferredVisitors | null) {
    this.ids = ids;
    this.deferred = deferred;
  }

  /** A new user agent entry, with no visitors yet. */
  entry(bytes: Uint8Array, ua: string): UserAgent {
    return { bytes, ua, visitors: new Map(), oldVisitors: null, generation: this.generation };
  }

  /** The visitor id of (IPv4 `ip4`, user agent `ua`): cached, deferred to the writing thread, or hashed. */
  visitorOf(ua: UserAgent, ip4: number, ip: string): bigint {
    const cached = this.cached(ua, ip4);
    if (cached !== undefined) return cached;
    if (this.deferred) {
      const ref: bigint = this.deferred.defer(ip, ua.ua, (id) => this.settle(ua, ip4, ref, id));
      return this.remember(ua, ip4, ref);
    }
    return this.remember(ua, ip4, this.ids.hashIpAndAgent(ip, ua.ua));
  }

  private cached(ua: UserAgent, ip4: number): bigint | undefined {
    this.turn(ua);
    const v = ua.visitors.get(ip4);
    if (v !== undefined) return v;
    const old = ua.oldVisitors?.get(ip4);
    return old === undefined ? undefined : this.remember(ua, ip4, old);
  }

  private remember(ua: UserAgent, ip4: number, v: bigint): bigint {
    if (this.generationSize >= MAX_VISITORS) {
      this.generation++;
      this.generationSize = 0;
      this.turn(ua);
    }
    ua.visitors.set(ip4, v);
    this.generationSize++;
    return v;
  }

  /** The real id for a placeholder still in the cache. */
  private settle(ua: UserAgent, ip4: number, ref: bigint, id: bigint): void {
    if (ua.visitors.get(ip4) === ref) ua.visitors.set(ip4, id);
    else if (ua.oldVisitors?.get(ip4) === ref) ua.oldVisitors.set(ip4, id);
  }

  /** Brings a user agent's cache to the current generation (lazily: only user agents in use). */
  private turn(ua: UserAgent): void {
    if (ua.generation === this.generation) return;
    ua.oldVisitors = ua.generation === this.generation - 1 ? ua.visitors : null;
    ua.visitors = new Map();
    ua.generation = this.generation;
  }
}
