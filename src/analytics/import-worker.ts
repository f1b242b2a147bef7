// The reading half of a direct log import, in a worker thread: reads the files, converts the lines
// and posts the page views in column batches (their buffers moved, not copied), while the main thread
// writes the previous batch. On 2 cores this keeps parsing and the engine's writes side by side.
import { parentPort, workerData } from 'node:worker_threads';
import type { ImportColumns } from './engine.ts';
import { useExtraAgents, type AgentEntry } from './classify.ts';
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
  /** The operator's extra agents (FOLIO_AGENTS_FILE). */
  agents: AgentEntry[];
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
  | { type: 'done'; lines: number; skipped: Record<SkipReason, number>; crawlers: number; rejected: number; errors: LineError[] }
  /** `expected`: a clear problem with the input (printed as is), else a bug (with its stack). */
  | { type: 'error'; message: string; expected?: boolean };

/** The main thread's answer to each batch once it is written: the ids of its new identities. */
export type MainMessage = { type: 'written'; first: number; ids: BigInt64Array };

async function run(port: NonNullable<typeof parentPort>, data: ImportWorkerData): Promise<void> {
  const post = (m: WorkerMessage, transfer: ArrayBuffer[] = []) => port.postMessage(m, transfer);
  let unanswered = 0;
  let wake: (() => void) | null = null;
  const deferred = new DeferredVisitors();
  port.on('message', (m: MainMessage) => {
    if (m.type !== 'written') return;
    deferred.settle(m.first, m.ids);
    unanswered--;
    wake?.();
  });
  const send = async (columns: ImportColumns) => {
    post({ type: 'batch', columns, identities: deferred.take() }, transferList(columns));
    unanswered++;
    while (unanswered >= data.ahead) await new Promise<void>((r) => (wake = r));
    wake = null;
  };

  if (data.agents.length > 0) useExtraAgents(data.agents);
  const converter = new LineConverter(data.format, data.fields);
  const ids = new VisitorIds(data.secret);
  const builder = new ImportColumnsBuilder(data.projectId, ids, data.now, data.batch);
  const fast = new ByteLineImporter(converter, builder, ids, deferred);
  /** One line, b[s, e) without its line break: the byte path, else decoded for the string path. */
  const line = (b: Buffer, s: number, e: number) => {
    if (e > s && b[e - 1] === 13) e--;
    if (e - s > MAX_LINE_BYTES) return converter.tooLong(MAX_LINE_BYTES);
    if (fast.line(b, s, e)) return;
    if (converter.next(b.toString('utf8', s, e))) builder.add(converter, converter.lines);
  };
  for (const file of data.files) {
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
          line(b, start, nl);
          start = nl + 1;
          if (builder.full) await send(builder.take());
        }
        rest = start < b.length ? b.subarray(start) : null;
        if (rest !== null && rest.length > MAX_LINE_BYTES) {
          converter.tooLong(MAX_LINE_BYTES);
          rest = null;
          dropping = true;
        }
        post({ type: 'progress', bytes, lines: converter.lines });
      }
      if (rest) line(rest, 0, rest.length);
      if (builder.full) await send(builder.take());
    } catch (err) {
      const problem = logReadProblem(err, file);
      if (problem === null) throw err;
      return post({ type: 'error', message: problem, expected: true });
    }
  }
  if (builder.length > 0) await send(builder.take());
  while (unanswered > 0) await new Promise<void>((r) => (wake = r));
  const errors = [...converter.errors, ...builder.errors].sort((x, y) => x.line - y.line).slice(0, 20);
  post({ type: 'done', lines: converter.lines, skipped: converter.skipped, crawlers: builder.crawlers, rejected: builder.rejected + converter.rejected, errors });
}

if (parentPort) {
  const port = parentPort;
  // The main thread ends the worker (terminate) once it has the final message.
  run(port, workerData as ImportWorkerData).catch((err: Error) => port.postMessage({ type: 'error', message: err.stack ?? String(err) } satisfies WorkerMessage));
}
