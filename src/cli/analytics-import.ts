// `folio analytics import`: access logs (nginx/Apache combined or JSON lines, `-` for stdin, .gz) sent
// as they are to a running server, in pieces, through the typed client — the server reads them with
// the same log reader as a direct import — or, with no server given, written into the analytics
// store directly (analytics/direct-import.ts). Either way the same views and content keys are stored.
import { existsSync, statSync } from 'node:fs';
import { FolioClient } from '../client/client.ts';
import { FolioError } from '../client/errors.ts';
import type { ImportResult } from '../client/types.ts';
import { ImportError } from '../analytics/import-error.ts';
import type { LogFormat, SkipReason } from '../analytics/log-lines/line-converter.ts';
import { fieldsFrom, type ImportProgress, type LogImportResult, type ViewKinds } from '../analytics/log-import.ts';
import { logPieces } from '../analytics/log-pieces.ts';
import { inCliWords } from './errors.ts';

export interface ImportSummary {
  files: number;
  linesRead: number;
  viewsRecorded: number;
  crawlers: number;
  /** The views read by kind: with `crawlers` and the skips other than `duplicate`, every line read once. */
  kinds: ViewKinds;
  skipped: Record<SkipReason | 'duplicate' | 'rejected', number>;
  errors: { line: number; code: string; error: string }[];
  seconds: number;
}

export interface ImportOptions {
  project: string;
  format: LogFormat;
  url?: string;
  key?: string;
  map?: string[];
  batch?: number;
}

/**
 * Bytes of log per request: a few seconds of the server's work (~300,000 combined lines), far inside
 * its request time limit (FOLIO_REQUEST_TIMEOUT), and cheap to send again. Measured on a 1M-line log
 * (206 MB), two in flight: 16 MiB 7.3 s, 32 MiB 7.5 s, 64 MiB 6.6 s; one 256 MiB request 7.1 s.
 */
const PIECE_BYTES = 64 * 1024 * 1024;
/** Pieces in flight: the server runs two raw log imports at once (one reads while the other starts or writes). */
const PIECES_IN_FLIGHT = 2;
/**
 * Views per write of a direct import: fewer, larger DuckDB transactions (each has a fixed cost of
 * about ten statements) measured 7.5 vs 8.6 s of CPU per 1M lines against 50,000.
 */
export const DIRECT_BATCH = 250_000;

/** Over HTTP: pieces of whole lines to the bulk endpoint, answers added up in order. */
async function importOverHttp(files: string[], opts: ImportOptions, fields: Record<string, string[]>, progress: ImportProgress): Promise<LogImportResult> {
  if (!opts.key) throw new ImportError('--url needs an API key with the write scope: --key or FOLIO_API_KEY.');
  const url = opts.url!;
  let client: FolioClient;
  try {
    client = new FolioClient({ baseUrl: url, apiKey: opts.key, projectId: opts.project, timeoutMs: 600_000 });
  } catch (err) {
    throw new ImportError(inCliWords((err as Error).message.replace(/^FolioClient: /, '')));
  }
  const total: LogImportResult = {
    lines: 0,
    recorded: 0,
    duplicates: 0,
    crawlers: 0,
    kinds: { pageViews: 0, notFound: 0, crawlerNotFound: 0 },
    rejected: 0,
    skipped: { unparseable: 0, method: 0, status: 0, asset: 0, empty: 0 },
    errors: [],
  };
  const add = (r: ImportResult) => {
    // The server numbers lines within the piece; the pieces before it hold total.lines.
    for (const e of r.errors) if (total.errors.length < 20) total.errors.push({ ...e, line: total.lines + e.line });
    total.lines += r.received;
    total.recorded += r.recorded;
    total.duplicates += r.duplicates;
    total.crawlers += r.crawlers;
    // A server from before `kinds` leaves them out: its summary then cannot split the views.
    for (const k of ['pageViews', 'notFound', 'crawlerNotFound'] as const) total.kinds[k] += r.kinds?.[k] ?? 0;
    total.rejected += r.rejected;
    for (const [reason, n] of Object.entries(r.skipped ?? {})) total.skipped[reason as SkipReason] += n;
  };
  const send = (piece: Buffer) =>
    client.importLog(new Uint8Array(piece.buffer as ArrayBuffer, piece.byteOffset, piece.length), { format: opts.format, map: opts.map }).catch((err: unknown) => {
      if (!(err instanceof FolioError)) throw err;
      throw new ImportError(
        err.status === 0 ? `Cannot reach the Folio server at ${url}: ${err.message}` : `The server refused the import (${err.status} ${err.code}): ${err.message}`,
      );
    });

  let bytes = 0;
  const inFlight: Promise<ImportResult>[] = [];
  try {
    const pieces = logPieces(files, {
      format: opts.format,
      fields,
      pieceBytes: PIECE_BYTES,
      onFile: (file, size) => {
        bytes = 0;
        progress.file(file, size);
      },
      onBytes: (n) => {
        bytes += n;
        progress.update(bytes, total.lines);
      },
    });
    for await (const piece of pieces) {
      const sent = send(piece);
      sent.catch(() => {}); // awaited in order below; a failure ends the import there
      inFlight.push(sent);
      if (inFlight.length >= PIECES_IN_FLIGHT) add(await inFlight.shift()!);
    }
    while (inFlight.length > 0) add(await inFlight.shift()!);
  } finally {
    await Promise.allSettled(inFlight);
  }
  progress.update(bytes, total.lines);
  return total;
}

/** Imports the files (over HTTP when `opts.url` is set, else directly), reporting to `progress` as it reads. */
export async function runImport(files: string[], opts: ImportOptions, progress: ImportProgress): Promise<ImportSummary> {
  const started = performance.now();
  for (const f of files) {
    if (f !== '-' && !existsSync(f)) throw new ImportError(`File not found: ${f}`);
    if (f !== '-' && statSync(f).isDirectory()) throw new ImportError(`${f} is a directory, not a log file.`);
  }
  const fields = fieldsFrom(opts.map);
  // The direct importer (and with it the store engines) is loaded only when there is no server to send to.
  const r = opts.url
    ? await importOverHttp(files, opts, fields, progress)
    : await (await import('../analytics/direct-import.ts')).importDirect(files, { project: opts.project, format: opts.format, fields, batch: opts.batch ?? DIRECT_BATCH }, progress);
  return {
    files: files.length,
    linesRead: r.lines,
    viewsRecorded: r.recorded,
    crawlers: r.crawlers,
    kinds: r.kinds,
    skipped: { ...r.skipped, duplicate: r.duplicates, rejected: r.rejected },
    errors: r.errors,
    seconds: (performance.now() - started) / 1000,
  };
}
