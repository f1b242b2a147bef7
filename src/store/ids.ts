// Opaque, URL-safe ids that sort by creation time: a prefix and a monotonic ULID.
import { getRandomValues } from 'node:crypto';
import { monotonicFactory } from 'ulid';

// ulid's own source of randomness asks crypto for one byte per character (16 calls for an id's random
// part, ~4% of a POST job's CPU); the same crypto bytes taken from a pool refilled 4 KiB at a time.
const pool = new Uint8Array(4096);
let used = pool.length;
function randomFraction(): number {
  if (used === pool.length) {
    getRandomValues(pool);
    used = 0;
  }
  return pool[used++] / 256;
}

const next = monotonicFactory(randomFraction);

export function newId(prefix: 'job' | 'prj' | 'key' | 'usr' | 'ses' | 'whd' | 'trg' | 'rpl'): string {
  return `${prefix}_${next().toLowerCase()}`;
}
