// Importing raw access logs into an analytics engine: a worker thread (import-worker.ts) reads and
// converts the lines — files, or a byte stream such as a request body — and posts page views in
// column batches; this thread resolves their visitor ids and writes them, one batch while the worker
// builds the next. Used by `folio analytics import` without a server (direct-import.ts) and by the
// server's bulk endpoint for raw logs, so both store the same rows with the same content keys.
import type { Readable } from 'node:stream';
import { Worker } from 'node:worker_threads';
import { VisitorResolver } from './deferred-visitors.ts';
import type { AnalyticsEngine } from './engine.ts';
import type { ClassificationRules } from './classify.ts';
import { VisitorIds } from './identity.ts';
import type { LineError } from './import-columns.ts';
import { ImportError } from './import-error.ts';
import { DEFAULT_FIELDS } from './log-lines/json-lines.ts';
import type { LogFormat, SkipReason } from './log-lines/line-converter.ts';
import type { ImportWorkerData, MainMessage, WorkerMessage } from './import-worker.ts';

/** What an import reports as it reads: each file as it starts, then bytes of it and lines so far. */
export interface ImportProgress {
  file(name: string, size: number | null): void;
  update(bytes: number, lines: number): void;
}

export interface LogImportOptions {
  projectId: string;
  format: LogFormat;
  fields: Record<string, string[]>;
  /** Views per write. */
  batch: number;
  /** FOLIO_SECRET: the key of visitor ids. */
  secret: string;
  /** The lists in force (the worker thread builds its own rules from them). */
  rules: ClassificationRules;
  /** Log files (`-` is this process's stdin), or a byte stream of log lines. */
  input: { files: string[] } | { stream: Readable; name: string };
  progress?: ImportProgress;
}

/**
 * The views among the lines read, by kind; with `crawlers`, the skips and the rejected lines, each
 * line read is counted exactly once (the import's summary adds up).
 */
export interface ViewKinds {
  /** Views by people and AI agents. */
  pageViews: number;
  /** Not-found views (404, 410) by people and AI agents, stored apart. */
  notFound: number;
  /** Not-found views by crawlers and bots: not kept. */
  crawlerNotFound: number;
}

export interface LogImportResult {
  lines: number;
  skipped: Record<SkipReason, number>;
  recorded: number;
  duplicates: number;
  crawlers: number;
  kinds: ViewKinds;
  rejected: number;
  errors: LineError[];
}

/** The field names a JSON log line is read from: `--map name=field` entries first, then the defaults. */
export function fieldsFrom(map: string[] = []): Record<string, string[]> {
  const fields: Record<string, string[]> = { ...DEFAULT_FIELDS };
  for (const m of map) {
    const eq = m.indexOf('=');
    const name = eq > 0 ? m.slice(0, eq) : '';
    if (!Object.hasOwn(DEFAULT_FIELDS, name) || eq === m.length - 1) {
      throw new ImportError(`A field map is NAME=FIELD with NAME one of ${Object.keys(DEFAULT_FIELDS).join(', ')}; got "${m.slice(0, 100)}".`);
    }
    fields[name] = [m.slice(eq + 1), ...DEFAULT_FIELDS[name]];
  }
  return fields;
}

/** A clear sentence for a stream that failed while being read (a broken gzip body, a dropped connection). */
function streamProblem(err: NodeJS.ErrnoException, what: string): string {
  if (err.code === 'Z_DATA_ERROR' || err.code === 'Z_BUF_ERROR') return `${what[0].toUpperCase()}${what.slice(1)} is not valid gzip (or it was cut short).`;
  return `Reading ${what} failed: ${err.message.replace(/\.?$/, '.')}`;
}

export async function runLogImport(engine: AnalyticsEngine, opts: LogImportOptions): Promise<LogImportResult> {
  const stream = 'stream' in opts.input ? opts.input.stream : opts.input.files.includes('-') ? process.stdin : null;
  const data: ImportWorkerData = {
    files: 'files' in opts.input ? opts.input.files : ['-'],
    format: opts.format,
    fields: opts.fields,
    projectId: opts.projectId,
    secret: opts.secret,
    rules: { agents: opts.rules.agents, sources: opts.rules.sources },
    now: Date.now(),
    batch: opts.batch,
    // Two batches waiting or being written, one being built: the worker rarely waits for a write.
    ahead: 3,
  };
  const worker = new Worker(new URL('./import-worker.ts', import.meta.url), { workerData: data, stdin: stream !== null });
  // Batches in flight (`ahead`) plus the one being built may still use references the worker has not settled.
  const resolver = new VisitorResolver(new VisitorIds(opts.secret), (data.ahead + 2) * opts.batch);
  let recorded = 0;
  let duplicates = 0;
  let writing: Promise<void> = Promise.resolve();
  let failure: Error | null = null;
  let finished = false;
  try {
    const done = await new Promise<Extract<WorkerMessage, { type: 'done' }>>((resolve, reject) => {
      if (stream) stream.pipe(worker.stdin!);
      const fail = (err: Error) => {
        failure ??= err;
        void worker.terminate();
        if (stream) stream.unpipe().destroy(); // nothing more will be read
        reject(failure);
      };
      stream?.on('error', (err) => fail(new ImportError(streamProblem(err, 'stream' in opts.input ? opts.input.name : 'standard input'))));
      worker.on('error', fail);
      worker.on('exit', (code) => {
        if (!finished) fail(new Error(`The import worker stopped (exit code ${code}).`));
      });
      worker.on('message', (m: WorkerMessage) => {
        if (failure) return;
        if (m.type === 'file') opts.progress?.file(m.file === '-' && 'stream' in opts.input ? opts.input.name : m.file, m.size);
        else if (m.type === 'progress') opts.progress?.update(m.bytes, m.lines);
        else if (m.type === 'error') fail(m.expected ? new ImportError(m.message) : new Error(`The import worker failed: ${m.message}`));
        else if (m.type === 'done') {
          finished = true;
          writing.then(() => resolve(m), fail);
        } else if (m.type === 'batch') {
          // Ids now, while the engine writes the batch before (this thread is free then); batches are
          // written in order and the worker is told when each one is stored.
          let ids: BigInt64Array;
          try {
            ids = resolver.resolve(m.identities, m.columns.visitor, m.columns.n);
          } catch (err) {
            return fail(err as Error);
          }
          writing = writing.then(async () => {
            const { duplicates: d } = await engine.writeImport(m.columns);
            duplicates += d;
            // Not-found views count as recorded events too (they are stored apart).
            recorded += m.columns.n + (m.columns.notFound?.length ?? 0) - d;
            worker.postMessage({ type: 'written', first: m.identities.first, ids } satisfies MainMessage, [ids.buffer as ArrayBuffer]);
          });
          writing.catch(fail);
        }
      });
    });
    return { lines: done.lines, skipped: done.skipped, recorded, duplicates, crawlers: done.crawlers, kinds: done.kinds, rejected: done.rejected, errors: done.errors };
  } finally {
    await worker.terminate();
  }
}
