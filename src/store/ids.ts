// Opaque, URL-safe ids that sort by creation time: a prefix and a monotonic ULID.
import { monotonicFactory } from 'ulid';

const next = monotonicFactory();

export function newId(prefix: 'job' | 'prj' | 'key' | 'usr' | 'ses' | 'whd' | 'trg' | 'rpl'): string {
  return `${prefix}_${next().toLowerCase()}`;
}
