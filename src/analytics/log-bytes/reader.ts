// The direct import's fast reader: ASCII combined-format lines are read from the file's bytes by the
// one combined-line reader (log-lines/combined-format.ts), each byte its own code unit. The content
// key is hashed over the bytes (equal to hashing the string when every byte is ASCII), user agents and
// paths are interned by a hash of their bytes (no new string per line once seen), and visitor ids of
// IPv4 addresses are cached per user agent (visitor-cache.ts). Each line then goes through the one
// pipeline as an import record (pipeline.ts prepareRecord). Other lines (JSON, non-ASCII, a path that
// is not one) are left to the string path (LineConverter + ImportColumnsBuilder.add), which reads
// them with the same reader; the import tests compare the two paths.
import type { DeferredVisitors } from '../deferred-visitors.ts';
import type { VisitorIds } from '../identity.ts';
import type { ImportColumnsBuilder } from '../import-columns.ts';
import type { Identities } from '../pipeline.ts';
import { AsciiBytes } from '../log-lines/code-units.ts';
import { CombinedReader, methodIs, noReferrer } from '../log-lines/combined-format.ts';
import { contentKeyInto } from '../log-lines/content-key.ts';
import type { LineConverter } from '../log-lines/line-converter.ts';
import { isDocumentPath, isNotFoundStatus, isSuccess } from '../log-lines/page-views.ts';
import { fnv, Interned } from './interned.ts';
import { ipv4At } from './ipv4.ts';
import { AgentVisitorCache, type UserAgent } from './visitor-cache.ts';

interface PathInfo {
  bytes: Uint8Array;
  path: string;
  document: boolean;
}

/** Entries kept per table before it is cleared (bounds memory on logs with endless distinct values). */
const MAX_USER_AGENTS = 50_000;
const MAX_PATHS = 200_000;

const SLASH = 47;

export class ByteLineImporter {
  private readonly conv: LineConverter;
  private readonly builder: ImportColumnsBuilder;
  private readonly ids: VisitorIds;
  private readonly visitors: AgentVisitorCache;
  private readonly userAgents = new Interned<UserAgent>();
  private readonly paths = new Interned<PathInfo>();
  private readonly bytes = new AsciiBytes();
  private readonly combined = new CombinedReader();
  /** The current line's content key: [high, low]. */
  private readonly key = new Int32Array(2);
  /** The line being added: its user agent and IPv4 address (-1: not IPv4), for `identities`. */
  private curUa: UserAgent | null = null;
  private curIp4 = -1;
  /** The pipeline's visitor ids for byte lines: cached by IPv4 number per user agent. */
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
    this.visitors = new AgentVisitorCache(ids, deferred);
  }

  /**
   * Imports b[s, e) (one line, without its line break) when it is an ASCII combined-format line;
   * returns false, having changed nothing, to leave the line to the string path.
   */
  line(b: Uint8Array, s: number, e: number): boolean {
    if (this.conv.format === 'json' || e <= s || b[s] === 123) return false; // {: a JSON line
    if (!this.asciiKey(b, s, e)) return false;
    this.bytes.codes = b;
    const ts = this.combined.scan(this.bytes, s, e);
    // Not a path: the string path hands it to the pipeline, which rejects it.
    if (ts === null || b[this.combined.fields.pathStart] !== SLASH) return false;
    // Not-found lines are few: the string path makes them not-found views.
    if (isNotFoundStatus(this.combined.fields.status)) return false;
    this.conv.lines++;
    const path = this.pageView(b);
    if (path !== null) this.addView(b, s, e, ts, path);
    return true;
  }

  /** Hashes the content key over the bytes into `key`; false when a byte is not ASCII (then it would differ from the string's). */
  private asciiKey(b: Uint8Array, s: number, e: number): boolean {
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
    this.key[0] = h1;
    this.key[1] = h2;
    return true;
  }

  /** The filters of LineConverter.next, in its order: the page's path, or null with the skip counted. */
  private pageView(b: Uint8Array): PathInfo | null {
    const f = this.combined.fields;
    const skipped = this.conv.skipped;
    if (!methodIs(b, f, 'GET') && !methodIs(b, f, 'HEAD')) {
      skipped.method++;
      return null;
    }
    if (!isSuccess(f.status)) {
      skipped.status++;
      return null;
    }
    const path = this.path(b, f.pathStart, queryStart(b, f.pathStart, f.pathEnd));
    if (!path.document) {
      skipped.asset++;
      return null;
    }
    return path;
  }

  /** The view through the pipeline, as ImportColumnsBuilder.add does for a string line. */
  private addView(b: Uint8Array, s: number, e: number, ts: number, path: PathInfo): void {
    const f = this.combined.fields;
    const key = this.key;
    const n = this.conv.repeats.occurrence(ts, key[0], key[1]);
    if (n > 1) contentKeyInto(`${this.bytes.text(s, e)}\n#${n}`, key);
    const ua = this.userAgent(b, f.userAgentStart < 0 ? e : f.userAgentStart, f.userAgentStart < 0 ? e : f.userAgentEnd);
    const record: Record<string, unknown> = { t: ts, p: path.path, ua: ua.ua, ip: this.bytes.text(s, f.ipEnd) };
    if (!noReferrer(b, f)) record.r = this.bytes.text(f.referrerStart, f.referrerEnd);
    this.curUa = ua;
    this.curIp4 = ipv4At(b, s, f.ipEnd);
    this.builder.addRecord(record, this.conv.lines, key[0], key[1], this.identities);
  }

  /** The visitor id of the current line's (IP, user agent): from the cache when it is that line's IPv4 pair. */
  private visitorOf(ip: string, userAgent: string): bigint {
    const ua = this.curUa;
    if (ua === null || this.curIp4 === -1 || ua.ua !== userAgent) return this.ids.fromIpAndAgent(ip, userAgent);
    return this.visitors.visitorOf(ua, this.curIp4, ip);
  }

  private path(b: Uint8Array, s: number, e: number): PathInfo {
    const h = fnv(b, s, e);
    const hit = this.paths.get(b, s, e, h);
    if (hit) return hit;
    if (this.paths.size >= MAX_PATHS) this.paths.clear();
    const path = this.bytes.text(s, e);
    return this.paths.add(h, { bytes: b.slice(s, e), path, document: isDocumentPath(path) });
  }

  private userAgent(b: Uint8Array, s: number, e: number): UserAgent {
    const h = fnv(b, s, e);
    const hit = this.userAgents.get(b, s, e, h);
    if (hit) return hit;
    if (this.userAgents.size >= MAX_USER_AGENTS) this.userAgents.clear(); // their cached visitor ids go with them
    return this.userAgents.add(h, this.visitors.entry(b.slice(s, e), this.bytes.text(s, e)));
  }
}

/** Where the path's query or fragment starts (the pipeline drops them), else its end. */
function queryStart(b: Uint8Array, s: number, e: number): number {
  for (let i = s; i < e; i++) if (b[i] === 63 || b[i] === 35) return i;
  return e;
}
