// Bounded memos for the analytics ingest hot path: two generations of plain Maps. A hit in the old
// generation moves to the young one; when the young one is full it becomes the old one (the old one is
// dropped), so values in use survive a turnover and memory stays bounded.
//
// Why not lru-cache (used for every other cache): an ingested event makes five to six memo lookups
// (path, user agent, IP, day, classification, visitor id) and lru-cache's bookkeeping per get cost
// about 2 µs of the events API's ~7 µs per event in a CPU profile; plain Map lookups cost a tenth of
// that (docs/benchmarks-analytics.md, "Events API: where the time went").

/** A bounded memo of `max` entries at most. */
export class Memo<K, V> {
  private young = new Map<K, V>();
  private old = new Map<K, V>();
  private readonly half: number;

  constructor(max: number) {
    this.half = Math.max(1, Math.floor(max / 2));
  }

  get(key: K): V | undefined {
    const v = this.young.get(key);
    if (v !== undefined) return v;
    const o = this.old.get(key);
    if (o !== undefined) this.set(key, o);
    return o;
  }

  set(key: K, value: V): void {
    if (this.young.size >= this.half) {
      this.old = this.young;
      this.young = new Map();
    }
    this.young.set(key, value);
  }

  /** Entries held (a promoted entry may be counted twice: an upper bound). */
  get size(): number {
    return this.young.size + this.old.size;
  }

  clear(): void {
    this.young.clear();
    this.old.clear();
  }
}

/**
 * A bounded memo keyed by a pair, as nested Maps: no key string is built per lookup (a visitor id is
 * looked up by user agent, then IP, for every event).
 */
export class PairMemo<A, B, V> {
  private young = new Map<A, Map<B, V>>();
  private old = new Map<A, Map<B, V>>();
  private youngSize = 0;
  private readonly half: number;
  private readonly halfOuter: number;

  /**
   * `max` pairs at most; `maxOuter` distinct first keys at most (each holds an inner Map, and a first
   * key such as a user agent can be long: hostile traffic with a new one per pair is bounded too).
   */
  constructor(max: number, maxOuter = max) {
    this.half = Math.max(1, Math.floor(max / 2));
    this.halfOuter = Math.max(1, Math.floor(maxOuter / 2));
  }

  get(a: A, b: B): V | undefined {
    const v = this.young.get(a)?.get(b);
    if (v !== undefined) return v;
    const o = this.old.get(a)?.get(b);
    if (o !== undefined) this.set(a, b, o);
    return o;
  }

  set(a: A, b: B, value: V): void {
    let inner = this.young.get(a);
    if (this.youngSize >= this.half || (inner === undefined && this.young.size >= this.halfOuter)) {
      this.old = this.young;
      this.young = new Map();
      this.youngSize = 0;
      inner = undefined;
    }
    if (inner === undefined) this.young.set(a, (inner = new Map()));
    const before = inner.size;
    inner.set(b, value);
    this.youngSize += inner.size - before;
  }

  /** Distinct first keys held (an upper bound, as `size`). */
  get outerSize(): number {
    return this.young.size + this.old.size;
  }

  /** Pairs held (a promoted pair may be counted twice: an upper bound). */
  get size(): number {
    let old = 0;
    for (const inner of this.old.values()) old += inner.size;
    return this.youngSize + old;
  }
}
