// CPU-bound work on untrusted input (Markdown/MDX the model or a repository wrote, visitors' paths
// scored against a site's pages) runs here, on the process's one small pool of worker threads
// (piscina), each task with a hard time limit: a task over its limit has its thread terminated (the
// pool starts another), so no input holds the server's thread, or a worker, for longer than that.
// A task's limit starts when a thread takes it: tasks wait their turn first. Each OffLoop names the
// module whose exported `tasks` it runs there (off-loop-worker.ts loads it).
import { fileURLToPath } from 'node:url';
import { Piscina } from 'piscina';
import { CodedError } from '../errors.ts';

export class OffLoopTimeoutError extends CodedError {
  constructor(task: string, ms: number) {
    super('task_timed_out', `${task} did not finish within ${ms / 1000} s and was stopped.`);
  }
}

/** Threads of the pool: parsing and scoring are short; two keep one slow input from stalling the rest. */
const THREADS = 2;

const pool = new Piscina({
  filename: fileURLToPath(new URL('./off-loop-worker.ts', import.meta.url)),
  minThreads: 0,
  maxThreads: THREADS,
  idleTimeout: 30_000,
  resourceLimits: { maxOldGenerationSizeMb: 512 },
});

/** Tasks running, and those waiting for a thread (so a queued task's limit does not run down while it waits). */
let running = 0;
const waiting: (() => void)[] = [];

async function turn(): Promise<void> {
  if (running < THREADS) running++;
  else await new Promise<void>((resolve) => waiting.push(resolve));
}

function done(): void {
  const next = waiting.shift();
  if (next) next();
  else running--;
}

export class OffLoop<Tasks extends Record<string, (...args: never[]) => unknown>> {
  readonly #module: string;
  readonly #timeoutMs: number;

  /** `module` exports `tasks`; each task may take `timeoutMs`. */
  constructor(module: URL, opts: { timeoutMs: number }) {
    this.#module = module.href;
    this.#timeoutMs = opts.timeoutMs;
  }

  /** Runs `tasks[name](...args)` on the pool; rejects with OffLoopTimeoutError past the limit. */
  async run<K extends keyof Tasks & string>(name: K, ...args: Parameters<Tasks[K]>): Promise<Awaited<ReturnType<Tasks[K]>>> {
    await turn();
    const signal = AbortSignal.timeout(this.#timeoutMs);
    try {
      return await pool.run({ module: this.#module, name, args }, { signal });
    } catch (err) {
      if (signal.aborted) throw new OffLoopTimeoutError(name, this.#timeoutMs);
      throw err;
    } finally {
      done();
    }
  }
}
