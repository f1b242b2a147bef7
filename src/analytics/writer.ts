// Group commit: concurrent submissions are written together in one engine transaction. A submission's
// promise resolves only after that transaction committed, so a 202 is sent only for durable events.
import type { AnalyticsEngine, StoredEvent } from './engine.ts';

export type PendingEvent = Omit<StoredEvent, 'group'>;

interface Submission {
  events: PendingEvent[];
  resolve: (r: { duplicates: number }) => void;
  reject: (err: unknown) => void;
}

export interface WriterOptions {
  flushMs: number;
  flushMaxEvents: number;
  /** Called after each committed flush (compaction scheduling, metrics). */
  afterFlush?: (events: number) => void;
}

export class GroupCommitWriter {
  private readonly engine: AnalyticsEngine;
  private readonly opts: WriterOptions;
  private queue: Submission[] = [];
  private queued = 0;
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private closed = false;
  /** Totals for metrics. */
  flushes = 0;
  written = 0;

  constructor(engine: AnalyticsEngine, opts: WriterOptions) {
    this.engine = engine;
    this.opts = opts;
  }

  submit(events: PendingEvent[]): Promise<{ duplicates: number }> {
    if (this.closed) return Promise.reject(new Error('The analytics writer is closed.'));
    if (events.length === 0) return Promise.resolve({ duplicates: 0 });
    return new Promise((resolve, reject) => {
      this.queue.push({ events, resolve, reject });
      this.queued += events.length;
      // Idle writer: write now (waiting would only add latency). Busy: everything that arrives meanwhile
      // goes into the next write, started at once when this one ends (or after flushMs at the latest).
      if (this.queued >= this.opts.flushMaxEvents || (!this.flushing && this.opts.flushMs === 0)) this.kick();
      else if (!this.timer && !this.flushing) this.timer = setTimeout(() => this.kick(), this.opts.flushMs);
    });
  }

  private kick(): void {
    if (this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
    if (this.flushing) return; // the running loop picks the queue up when it finishes
    this.flushing = this.loop().finally(() => {
      this.flushing = null;
      // A submission that came while the loop was returning saw `flushing` set and started nothing.
      if (this.queue.length > 0) this.kick();
    });
  }

  private async loop(): Promise<void> {
    while (this.queue.length > 0) {
      const batch = this.queue;
      this.queue = [];
      this.queued = 0;
      const all: StoredEvent[] = [];
      batch.forEach((s, group) => {
        for (const e of s.events) {
          (e as StoredEvent).group = group; // tagged in place: no copy per event
          all.push(e as StoredEvent);
        }
      });
      try {
        const { duplicates } = await this.engine.write(all);
        this.flushes++;
        this.written += all.length;
        batch.forEach((s, group) => s.resolve({ duplicates: duplicates.get(group) ?? 0 }));
        this.opts.afterFlush?.(all.length);
      } catch (err) {
        for (const s of batch) s.reject(err);
      }
    }
  }

  /** Writes everything queued, then refuses new submissions. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.queue.length > 0) this.kick();
    while (this.flushing) await this.flushing;
  }
}
