// The reading half of a direct log import, in a worker thread: reads the files, converts the lines
// and posts the page views in column batches (their buffers moved, not copied), while the main thread
// writes the previous batch. On 2 cores this keeps parsing and the engine's writes side by side.
import { parentPort, workerData } from 'node:worker_threads';
import type { ImportColumns } from './engine.ts';
import type { ViewKinds } from './log-import.ts';
import { ClassificationRules, type RuleLists } from './classify.ts';
import { DeferredVisitors, type NewIdentities } from './deferred-visitors.ts';
import { VisitorIds } from './identity.ts';
import { ImportColumnsBuilder, transferList, type LineError } from './import-columns.ts';
import { ByteLineImporter } from './log-bytes/reader.ts';
import { LineConverter, type LogFormat, type SkipReason } from './log-lines/line-converter.ts';
import { logReadProblem, openLogBytes } from './log-lines/log-files.ts';

/** Longer lines are counted as rejected and not read (no web server writes one; a hostile body might). */
export const MAX_LINE_BYTES = 64 * 1024;

export interface ImportWorkerData {
  files: string[];
  format: LogFormat;
  fields: Record<string, string[]>;
  projectId: string;
  secret: string;
  /** The main thread's classification lists in force. */
  rules: RuleLists;
  now: number;
  /** Views per batch. */
  batch: number;
  /** Batches posted and not yet acknowledged before the worker waits. */
  ahead: number;
}

export type WorkerMessage =
  | { type: 'file'; file: string; size: number | null }
  | { type: 'progress'; bytes: number; lines: number }
  | { type: 'batch'; columns: ImportColumns; identities: NewIdentities }
  | { type: 'done'; lines: number; skipped: Record<SkipReason, number>; crawlers: number; kinds: ViewKinds; rejected: number; errors: LineError[] }
  /** `expected`: a clear problem with the input (printed as is), else a bug (with its stack). */
  | { type: 'error'; message: string; expected?: boolean };

/** The main thread's answer to each batch once it is written: the ids of its new identities. */
export type MainMessage = { type: 'written'; first: number; ids: BigInt64Array };

type Post = (m: WorkerMessage, transfer?: ArrayBuffer[]) => void;

/** Posts column batches to the main thread, waiting while `ahead` of them are not yet written. */
class BatchPoster {
  private readonly post: Post;
  private readonly deferred: DeferredVisitors;
  private readonly ahead: number;
  private unanswered = 0;
  private wake: (() => void) | null = null;

  constructor(port: NonNullable<typeof parentPort>, post: Post, deferred: DeferredVisitors, ahead: number) {
    this.post = post;
    this.deferred = deferred;
    this.ahead = ahead;
    port.on('message', (m: MainMessage) => {
      if (m.type !== 'written') return;
      deferred.settle(m.first, m.ids);
      this.unanswered--;
      this.wake?.();
    });
  }

  async send(columns: ImportColumns): Promise<void> {
    this.post({ type: 'batch', columns, identities: this.deferred.take() }, transferList(columns));
    this.unanswered++;
    await this.waitUntil(() => this.unanswered < this.ahead);
  }

  /** Waits until every batch sent is written. */
  drain(): Promise<void> {
    return this.waitUntil(() => this.unanswered === 0);
  }

  private async waitUntil(done: () => boolean): Promise<void> {
    while (!done()) await new Promise<void>((r) => (this.wake = r));
    this.wake = null;
  }
}

/** Every line of the import goes here: the byte path first, else decoded for the string path. */
class LineSink {
  readonly converter: LineConverter;
  readonly builder: ImportColumnsBuilder;
  private readonly fast: ByteLineImporter;
  private readonly poster: BatchPoster;

  constructor(data: ImportWorkerData, deferred: DeferredVisitors, poster: BatchPoster) {
    this.converter = new LineConverter(data.format, data.fields);
    const ids = new VisitorIds(data.secret);
    this.builder = new ImportColumnsBuilder(data.projectId, new ClassificationRules(data.rules), ids, data.now, data.batch);
    this.fast = new ByteLineImporter(this.converter, this.builder, ids, deferred);
    this.poster = poster;
  }

  /** One line, b[s, e) without its line break. */
  line(b: Buffer, s: number, e: number): void {
    if (e > s && b[e - 1] === 13) e--;
    if (e - s > MAX_LINE_BYTES) return this.converter.tooLong(MAX_LINE_BYTES);
    if (this.fast.line(b, s, e)) return;
    if (this.converter.next(b.toString('utf8', s, e))) this.builder.add(this.converter, this.converter.lines);
  }

  get full(): boolean {
    return this.builder.full;
  }

  /** Sends the batch once it is full (or, with `all`, whatever it holds). */
  async flush(all = false): Promise<void> {
    if (this.builder.full || (all && this.builder.length > 0)) await this.poster.send(this.builder.take());
  }
}

/** Reads one file's lines into `sink`; false (the problem posted) when the file cannot be read. */
async function readFile(file: string, sink: LineSink, post: Post): Promise<boolean> {
  let bytes = 0;
  const { stream, size } = openLogBytes(file, (n) => (bytes += n));
  post({ type: 'file', file, size });
  try {
    let rest: Buffer | null = null;
    // Inside a line longer than MAX_LINE_BYTES: its bytes are dropped up to its line break, so a
    // body without line breaks costs no memory.
    let dropping = false;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      const b: Buffer = rest ? Buffer.concat([rest, chunk]) : chunk;
      let start = 0;
      if (dropping) {
        const nl = b.indexOf(10);
        dropping = nl === -1;
        start = dropping ? b.length : nl + 1;
      }
      for (let nl = b.indexOf(10, start); nl !== -1; nl = b.indexOf(10, start)) {
        sink.line(b, start, nl);
        start = nl + 1;
        if (sink.full) await sink.flush(); // checked here: an await per line would cost ~0.5 µs
      }
      rest = start < b.length ? b.subarray(start) : null;
      if (rest !== null && rest.length > MAX_LINE_BYTES) {
        sink.converter.tooLong(MAX_LINE_BYTES);
        rest = null;
        dropping = true;
      }
      post({ type: 'progress', bytes, lines: sink.converter.lines });
    }
    if (rest) sink.line(rest, 0, rest.length);
    await sink.flush();
    return true;
  } catch (err) {
    const problem = logReadProblem(err, file);
    if (problem === null) throw err;
    post({ type: 'error', message: problem, expected: true });
    return false;
  }
}

async function run(port: NonNullable<typeof parentPort>, data: ImportWorkerData): Promise<void> {
  const post: Post = (m, transfer = []) => port.postMessage(m, transfer);
  const deferred = new DeferredVisitors();
  const poster = new BatchPoster(port, post, deferred, data.ahead);
  const sink = new LineSink(data, deferred, poster);
  for (const file of data.files) if (!(await readFile(file, sink, post))) return;
  await sink.flush(true);
  await poster.drain();
  const { converter, builder } = sink;
  const errors = [...converter.errors, ...builder.errors].sort((x, y) => x.line - y.line).slice(0, 20);
  const kinds = { pageViews: builder.pageViews, notFound: builder.notFound, crawlerNotFound: builder.crawlerNotFound };
  post({ type: 'done', lines: converter.lines, skipped: converter.skipped, crawlers: builder.crawlers, kinds, rejected: builder.rejected + converter.rejected, errors });
}

if (parentPort) {
  const port = parentPort;
  // The main thread ends the worker (terminate) once it has the final message.
  run(port, workerData as ImportWorkerData).catch((err: Error) => port.postMessage({ type: 'error', message: err.stack ?? String(err) } satisfies WorkerMessage));
}
