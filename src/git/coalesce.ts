// Coalesces concurrent requests for the same work (a fetch of one mirror with one set of credentials):
// a caller that arrives while a round is running joins the next round, which starts when the running
// one ends, so every caller gets a round that began after it asked, and N concurrent callers cost at
// most two rounds. A caller that aborts stops waiting at once; a round nobody waits for any more is
// aborted (its git process killed) or, if it has not started, dropped.

interface Round {
  readonly controller: AbortController;
  waiters: number;
  started: boolean;
  /** Settles with the work's outcome. */
  done: Promise<void>;
}

function abortError(signal: AbortSignal): Error {
  const reason = signal.reason;
  if (reason instanceof Error && reason.name === 'AbortError') return reason;
  const err = new Error(`Aborted: ${reason instanceof Error ? reason.message : String(reason)}`);
  err.name = 'AbortError';
  return err;
}

export class Coalescer {
  readonly #running = new Map<string, Round>();
  readonly #queued = new Map<string, Round>();
  /** Rounds that actually ran, per key (for tests and benchmarks). */
  readonly rounds = new Map<string, number>();

  /** Runs `work` for `key`, or joins a round that will start after every round already running. */
  run(key: string, work: (signal: AbortSignal) => Promise<void>, signal?: AbortSignal): Promise<void> {
    if (signal?.aborted) return Promise.reject(abortError(signal));
    let round = this.#queued.get(key);
    if (!round) {
      const running = this.#running.get(key);
      round = this.#newRound(key, work, running?.done);
    }
    return this.#join(key, round, signal);
  }

  #newRound(key: string, work: (signal: AbortSignal) => Promise<void>, after: Promise<void> | undefined): Round {
    const controller = new AbortController();
    const round: Round = { controller, waiters: 0, started: false, done: Promise.resolve() };
    const start = async (): Promise<void> => {
      if (this.#queued.get(key) === round) this.#queued.delete(key);
      if (controller.signal.aborted) throw abortError(controller.signal);
      round.started = true;
      this.#running.set(key, round);
      this.rounds.set(key, (this.rounds.get(key) ?? 0) + 1);
      try {
        await work(controller.signal);
      } finally {
        if (this.#running.get(key) === round) this.#running.delete(key);
      }
    };
    round.done = after ? after.catch(() => undefined).then(start) : start();
    round.done.catch(() => undefined); // outcomes reach callers through #join
    if (after) this.#queued.set(key, round);
    return round;
  }

  #join(key: string, round: Round, signal?: AbortSignal): Promise<void> {
    round.waiters++;
    return new Promise<void>((resolve, reject) => {
      let left = false;
      const onAbort = () => {
        if (left) return;
        left = true;
        reject(abortError(signal!));
        if (--round.waiters === 0) {
          // Nobody waits for this round any more: drop it if queued, stop its process if running.
          if (this.#queued.get(key) === round) this.#queued.delete(key);
          round.controller.abort(signal!.reason);
        }
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      round.done.then(
        () => {
          signal?.removeEventListener('abort', onAbort);
          if (!left) resolve();
        },
        (err: unknown) => {
          signal?.removeEventListener('abort', onAbort);
          if (!left) reject(err);
        },
      );
    });
  }
}
