// The direct import's fast reader: ASCII combined-format lines are read from the file's bytes. The
// content key is hashed over the bytes (equal to hashing the string when every byte is ASCII), user
// agents and paths are interned by a hash of their bytes (no new string per line once seen), and the
// visitor ids of IPv4 addresses are cached per user agent by the address as a number. Each line then
// goes through the one pipeline as an import record (pipeline.ts prepareRecord), with this cache as
// its source of visitor ids. Any other line (JSON, non-ASCII, escapes, anything unusual) is left to
// the string reader (LineConverter + ImportColumnsBuilder.add); the import tests compare the two.
import type { DeferredVisitors } from '../deferred-visitors.ts';
import type { VisitorIds } from '../identity.ts';
import type { ImportColumnsBuilder } from '../import-columns.ts';
import { contentKeyInto, isDocumentPath, isSuccess, parseClfTime, type LineConverter } from '../import.ts';
import type { Identities } from '../pipeline.ts';

interface UserAgent {
  bytes: Uint8Array;
  ua: string;
  /** Visitor ids by IPv4 address (as a signed 32-bit number: a small-integer map key), this generation and the one before. */
  visitors: Map<number, bigint>;
  oldVisitors: Map<number, bigint> | null;
  generation: number;
}

interface PathInfo {
  bytes: Uint8Array;
  path: string;
  document: boolean;
}

/** Entries kept per table before it is cleared (bounds memory on logs with endless distinct values). */
const MAX_USER_AGENTS = 50_000;
const MAX_PATHS = 200_000;
const MAX_VISITORS = 400_000;

/** 32-bit FNV-1a of b[s, e) (table lookups only; equality is always checked on the bytes). */
function fnv(b: Uint8Array, s: number, e: number): number {
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
class Interned<V extends { bytes: Uint8Array }> {
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

/** A strict dotted-quad IPv4 address (what net.isIPv4 accepts) as a signed 32-bit number, else -1 (255.255.255.255 is -1 too, and takes the string path). */
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

/** True when b[s, e) is non-empty printable ASCII without spaces. */
function isToken(b: Uint8Array, s: number, e: number): boolean {
  if (e <= s) return false;
  for (let i = s; i < e; i++) if (b[i] < 33 || b[i] > 126) return false;
  return true;
}

/** b[i] inside the line [.., e), else -1 (the buffer goes on with the next line). */
function at(b: Uint8Array, i: number, e: number): number {
  return i < e ? b[i] : -1;
}

function indexOfByte(b: Uint8Array, byte: number, from: number, to: number): number {
  for (let i = from; i < to; i++) if (b[i] === byte) return i;
  return -1;
}

const latin1 = new TextDecoder('latin1');

export class ByteLineImporter {
  private readonly conv: LineConverter;
  private readonly builder: ImportColumnsBuilder;
  private readonly ids: VisitorIds;
  private readonly deferred: DeferredVisitors | null;
  private readonly userAgents = new Interned<UserAgent>();
  private readonly paths = new Interned<PathInfo>();
  /** Visitor cache generations (as in VisitorIds): when one holds MAX_VISITORS ids the next starts. */
  private generation = 0;
  private generationSize = 0;
  /** The last minute parsed: its 26 time bytes (seconds ignored) and instant. */
  private readonly minute = new Uint8Array(26);
  private minuteMs: number | null = null;
  private haveMinute = false;
  /** The line being added: its user agent and IPv4 address (-1: not IPv4), for `identities`. */
  private curUa: UserAgent | null = null;
  private curIp4 = -1;
  /** The pipeline's visitor ids for byte lines: cached by IPv4 number per user agent, new ones deferred. */
  private readonly identities: Identities = {
    fromIpAndAgent: (ip, userAgent) => this.visitorOf(ip, userAgent),
    fromGiven: (id) => this.ids.fromGiven(id),
    daily: (ip, userAgent, at) => this.ids.daily(ip, userAgent, at),
  };

  /** `deferred`: new identities get placeholders, hashed by the writing thread (deferred-visitors.ts); null: hashed here. */
  constructor(conv: LineConverter, builder: ImportColumnsBuilder, ids: VisitorIds, deferred: DeferredVisitors | null = null) {
    this.conv = conv;
    this.builder = builder;
    this.ids = ids;
    this.deferred = deferred;
  }

  /**
   * Imports b[s, e) (one line, without its line break) when it is an ASCII combined-format line the
   * scanner is sure of; returns false, having changed nothing, to leave the line to the string path.
   */
  line(b: Uint8Array, s: number, e: number): boolean {
    if (this.conv.format === 'json' || e <= s || b[s] === 32 || b[s] === 9 || b[s] === 123) return false;
    // Content key over the bytes, and whether they are all ASCII (then it equals the string's key).
    let h1 = 0x811c9dc5;
    let h2 = 0x9747b28c;
    let any = 0;
    for (let i = s; i < e; i++) {
      const c = b[i];
      any |= c;
      h1 = Math.imul(h1 ^ c, 0x01000193);
      h2 = Math.imul(h2 ^ c, 0x5bd1e995);
      h2 ^= h2 >>> 15;
    }
    if (any & 0x80) return false;
    h1 ^= h1 >>> 13;
    h1 = Math.imul(h1, 0xc2b2ae35);
    h1 ^= h1 >>> 16;

    // The fields, as CombinedParser.scan finds them.
    const s1 = indexOfByte(b, 32, s, e);
    if (s1 <= s) return false;
    const s2 = indexOfByte(b, 32, s1 + 1, e);
    if (s2 < 0) return false;
    const s3 = indexOfByte(b, 32, s2 + 1, e);
    if (s3 < 0 || !isToken(b, s, s1) || !isToken(b, s1 + 1, s2) || !isToken(b, s2 + 1, s3) || at(b, s3 + 1, e) !== 91) return false;
    const tEnd = indexOfByte(b, 93, s3 + 2, e);
    if (tEnd <= s3 + 2 || at(b, tEnd + 1, e) !== 32 || at(b, tEnd + 2, e) !== 34) return false;
    const rq = tEnd + 3;
    const rqEnd = indexOfByte(b, 34, rq, e);
    if (rqEnd < 0) return false;
    let m = rq;
    while (m < rqEnd && b[m] >= 65 && b[m] <= 90) m++;
    if (m === rq || b[m] !== 32) return false;
    const pEnd = indexOfByte(b, 32, m + 1, rqEnd);
    if (pEnd < 0 || !isToken(b, m + 1, pEnd)) return false;
    const st = rqEnd + 2;
    if (st + 4 > e || b[rqEnd + 1] !== 32 || b[st + 3] !== 32) return false;
    const d0 = b[st] - 48;
    const d1 = b[st + 1] - 48;
    const d2 = b[st + 2] - 48;
    if (d0 < 0 || d0 > 9 || d1 < 0 || d1 > 9 || d2 < 0 || d2 > 9) return false;
    const bEnd = indexOfByte(b, 32, st + 4, e);
    if (bEnd < 0 || !isToken(b, st + 4, bEnd) || at(b, bEnd + 1, e) !== 34) return false;
    const rEnd = indexOfByte(b, 34, bEnd + 2, e);
    if (rEnd < 0 || at(b, rEnd + 1, e) !== 32 || at(b, rEnd + 2, e) !== 34) return false;
    const uEnd = indexOfByte(b, 34, rEnd + 3, e);
    if (uEnd < 0 || indexOfByte(b, 92, bEnd, uEnd) !== -1) return false;
    const ts = this.time(b, s3 + 2, tEnd);
    if (ts === null) return false;

    // From here on the line is this path's: the filters of LineConverter.next, in its order.
    if (b[m + 1] !== 47) return false; // not a path: the string reader hands it to the pipeline, which rejects it
    const conv = this.conv;
    conv.lines++;
    const get = m - rq === 3 && b[rq] === 71 && b[rq + 1] === 69 && b[rq + 2] === 84;
    const head = m - rq === 4 && b[rq] === 72 && b[rq + 1] === 69 && b[rq + 2] === 65 && b[rq + 3] === 68;
    if (!get && !head) {
      conv.skipped.method++;
      return true;
    }
    if (!isSuccess(d0 * 100 + d1 * 10 + d2)) {
      conv.skipped.status++;
      return true;
    }
    let pathEnd = pEnd;
    for (let i = m + 1; i < pEnd; i++) {
      if (b[i] === 63 || b[i] === 35) {
        pathEnd = i;
        break;
      }
    }
    const path = this.path(b, m + 1, pathEnd);
    if (!path.document) {
      conv.skipped.asset++;
      return true;
    }
    const n = conv.repeats.occurrence(ts, h1, h2);
    if (n > 1) {
      contentKeyInto(`${latin1.decode(b.subarray(s, e))}\n#${n}`, conv.key);
      h1 = conv.key[0];
      h2 = conv.key[1];
    }

    // The pipeline, as ImportColumnsBuilder.add does for a string line.
    const ua = this.userAgent(b, rEnd + 3, uEnd);
    const record: Record<string, unknown> = { t: ts, p: path.path, ua: ua.ua, ip: latin1.decode(b.subarray(s, s1)) };
    if (!(rEnd === bEnd + 2 || (rEnd === bEnd + 3 && b[bEnd + 2] === 45))) record.r = latin1.decode(b.subarray(bEnd + 2, rEnd));
    this.curUa = ua;
    this.curIp4 = ipv4At(b, s, s1);
    this.builder.addRecord(record, conv.lines, h1, h2, this.identities);
    return true;
  }

  /** The visitor id of the current line's (IP, user agent): cached, deferred to the writing thread, or hashed. */
  private visitorOf(ip: string, userAgent: string): bigint {
    const ua = this.curUa;
    const ip4 = this.curIp4;
    if (ua === null || ip4 === -1 || ua.ua !== userAgent) return this.ids.fromIpAndAgent(ip, userAgent);
    const cached = this.cachedVisitor(ua, ip4);
    if (cached !== undefined) return cached;
    if (this.deferred) {
      const ref: bigint = this.deferred.defer(ip, userAgent, (id) => this.settle(ua, ip4, ref, id));
      return this.rememberVisitor(ua, ip4, ref);
    }
    return this.rememberVisitor(ua, ip4, this.ids.hashIpAndAgent(ip, userAgent));
  }

  /** The CLF time b[s, e) in ms (the minute cached, as ClfClock does); null for a bad time. */
  private time(b: Uint8Array, s: number, e: number): number | null {
    if (e - s !== 26 || b[s + 17] !== 58 || b[s + 20] !== 32) return null; // the string path decides
    const x = b[s + 18] - 48;
    const y = b[s + 19] - 48;
    if (x < 0 || x > 5 || y < 0 || y > 9) return null;
    const mm = this.minute;
    let same = this.haveMinute;
    for (let i = 0; same && i < 26; i++) if (i !== 18 && i !== 19 && mm[i] !== b[s + i]) same = false;
    if (!same) {
      mm.set(b.subarray(s, e));
      this.haveMinute = true;
      const t = latin1.decode(b.subarray(s, e));
      this.minuteMs = parseClfTime(t.slice(0, 17) + ':00' + t.slice(20));
    }
    return this.minuteMs === null ? null : this.minuteMs + (x * 10 + y) * 1000;
  }

  private path(b: Uint8Array, s: number, e: number): PathInfo {
    const h = fnv(b, s, e);
    const hit = this.paths.get(b, s, e, h);
    if (hit) return hit;
    if (this.paths.size >= MAX_PATHS) this.paths.clear();
    const path = latin1.decode(b.subarray(s, e));
    return this.paths.add(h, { bytes: b.slice(s, e), path, document: isDocumentPath(path) });
  }

  private userAgent(b: Uint8Array, s: number, e: number): UserAgent {
    const h = fnv(b, s, e);
    const hit = this.userAgents.get(b, s, e, h);
    if (hit) return hit;
    if (this.userAgents.size >= MAX_USER_AGENTS) this.userAgents.clear(); // their cached visitor ids go with them
    const ua = latin1.decode(b.subarray(s, e));
    const entry: UserAgent = { bytes: b.slice(s, e), ua, visitors: new Map(), oldVisitors: null, generation: this.generation };
    return this.userAgents.add(h, entry);
  }

  private cachedVisitor(ua: UserAgent, ip4: number): bigint | undefined {
    this.turn(ua);
    const v = ua.visitors.get(ip4);
    if (v !== undefined) return v;
    const old = ua.oldVisitors?.get(ip4);
    return old === undefined ? undefined : this.rememberVisitor(ua, ip4, old);
  }

  private rememberVisitor(ua: UserAgent, ip4: number, v: bigint): bigint {
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
