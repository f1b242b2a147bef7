// Progress of long commands, drawn by cli-progress on stderr when it is a terminal: a bar for work of
// known size (the bytes of a log file being imported), a spinner line for waits of unknown length (an
// agent job). Off a terminal (CI logs, pipes) nothing is redrawn; commands print plain lines instead.
import cliProgress from 'cli-progress';

/** The work of a file import, as the importer reports it. */
export interface FileProgress {
  /** A new file starts; `size` in bytes, null when unknown (stdin, or a file being decompressed). */
  file(name: string, size: number | null): void;
  /** Bytes of the current file read so far, and lines of all files. */
  update(bytes: number, lines: number): void;
  /** The bar is finished and removed from the screen's live area. */
  stop(): void;
}

/** A bar per file: how much of it is read, lines so far and lines per second. */
export function fileProgress(out: NodeJS.WriteStream, enabled: boolean): FileProgress {
  const started = performance.now();
  const bar =
    enabled && out.isTTY
      ? new cliProgress.SingleBar(
          { stream: out, format: 'importing {file} [{bar}] {percentage}% | {lines} lines | {rate} lines/s', hideCursor: true, etaBuffer: 50 },
          cliProgress.Presets.shades_classic,
        )
      : null;
  let size: number | null = null;
  let running = false;
  return {
    file(name, bytes) {
      if (running) bar?.update(size ?? 0);
      bar?.stop();
      size = bytes;
      running = true;
      bar?.start(size ?? 0, 0, { file: name === '-' ? 'stdin' : name, lines: 0, rate: 0 });
    },
    update(bytes, lines) {
      const secs = (performance.now() - started) / 1000;
      bar?.update(size === null ? 0 : bytes, { lines, rate: Math.round(lines / secs) });
    },
    stop() {
      if (running) bar?.update(size ?? 0);
      bar?.stop();
      running = false;
    },
  };
}

/** A spinner line that says what a wait is at; lines can be printed above it. */
export interface StatusLine {
  /** True when the line is drawn (a terminal); otherwise only `log` prints anything. */
  readonly live: boolean;
  /** Prints a line: above the spinner on a terminal, as a plain line otherwise. */
  log(text: string): void;
  /** Removes the spinner (prints what `log` still holds first). */
  stop(): void;
}

const FRAMES = '⠋⠙⠹⠸⠼⠴⠦⠧⠇⠏';
const FRAME_MS = 80;

/**
 * `text(elapsed)` is the line after the spinner, asked again on every frame (elapsed as m:ss); it is
 * cut to the terminal's width. Text from elsewhere must be cleaned by the caller (output.ts).
 */
export function statusLine(out: NodeJS.WriteStream, text: (elapsed: string) => string): StatusLine {
  const started = Date.now();
  const format = (_options: unknown, params: { maxWidth: number }): string => {
    const ms = Date.now() - started;
    const secs = Math.floor(ms / 1000);
    const line = `${FRAMES[Math.floor(ms / FRAME_MS) % FRAMES.length]} ${text(`${Math.floor(secs / 60)}:${String(secs % 60).padStart(2, '0')}`)}`;
    return line.length > params.maxWidth - 1 ? line.slice(0, params.maxWidth - 2) + '…' : line;
  };
  if (!out.isTTY) {
    return { live: false, log: (line) => void out.write(line.endsWith('\n') ? line : line + '\n'), stop() {} };
  }
  // A MultiBar of one: it can print lines above the bar (SingleBar cannot). Line wrapping stays on, so
  // long log lines wrap as usual; the spinner line is cut to the width above.
  const bars = new cliProgress.MultiBar({ stream: out, format, fps: 1000 / FRAME_MS, hideCursor: true, clearOnComplete: true, linewrap: true });
  bars.create(0, 0);
  let stopped = false;
  return {
    live: true,
    log(line) {
      bars.log(line.endsWith('\n') ? line : line + '\n');
    },
    stop() {
      if (stopped) return;
      stopped = true;
      bars.update(); // prints lines still waiting for the next frame
      bars.stop();
    },
  };
}
