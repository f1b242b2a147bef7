// The one retry policy, on p-retry: run an operation again while it fails in a way worth retrying,
// waiting an exponential backoff (with jitter, so retries do not align) between runs, or the longer
// wait the failure itself asks for (a Retry-After), never past a deadline. The job writes, the agent's
// model calls and the webhook outbox's delays use it; the typed client (src/client/), bundled alone
// for browsers, runs p-retry itself the same way.
import { setTimeout as wait } from 'node:timers/promises';
import pRetry from 'p-retry';

export interface Backoff {
  baseMs: number;
  maxMs: number;
  /** Spread each delay ±25%. */
  jitter?: boolean;
}

/** base·2^(attempt−1) ms, capped at `maxMs`; with `jitter`, spread ±25% so retries do not align. */
export function backoffDelay(attempt: number, opts: Backoff): number {
  const delay = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  return opts.jitter ? delay * (0.75 + Math.random() * 0.5) : delay;
}

export interface RetryPolicy {
  /** Runs at most this many times. */
  attempts: number;
  /** Whether a failure is worth another run (a TypeError only when it is a network error: p-retry's rule). */
  retryable: (err: unknown) => boolean;
  /** The wait between runs; without it the next run starts at once. */
  delay?: Backoff;
  /** A wait the failure asks for, in ms (a provider's Retry-After): taken when longer than the backoff. */
  asked?: (err: unknown) => number | null;
  /** No wait goes past this time (ms since the epoch). */
  deadline?: number;
  /** Ends the waiting and the runs: the promise rejects with its reason. */
  signal?: AbortSignal;
  /** Told before each wait: which run failed (from 1), how long the wait is, and why. */
  onRetry?: (retry: { attempt: number; delayMs: number; error: unknown }) => void | Promise<void>;
}

/** Runs `fn` until it succeeds, fails with an error `retryable` refuses, or has run `attempts` times. */
export function retrying<T>(fn: (attempt: number) => Promise<T>, policy: RetryPolicy): Promise<T> {
  return pRetry(fn, {
    retries: Math.max(0, policy.attempts - 1),
    // The waits are this policy's (a Retry-After may lengthen one), taken once a retry is decided.
    minTimeout: 0,
    signal: policy.signal,
    shouldRetry: async ({ error, attemptNumber }) => {
      if (!policy.retryable(error)) return false;
      const backoff = policy.delay ? backoffDelay(attemptNumber, policy.delay) : 0;
      const longest = Math.max(backoff, policy.asked?.(error) ?? 0);
      const delayMs = policy.deadline === undefined ? longest : Math.min(longest, Math.max(0, policy.deadline - Date.now()));
      await policy.onRetry?.({ attempt: attemptNumber, delayMs, error });
      if (delayMs > 0) await wait(delayMs, undefined, { signal: policy.signal });
      return true;
    },
  });
}
