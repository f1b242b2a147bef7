// The bulk import endpoint's two body formats, decoded into records for the one pipeline:
// - NDJSON: one record `{t, p, ua, ip?, v?, r?, a?, k?}` per line, streamed;
// - compact batch (`application/vnd.folio.views+json`): one JSON document per request with the
//   distinct strings listed once and the rows as arrays of numbers (what `folio analytics import`
//   sends: a tenth of the bytes of NDJSON, and no JSON object per view to build or parse).
// Either way each row becomes an IMPORT_WIRE record and goes through prepareRecord, in batches to the
// writer; the answer counts every row. Bad rows never fail the request.
import type { Readable } from 'node:stream';
import { ApiError } from '../errors.ts';
import { CLS } from './engine.ts';
import { LineTooLongError, readLineChunks } from './import.ts';
import { IMPORT_WIRE, prepareRecord, Rejected, type Identities } from './pipeline.ts';
import type { PendingEvent } from './writer.ts';

export interface ImportResult {
  received: number;
  recorded: number;
  duplicates: number;
  crawlers: number;
  rejected: number;
  errors: { line: number; code: string; error: string }[];
}

/** Stores a batch once durable: resolves with the events dropped as already imported. */
export type Submit = (events: PendingEvent[]) => Promise<{ duplicates: number }>;

export const MAX_IMPORT_LINE = 16 * 1024;
const IMPORT_BATCH = 25_000;
const MAX_ERRORS = 20;
/** Rows of one compact batch at most (the body limit bounds it too). */
export const MAX_COMPACT_ROWS = 200_000;

/** Collects prepared rows into writer batches (two in flight while the next is built) and counts the outcome. */
class BatchSink {
  readonly result: ImportResult = { received: 0, recorded: 0, duplicates: 0, crawlers: 0, rejected: 0, errors: [] };
  private batch: PendingEvent[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private failed: unknown = null;
  private readonly submit: Submit;
  private readonly projectId: string;
  private readonly ids: Identities;
  private readonly now: number;

  constructor(submit: Submit, projectId: string, ids: Identities, now: number) {
    this.submit = submit;
    this.projectId = projectId;
    this.ids = ids;
    this.now = now;
  }

  /** One row: the record function, or its rejection counted against the row's number. */
  add(record: unknown): void {
    const line = ++this.result.received;
    try {
      const e = prepareRecord(record, IMPORT_WIRE, this.projectId, this.ids, this.now);
      if (e.cls !== CLS.human && e.cls !== CLS.ai) this.result.crawlers++;
      this.batch.push(e);
    } catch (err) {
      if (!(err instanceof Rejected)) throw err;
      this.reject(line, err);
    }
  }

  reject(line: number, err: Rejected): void {
    this.result.rejected++;
    if (this.result.errors.length < MAX_ERRORS) this.result.errors.push({ line, code: err.code, error: err.message });
  }

  get full(): boolean {
    return this.batch.length >= IMPORT_BATCH;
  }

  async flush(): Promise<void> {
    const events = this.batch;
    this.batch = [];
    if (events.length > 0) {
      const p: Promise<void> = this.submit(events).then(
        ({ duplicates }) => {
          this.result.duplicates += duplicates;
          this.result.recorded += events.length - duplicates;
        },
        (err) => {
          this.failed ??= err;
        },
      );
      this.inflight.add(p);
      void p.finally(() => this.inflight.delete(p));
    }
    while (this.inflight.size >= 2) await Promise.race(this.inflight);
    if (this.failed) throw this.failed;
  }

  async finish(): Promise<ImportResult> {
    await this.flush();
    await Promise.all(this.inflight);
    if (this.failed) throw this.failed;
    return this.result;
  }
}

/** NDJSON records from a streamed body. A line longer than MAX_IMPORT_LINE ends the import with a 413 (the lines before it are stored). */
export async function importNdjson(stream: Readable, submit: Submit, projectId: string, ids: Identities, now: number): Promise<ImportResult> {
  const sink = new BatchSink(submit, projectId, ids, now);
  const chunks = readLineChunks(stream, MAX_IMPORT_LINE);
  for (;;) {
    let next: IteratorResult<string[]>;
    try {
      next = await chunks.next();
    } catch (err) {
      if (!(err instanceof LineTooLongError)) throw err;
      // The lines before it are stored (a retry is harmless: keyed lines are not stored twice).
      await sink.finish();
      throw new ApiError(413, 'line_too_long', `Each NDJSON line must be at most ${MAX_IMPORT_LINE} characters; the ${sink.result.received} lines before the long one were processed.`);
    }
    if (next.done) break;
    for (const line of next.value) {
      if (line === '') continue;
      let record: unknown;
      try {
        record = JSON.parse(line);
      } catch {
        sink.reject(++sink.result.received, new Rejected('invalid_json', 'The line is not valid JSON.'));
        continue;
      }
      sink.add(record);
      if (sink.full) await sink.flush();
    }
  }
  return sink.finish();
}

/**
 * A compact batch: `{"strings": [...], "t": [...], "p": [...], "ua": [...], "ip": [...], "r"?: [...], "a"?: [...], "k"?: [...]}`.
 * `strings` holds every distinct text once; `p`, `ua`, `ip`, `r`, `a` are indexes into it (-1: none);
 * `t` is milliseconds since 1970, each row's as the difference from the row before (the first from 0);
 * `k` the content keys as 16-hex strings (or null). All arrays have one entry per row.
 */
export interface CompactBatch {
  strings: string[];
  t: number[];
  p: number[];
  ua: number[];
  ip: number[];
  r?: number[];
  a?: number[];
  k?: (string | null)[];
}

const COLUMNS = ['t', 'p', 'ua', 'ip', 'r', 'a', 'k'] as const;

function badBatch(message: string): ApiError {
  return new ApiError(400, 'invalid_batch', message);
}

/** Checks the batch's shape (not its values: those are the pipeline's) and returns its row count. */
function checkCompact(body: unknown): number {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw badBatch('The batch must be a JSON object.');
  const b = body as Record<string, unknown>;
  for (const k of Object.keys(b)) if (k !== 'strings' && !(COLUMNS as readonly string[]).includes(k)) throw badBatch(`Unknown field "${k.slice(0, 64)}" in the batch.`);
  if (!Array.isArray(b.strings) || !b.strings.every((s) => typeof s === 'string')) throw badBatch('"strings" must be an array of strings.');
  if (!Array.isArray(b.t)) throw badBatch('"t" must be an array of numbers.');
  const n = b.t.length;
  if (n > MAX_COMPACT_ROWS) throw badBatch(`A batch holds at most ${MAX_COMPACT_ROWS} rows; this one has ${n}.`);
  for (const c of COLUMNS) {
    const col = b[c];
    if (col === undefined && (c === 'r' || c === 'a' || c === 'k')) continue;
    if (!Array.isArray(col) || col.length !== n) throw badBatch(`"${c}" must be an array with one entry per row (${n}).`);
  }
  return n;
}

/** A string of the batch by index: undefined for -1; a bad index is a bad batch. */
function at(strings: string[], i: unknown, column: string): string | undefined {
  if (i === -1 || i === null) return undefined;
  if (typeof i !== 'number' || !Number.isInteger(i) || i < 0 || i >= strings.length) throw badBatch(`"${column}" holds an index outside "strings".`);
  return strings[i];
}

/** Runs every row of a compact batch through the pipeline. */
export async function importCompact(body: unknown, submit: Submit, projectId: string, ids: Identities, now: number): Promise<ImportResult> {
  const n = checkCompact(body);
  const b = body as CompactBatch;
  const sink = new BatchSink(submit, projectId, ids, now);
  let t = 0;
  for (let i = 0; i < n; i++) {
    const dt = b.t[i];
    // A bad time delta makes this row's time (and the later ones') unknown: those rows are rejected by the pipeline.
    t = typeof dt === 'number' && Number.isSafeInteger(dt) && Number.isSafeInteger(t) ? t + dt : NaN;
    const record: Record<string, unknown> = { t, p: at(b.strings, b.p[i], 'p'), ua: at(b.strings, b.ua[i], 'ua') };
    const ip = at(b.strings, b.ip[i], 'ip');
    if (ip !== undefined) record.ip = ip;
    const r = b.r && at(b.strings, b.r[i], 'r');
    if (r !== undefined) record.r = r;
    const a = b.a && at(b.strings, b.a[i], 'a');
    if (a !== undefined) record.a = a;
    const k = b.k?.[i];
    if (k !== undefined && k !== null) record.k = k;
    sink.add(record);
    if (sink.full) await sink.flush();
  }
  return sink.finish();
}
