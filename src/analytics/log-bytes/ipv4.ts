// IPv4 addresses read from bytes as numbers: a small-integer map key for the visitor id cache.

/** A strict dotted-quad IPv4 address (what net.isIPv4 accepts) as a signed 32-bit number, else -1 (255.255.255.255 is -1 too, and is looked up by its string). */
export function ipv4At(b: Uint8Array, s: number, e: number): number {
  let value = 0;
  let parts = 0;
  let i = s;
  while (parts < 4) {
    const start = i;
    let octet = 0;
    while (i < e && b[i] >= 48 && b[i] <= 57 && i - start < 3) octet = octet * 10 + b[i++] - 48;
    const len = i - start;
    if (len === 0 || octet > 255 || (len > 1 && b[start] === 48)) return -1;
    value = ((value << 8) | octet) | 0;
    parts++;
    if (parts < 4) {
      if (b[i] !== 46 || i >= e) return -1;
      i++;
    }
  }
  return i === e ? value : -1;
}
