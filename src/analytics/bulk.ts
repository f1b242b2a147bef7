// The bulk import endpoint's NDJSON body: one record `{t, p, ua, ip?, v?, r?, a?, k?}` per line,
// streamed. Each line becomes an IMPORT_WIRE record and goes through prepareRecord, in batches to the
// writer; the answer counts every line. Bad lines never fail the request. (Raw access logs on the same
// endpoint are read by log-import.ts.)
import type { Readable } from 'node:stream';
import { CodedError } from '../errors.ts';
import { LAST_VISITOR_CODE } from './traffic-class.ts';
import { LineTooLongError, readLineChunks } from './log-lines/split-lines.ts';
import { IMPORT_WIRE, prepareRecord, Rejected, type Identities } from './pipeline.ts';
import type { ClassificationRules } from './classify.ts';
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

/** Collects prepared rows into writer batches (two in flight while the next is built) and counts the outcome. */
class BatchSink {
  readonly result: ImportResult = { received: 0, recorded: 0, duplicates: 0, crawlers: 0, rejected: 0, errors: [] };
  private batch: PendingEvent[] = [];
  private readonly inflight = new Set<Promise<void>>();
  private failed: unknown = null;
  private readonly submit: Submit;
  private readonly projectId: string;
  private readonly rules: ClassificationRules;
  private readonly ids: Identities;
  private readonly now: number;

  constructor(submit: Submit, projectId: string, rules: ClassificationRules, ids: Identities, now: number) {
    this.submit = submit;
    this.projectId = projectId;
    this.rules = rules;
    this.ids = ids;
    this.now = now;
  }

  /** One row: the record function, or its rejection counted against the row's number. */
  add(record: unknown): void {
    const line = ++this.result.received;
    try {
      const e = prepareRecord(record, IMPORT_WIRE, this.projectId, this.rules, this.ids, this.now);
      if (e.cls > LAST_VISITOR_CODE) this.result.crawlers++;
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
export async function importNdjson(stream: Readable, submit: Submit, projectId: string, rules: ClassificationRules, ids: Identities, now: number): Promise<ImportResult> {
  const sink = new BatchSink(submit, projectId, rules, ids, now);
  const chunks = readLineChunks(stream, MAX_IMPORT_LINE);
  for (;;) {
    let next: IteratorResult<string[]>;
    try {
      next = await chunks.next();
    } catch (err) {
      if (!(err instanceof LineTooLongError)) throw err;
      // The lines before it are stored (a retry is harmless: keyed lines are not stored twice).
      await sink.finish();
      throw new CodedError('line_too_long', `Each NDJSON line must be at most ${MAX_IMPORT_LINE} characters; the ${sink.result.received} lines before the long one were processed.`);
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
