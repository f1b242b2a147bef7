// The one retry policy helper: exponential backoff delays, and running an operation again while it
// fails in a way worth retrying. (The agent's model calls and the dependency-free client keep their
// own: the agent imports nothing of Folio, the client ships alone.)

/** base·2^(attempt−1) ms, capped at `maxMs`; with `jitter`, spread ±25% so retries do not align. */
export function backoffDelay(attempt: number, opts: { baseMs: number; maxMs: number; jitter?: boolean }): number {
  const delay = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  return opts.jitter ? delay * (0.75 + Math.random() * 0.5) : delay;
}

/**
 * Runs `fn` until it succeeds, or fails with an error `retryable` refuses, or has run `attempts`
 * times; waits `backoffDelay` between runs when `delay` is given, else retries at once.
 */
export async function retrying<T>(
  fn: () => Promise<T>,
  opts: { attempts: number; retryable: (err: unknown) => boolean; delay?: { baseMs: number; maxMs: number; jitter?: boolean } },
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await fn();
    } catch (err) {
      if (attempt >= opts.attempts || !opts.retryable(err)) throw err;
      if (opts.delay) await new Promise((r) => setTimeout(r, backoffDelay(attempt, opts.delay!)));
    }
  }
}
