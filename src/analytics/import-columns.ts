// The direct log import's page views as columns (engine.ts ImportColumns): each accepted line goes
// through the pipeline as an import record (checked, classified, identified) and is written into typed
// arrays, so a batch is moved to the engine as a few buffers instead of an object per view.
import type { ImportColumns } from './engine.ts';
import { LAST_VISITOR_CODE } from './traffic-class.ts';
import type { LineConverter } from './log-lines/line-converter.ts';
import { IMPORT_WIRE, prepareRecord, Rejected, type Identities } from './pipeline.ts';
import type { ClassificationRules } from './classify.ts';

export interface LineError {
  line: number;
  code: string;
  error: string;
}

/** Word order of a 64-bit integer in memory. */
const LITTLE_ENDIAN = new Uint8Array(new Uint16Array([1]).buffer)[0] === 1;
const HI = LITTLE_ENDIAN ? 1 : 0;
const LO = 1 - HI;

/** Errors kept for the summary (the count of rejected lines is always exact). */
const MAX_ERRORS = 20;

export class ImportColumnsBuilder {
  private readonly projectId: string;
  private readonly rules: ClassificationRules;
  private readonly ids: Identities;
  private readonly now: number;
  private readonly capacity: number;
  private cols!: ImportColumns;
  private keyWords!: Int32Array;
  private pathIndex = new Map<string, number>();
  private agentIndex = new Map<string, number>();
  /** Views by crawlers and other bots (stored, but neither human nor AI). */
  crawlers = 0;
  /** Views by people and AI agents (stored, each line read counted once; see ViewKinds). */
  pageViews = 0;
  /** Not-found views of people and AI agents (stored apart). */
  notFound = 0;
  /** Not-found views of crawlers and bots: not kept, only counted. */
  crawlerNotFound = 0;
  rejected = 0;
  readonly errors: LineError[] = [];

  constructor(projectId: string, rules: ClassificationRules, ids: Identities, now: number, capacity: number) {
    this.projectId = projectId;
    this.rules = rules;
    this.ids = ids;
    this.now = now;
    this.capacity = capacity;
    this.reset();
  }

  get length(): number {
    return this.cols.n + (this.cols.notFound?.length ?? 0);
  }

  get full(): boolean {
    return this.cols.n + (this.cols.notFound?.length ?? 0) >= this.capacity;
  }

  /** Adds the converter's current line (`line`: its number, for error reports) through the pipeline. */
  add(conv: LineConverter, line: number): void {
    const rec = conv.rec;
    const record: Record<string, unknown> = { t: rec.ts, p: rec.path, ua: rec.userAgent };
    if (rec.ip !== '') record.ip = rec.ip;
    if (rec.referrer) record.r = rec.referrer;
    if (rec.accept) record.a = rec.accept;
    if (conv.notFound) record.s = rec.status;
    this.addRecord(record, line, conv.key[0], conv.key[1]);
  }

  /** Adds one import record (IMPORT_WIRE names, without `k`: the key is given as its two halves). */
  addRecord(record: Record<string, unknown>, line: number, keyHi: number, keyLo: number, ids: Identities = this.ids): void {
    let e;
    try {
      e = prepareRecord(record, IMPORT_WIRE, this.projectId, this.rules, ids, this.now);
    } catch (err) {
      if (!(err instanceof Rejected)) throw err;
      return this.reject(err, line);
    }
    if (e.notFound) {
      // Not-found views ride along as events (they are few): the engine stores them apart. Bots' are not kept.
      if (e.cls > LAST_VISITOR_CODE) {
        this.crawlerNotFound++;
        return;
      }
      this.notFound++;
      const importKey = BigInt.asIntN(64, (BigInt(keyHi >>> 0) << 32n) | BigInt(keyLo >>> 0));
      (this.cols.notFound ??= []).push({ ...e, importKey, group: 0 });
      return;
    }
    this.push(e.ts, e.path, e.visitor, e.cls, e.agent, e.referrer, keyHi, keyLo);
  }

  /** Counts a line the pipeline rejected. */
  reject(err: Rejected, line: number): void {
    this.rejected++;
    if (this.errors.length < MAX_ERRORS) this.errors.push({ line, code: err.code, error: err.message });
  }

  /** Appends one checked, classified and identified view. */
  push(ts: number, path: string, visitor: bigint, cls: number, agent: string | null, referrer: string | null, keyHi: number, keyLo: number): void {
    if (cls > LAST_VISITOR_CODE) this.crawlers++;
    else this.pageViews++;
    const cols = this.cols;
    const i = cols.n++;
    if (i > 0 && ts < cols.ts[i - 1]) cols.distinctKeys = false;
    cols.ts[i] = ts;
    let p = this.pathIndex.get(path);
    if (p === undefined) this.pathIndex.set(path, (p = cols.paths.push(path) - 1));
    cols.path[i] = p;
    cols.visitor[i] = visitor;
    cols.cls[i] = cls;
    let a = -1;
    if (agent !== null) {
      a = this.agentIndex.get(agent) ?? -1;
      if (a < 0) this.agentIndex.set(agent, (a = cols.agents.push(agent) - 1));
    }
    cols.agent[i] = a;
    if (referrer) (cols.referrer ??= new Array<string | null>(this.capacity).fill(null))[i] = referrer;
    // The signed 64-bit key (high half, low half) written as two 32-bit words: no BigInt per line.
    this.keyWords[2 * i + HI] = keyHi;
    this.keyWords[2 * i + LO] = keyLo;
  }

  /** The batch so far; the builder starts a new one. */
  take(): ImportColumns {
    const out = this.cols;
    this.reset();
    return out;
  }

  private reset(): void {
    const n = this.capacity;
    this.cols = {
      projectId: this.projectId,
      n: 0,
      ts: new Float64Array(n),
      path: new Int32Array(n),
      paths: [],
      visitor: new BigInt64Array(n),
      cls: new Uint8Array(n),
      agent: new Int16Array(n),
      agents: [],
      referrer: null,
      key: new BigInt64Array(n),
      distinctKeys: true,
    };
    this.keyWords = new Int32Array(this.cols.key.buffer);
    this.pathIndex = new Map();
    this.agentIndex = new Map();
  }
}

/** The buffers of a batch, for postMessage's transfer list. */
export function transferList(c: ImportColumns): ArrayBuffer[] {
  return [c.ts, c.path, c.visitor, c.cls, c.agent, c.key].map((a) => a.buffer as ArrayBuffer);
}
