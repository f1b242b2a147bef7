// Where the service's log goes: standard output, as pino writes it by default (asynchronously, the
// rest flushed synchronously on exit), but never waiting forever on a reader that stopped reading. A
// pipe or terminal nobody drains makes every write fail with EAGAIN: by default pino holds every
// line in memory meanwhile, and its flush on exit retries forever with Atomics.wait on the main
// thread, so a SIGTERM never ends the process.
import pino from 'pino';

/** How long log writes may wait on a blocked standard output before lines are dropped. */
export const LOG_BLOCKED_MS = 5_000;
/** Log bytes held while standard output is blocked; lines past this are dropped. */
const HELD_BYTES = 4 * 1024 * 1024;

/**
 * A destination on `fd` that retries a blocked reader for at most `blockedMs` (counted from the
 * first failed write since the last one that went through), holds up to HELD_BYTES meanwhile and
 * drops the rest. A log line that cannot be written never stops the service (there is nowhere left
 * to report it).
 */
export function logDestination(fd = 1, blockedMs = LOG_BLOCKED_MS): pino.DestinationStream {
  let blockedSince: number | null = null;
  const dest = pino.destination({
    dest: fd,
    sync: false,
    maxLength: HELD_BYTES,
    retryEAGAIN: () => {
      blockedSince ??= Date.now();
      return Date.now() - blockedSince < blockedMs;
    },
  });
  // Whether a write failed for another reason than a full pipe (a terminal that has gone: EIO).
  let broken = false;
  // A retry reports a write of 0 bytes: only bytes written mean the reader is back.
  dest.on('write', (n: number) => {
    if (n > 0) {
      blockedSince = null;
      broken = false;
    }
  });
  dest.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EAGAIN' && err.code !== 'EBUSY') broken = true;
  });
  // The flush on exit retries any other error forever (sonic-boom 4), so it is skipped once a write
  // has failed so; and it throws once the retries of a full pipe are given up. Either way the lines
  // held are dropped and the exit goes on.
  const flushSync = dest.flushSync.bind(dest);
  dest.flushSync = () => {
    if (broken) return;
    try {
      flushSync();
    } catch {
      // dropped
    }
  };
  return dest;
}
