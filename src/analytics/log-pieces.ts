// Raw log lines cut into pieces for the bulk endpoint: `folio analytics import --url` sends each piece
// as one request, so memory and the time of one request stay bounded and a failed piece is retried
// alone. The server numbers identical lines within one second per request (log-lines/content-key.ts Repeats, which
// restarts whenever an accepted line has another time), so a piece ends only where the next accepted
// line has another time than the last one: pieces then get the same content keys as one direct import.
import { ImportError } from './import-error.ts';
import { LineConverter, type LogFormat } from './log-lines/line-converter.ts';
import { logReadProblem, openLogBytes } from './log-lines/log-files.ts';

export interface LogPiecesOptions {
  format: LogFormat;
  fields: Record<string, string[]>;
  /** A piece is cut at the first safe line break after this many bytes. */
  pieceBytes: number;
  onFile?(file: string, size: number | null): void;
  /** Bytes read from the files (compressed bytes for .gz), for progress. */
  onBytes?(n: number): void;
}

/** A piece that found no safe cut by this many times pieceBytes is cut anyway (a second with that many lines). */
const MAX_PIECE_FACTOR = 4;
const NL = 10;

/**
 * The lines of `files` (`-` is stdin, `.gz` decompressed) as pieces of whole lines, in order; a file
 * that does not end with a line break gets one, as if each file were read on its own.
 */
export async function* logPieces(files: string[], opts: LogPiecesOptions): AsyncGenerator<Buffer> {
  const cutter = new PieceCutter(opts);
  for (const file of files) {
    let last = NL;
    try {
      const { stream, size } = openLogBytes(file, (n) => opts.onBytes?.(n));
      opts.onFile?.(file, size);
      for await (const chunk of stream as AsyncIterable<Buffer>) {
        if (chunk.length === 0) continue;
        last = chunk[chunk.length - 1];
        yield* cutter.add(chunk);
      }
    } catch (err) {
      const problem = logReadProblem(err, file);
      throw problem === null ? err : new ImportError(problem);
    }
    if (last !== NL) yield* cutter.add(Buffer.of(NL));
  }
  const rest = cutter.rest();
  if (rest.length > 0) yield rest;
}

class PieceCutter {
  private readonly opts: LogPiecesOptions;
  private parts: Buffer[] = [];
  private size = 0;
  /** Where the search for a cut goes on (a line start in the joined parts), or -1 before it began. */
  private scan = -1;
  /** The time of the last accepted line before `scan`. */
  private lastTime: number | null = null;
  private converter: LineConverter;

  constructor(opts: LogPiecesOptions) {
    this.opts = opts;
    this.converter = new LineConverter(opts.format, opts.fields);
  }

  *add(chunk: Buffer): Generator<Buffer> {
    this.parts.push(chunk);
    this.size += chunk.length;
    while (this.size >= this.opts.pieceBytes) {
      const buf = this.parts.length === 1 ? this.parts[0] : Buffer.concat(this.parts);
      this.parts = [buf];
      const cut = this.findCut(buf);
      if (cut === null) return; // more bytes needed
      yield buf.subarray(0, cut);
      const rest = buf.subarray(cut);
      this.parts = rest.length > 0 ? [rest] : [];
      this.size = rest.length;
      this.scan = -1;
      this.lastTime = null;
    }
  }

  rest(): Buffer {
    return Buffer.concat(this.parts);
  }

  /** The time of an accepted line, or null for a line the server skips or rejects. */
  private timeOf(buf: Buffer, start: number, end: number): number | null {
    if (end > start && buf[end - 1] === 13) end--;
    if (!this.converter.next(buf.toString('utf8', start, end))) return null;
    return this.converter.rec.ts;
  }

  /** A byte offset to cut at, or null when the joined parts hold no safe cut yet. */
  private findCut(buf: Buffer): number | null {
    if (this.scan < 0) {
      // The first line break at or after pieceBytes; the last accepted line before it sets the time.
      const firstBreak = buf.indexOf(NL, this.opts.pieceBytes - 1);
      if (firstBreak === -1) return null;
      this.scan = firstBreak + 1;
      for (let end = firstBreak; end > 0 && this.lastTime === null; ) {
        const start = buf.lastIndexOf(NL, end - 1) + 1;
        this.lastTime = this.timeOf(buf, start, end);
        end = start - 1;
      }
      if (this.lastTime === null) return this.scan; // no accepted line before: any cut is safe
    }
    for (let start = this.scan; start < buf.length; ) {
      const nl = buf.indexOf(NL, start);
      if (nl === -1) break;
      const time = this.timeOf(buf, start, nl);
      if (time !== null && time !== this.lastTime) return start;
      start = this.scan = nl + 1;
    }
    return buf.length >= this.opts.pieceBytes * MAX_PIECE_FACTOR ? this.scan : null;
  }
}
