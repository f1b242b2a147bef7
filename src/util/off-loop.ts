// CPU-bound work on untrusted input (parsing Markdown/MDX that the model or a repository wrote) runs
// here: on a worker thread, one task at a time, with a hard time limit. A task over its limit has its
// worker terminated (the next task gets a fresh one), so no input can hold the server's only thread
// or a worker for longer than the limit. The worker runs `tasks` exported by the module at `module`.
import { Worker } from 'node:worker_threads';
import { CodedError } from '../errors.ts';
import { Serial } from './serial.ts';

export class OffLoopTimeoutError extends CodedError {
  constructor(task: string, ms: number) {
    super('task_timed_out', `${task} did not finish within ${ms / 1000} s and was stopped.`);
  }
}

export interface OffLoopOptions {
  /** Time one task may take. */
  timeoutMs: number;
  /** Heap of the worker, in MB. */
  maxHeapMb?: number;
}

interface Reply {
  id: number;
  ok: boolean;
  value?: unknown;
  error?: string;
}

export class OffLoop<Tasks extends Record<string, (...args: never[]) => unknown>> {
  readonly #module: URL;
  readonly #opts: OffLoopOptions;
  readonly #serial = new Serial();
  #worker: Worker | null = null;
  #next = 0;

  constructor(module: URL, opts: OffLoopOptions) {
    this.#module = module;
    this.#opts = opts;
  }

  /** Runs `tasks[name](...args)` on the worker; rejects with OffLoopTimeoutError past the limit. */
  run<K extends keyof Tasks & string>(name: K, ...args: Parameters<Tasks[K]>): Promise<Awaited<ReturnType<Tasks[K]>>> {
    return this.#serial.run(() => this.#runNow(name, args)) as Promise<Awaited<ReturnType<Tasks[K]>>>;
  }

  /** Stops the worker (a later task starts a new one). */
  async close(): Promise<void> {
    const w = this.#worker;
    this.#worker = null;
    if (w) await w.terminate();
  }

  #spawn(): Worker {
    const w = new Worker(new URL('./off-loop-worker.ts', import.meta.url), {
      workerData: { module: this.#module.href },
      resourceLimits: { maxOldGenerationSizeMb: this.#opts.maxHeapMb ?? 512 },
    });
    w.unref(); // an idle worker never keeps the process alive
    w.on('error', () => {
      if (this.#worker === w) this.#worker = null;
    });
    return w;
  }

  #runNow(name: string, args: unknown[]): Promise<unknown> {
    const worker = (this.#worker ??= this.#spawn());
    const id = ++this.#next;
    return new Promise((resolve, reject) => {
      const done = () => {
        clearTimeout(timer);
        worker.off('message', onMessage);
        worker.off('error', onError);
        worker.off('exit', onExit);
      };
      const onMessage = (r: Reply) => {
        if (r.id !== id) return;
        done();
        if (r.ok) resolve(r.value);
        else reject(new Error(r.error));
      };
      const onError = (err: Error) => {
        done();
        reject(err);
      };
      const onExit = () => {
        done();
        if (this.#worker === worker) this.#worker = null;
        reject(new Error(`The worker running ${name} stopped.`));
      };
      const timer = setTimeout(() => {
        done();
        if (this.#worker === worker) this.#worker = null;
        void worker.terminate();
        reject(new OffLoopTimeoutError(name, this.#opts.timeoutMs));
      }, this.#opts.timeoutMs);
      worker.on('message', onMessage);
      worker.on('error', onError);
      worker.on('exit', onExit);
      worker.postMessage({ id, name, args });
    });
  }
}
