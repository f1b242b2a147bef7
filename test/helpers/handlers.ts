// Job handlers for tests: scripted turns that record what ran, when, and in which order.
import { setTimeout as sleep } from 'node:timers/promises';
import { JobFailure, type JobContext, type JobHandler, type TurnResult } from '../../src/jobs/handler.ts';
import { untypedEmit } from './untyped-events.ts';

export interface RecordedTurn {
  jobId: string;
  seq: number;
  prompt: string;
  historyLength: number;
}

/** Completes each turn after `delayMs`, or as `script` says; records every turn and concurrent runs. */
export class ScriptedHandler implements JobHandler {
  readonly turns: RecordedTurn[] = [];
  /** Highest number of simultaneous turns seen per job (must stay 1). */
  readonly maxConcurrentPerJob = new Map<string, number>();
  private readonly inFlight = new Map<string, number>();
  delayMs: number;
  script?: (ctx: JobContext) => Promise<TurnResult>;

  constructor(opts: { delayMs?: number; script?: (ctx: JobContext) => Promise<TurnResult> } = {}) {
    this.delayMs = opts.delayMs ?? 0;
    this.script = opts.script;
  }

  async runTurn(ctx: JobContext): Promise<TurnResult> {
    const id = ctx.job.id;
    const n = (this.inFlight.get(id) ?? 0) + 1;
    this.inFlight.set(id, n);
    this.maxConcurrentPerJob.set(id, Math.max(n, this.maxConcurrentPerJob.get(id) ?? 0));
    this.turns.push({ jobId: id, seq: ctx.message.seq, prompt: ctx.message.prompt, historyLength: ctx.history.length });
    try {
      await untypedEmit(ctx.emit)('test.turn', { seq: ctx.message.seq });
      if (this.script) return await this.script(ctx);
      if (this.delayMs > 0) await sleep(this.delayMs, undefined, { signal: ctx.signal });
      return { title: `Turn ${ctx.message.seq}`, summary: `Handled: ${ctx.message.prompt}`, prLink: null };
    } finally {
      this.inFlight.set(id, (this.inFlight.get(id) ?? 1) - 1);
    }
  }
}

/** A turn that waits until the test opens it (or the run is aborted). */
export function gatedScript(): { script: (ctx: JobContext) => Promise<TurnResult>; open: () => void; started: Promise<void> } {
  let open!: () => void;
  let markStarted!: () => void;
  const gate = new Promise<void>((r) => (open = r));
  const started = new Promise<void>((r) => (markStarted = r));
  return {
    open,
    started,
    async script(ctx) {
      markStarted();
      await new Promise<void>((resolve, reject) => {
        gate.then(resolve);
        ctx.signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
      });
      return { title: 'Done', summary: 'ok', prLink: null };
    },
  };
}

export const failingScript = (code: string, message: string) => async (): Promise<TurnResult> => {
  throw new JobFailure(code, message);
};

/** Polls `fn` until it returns a truthy value. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, stepMs = 50): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > end) throw new Error('condition not met in time');
    await sleep(stepMs);
  }
}
