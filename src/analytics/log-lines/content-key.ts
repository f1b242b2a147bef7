// Content keys of log lines: a hash of the line and its occurrence among identical lines of the same
// second, so importing a file twice (or overlapping files) records each view once.

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
