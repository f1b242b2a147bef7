// Opening the log files of an import: a path, `-` for stdin, `.gz` decompressed on the way.
import { createReadStream, statSync } from 'node:fs';
import { createGunzip } from 'node:zlib';
import { Transform, type Readable } from 'node:stream';

/** A clear sentence for an error reading a log file, or null for an unexpected one. */
export function logReadProblem(err: unknown, file: string): string | null {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return `File not found: ${file}`;
  if (code === 'EACCES' || code === 'EPERM') return `Cannot read ${file}: permission denied.`;
  if (code === 'Z_DATA_ERROR' || code === 'Z_BUF_ERROR') return `${file} is not a valid gzip file.`;
  return null;
}

/** Opens a log file (`-` for stdin, `.gz` decompressed) as a byte stream; counts raw bytes read for progress. */
export function openLogBytes(file: string, onBytes: (n: number) => void): { stream: Readable; size: number | null } {
  const raw: Readable = file === '-' ? process.stdin : createReadStream(file, { highWaterMark: 1 << 20 });
  const size = file === '-' ? null : statSync(file).size;
  const counter = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      onBytes(chunk.length);
      cb(null, chunk);
    },
  });
  let stream: Readable = raw.pipe(counter);
  if (file.endsWith('.gz')) stream = stream.pipe(createGunzip());
  raw.on('error', (err) => stream.destroy(err));
  return { stream, size };
}
