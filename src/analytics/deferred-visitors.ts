// Visitor ids of a direct import's new identities are computed on the writing thread, not in the
// import worker: the HMAC (~4 µs) is the largest cost per new (IP, user agent) pair, the worker is the
// busier thread, and the writing thread mostly waits on DuckDB. The worker puts a placeholder (a
// negative number: real ids are 63-bit non-negative) in the visitor column and in its cache; the
// writing thread hashes the batch's new identities, replaces the placeholders and sends the ids back,
// and the worker then puts them into its cache.
import type { VisitorIds } from './identity.ts';

/** A batch's new identities, in order: reference `first + i` is (ips[i], uaNames[ua[i]]). */
export interface NewIdentities {
  first: number;
  ips: string[];
  ua: number[];
  uaNames: string[];
}

const placeholder = (ref: number): bigint => -BigInt(ref) - 1n;

/** The worker's side: hands out placeholders and settles them when the ids come back. */
export class DeferredVisitors {
  private next = 0;
  private batch: NewIdentities = { first: 0, ips: [], ua: [], uaNames: [] };
  private uaIndex = new Map<string, number>();
  private readonly waiting = new Map<number, (id: bigint) => void>();

  /** A placeholder for the id of (ip, userAgent); `settle` gets the real id once it is computed. */
  defer(ip: string, userAgent: string, settle: (id: bigint) => void): bigint {
    const ref = this.next++;
    let u = this.uaIndex.get(userAgent);
    if (u === undefined) this.uaIndex.set(userAgent, (u = this.batch.uaNames.push(userAgent) - 1));
    this.batch.ips.push(ip);
    this.batch.ua.push(u);
    this.waiting.set(ref, settle);
    return placeholder(ref);
  }

  /** The new identities since the last take (they go with the batch being sent). */
  take(): NewIdentities {
    const out = this.batch;
    this.batch = { first: this.next, ips: [], ua: [], uaNames: [] };
    this.uaIndex = new Map();
    return out;
  }

  /** The ids of references first, first + 1, … */
  settle(first: number, ids: BigInt64Array): void {
    for (let i = 0; i < ids.length; i++) {
      const settle = this.waiting.get(first + i);
      if (settle === undefined) continue;
      this.waiting.delete(first + i);
      settle(ids[i]);
    }
  }
}

/** The writing thread's side: computes the ids and fills in the placeholders of each batch. */
export class VisitorResolver {
  private readonly ids: VisitorIds;
  /** Ids of recent references, by reference modulo the size; `refs` says which reference a slot holds. */
  private readonly ring: BigInt64Array;
  private readonly refs: Float64Array;

  /** `window`: how many references back a batch may still use (the worker settles them within a few batches). */
  constructor(ids: VisitorIds, window: number) {
    this.ids = ids;
    this.ring = new BigInt64Array(window);
    this.refs = new Float64Array(window).fill(-1);
  }

  /** Computes the batch's new ids, replaces the placeholders in visitor[0, n) and returns the new ids. */
  resolve(batch: NewIdentities, visitor: BigInt64Array, n: number): BigInt64Array {
    const fresh = new BigInt64Array(batch.ips.length);
    for (let i = 0; i < fresh.length; i++) {
      const id = this.ids.hashIpAndAgent(batch.ips[i], batch.uaNames[batch.ua[i]]);
      fresh[i] = id;
      const ref = batch.first + i;
      this.ring[ref % this.ring.length] = id;
      this.refs[ref % this.ring.length] = ref;
    }
    for (let i = 0; i < n; i++) {
      const v = visitor[i];
      if (v >= 0n) continue;
      const ref = Number(-v - 1n);
      const slot = ref % this.ring.length;
      if (this.refs[slot] !== ref) throw new Error(`Visitor reference ${ref} is no longer known (import window too small).`);
      visitor[i] = this.ring[slot];
    }
    return fresh;
  }
}
