// Values read from byte ranges of a log (user agents, paths), found again by a hash of their bytes:
// a value seen before costs no new string.

/** 32-bit FNV-1a of b[s, e) (table lookups only; equality is always checked on the bytes). */
export function fnv(b: Uint8Array, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let i = s; i < e; i++) h = Math.imul(h ^ b[i], 0x01000193);
  return h;
}

function sameBytes(a: Uint8Array, b: Uint8Array, s: number, e: number): boolean {
  if (a.length !== e - s) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[s + i]) return false;
  return true;
}

/** Byte ranges → interned values, by hash with collision lists. */
export class Interned<V extends { bytes: Uint8Array }> {
  private readonly table = new Map<number, V | V[]>();
  size = 0;

  get(b: Uint8Array, s: number, e: number, h: number): V | undefined {
    const hit = this.table.get(h);
    if (hit === undefined) return undefined;
    if (!Array.isArray(hit)) return sameBytes(hit.bytes, b, s, e) ? hit : undefined;
    return hit.find((v) => sameBytes(v.bytes, b, s, e));
  }

  add(h: number, v: V): V {
    const hit = this.table.get(h);
    if (hit === undefined) this.table.set(h, v);
    else if (Array.isArray(hit)) hit.push(v);
    else this.table.set(h, [hit, v]);
    this.size++;
    return v;
  }

  clear(): void {
    this.table.clear();
    this.size = 0;
  }
}
