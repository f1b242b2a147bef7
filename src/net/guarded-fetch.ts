// fetch for URLs that users configure (webhook receivers, the code-host API of a project's
// repository). The address is checked when the connection is made, by resolving the name here and
// connecting to exactly the address that passed (so a name cannot resolve to a public address for a
// check and to an internal one for the connection), and again for every redirect, which opens its
// own connection through the same connector. Operators' own URLs (model providers, GITHUB_API_URL,
// CLICKHOUSE_URL) do not use this.
import { Agent, buildConnector, fetch as undiciFetch } from 'undici';
import { resolveAllowed, systemResolve, type OutboundPolicy, type Resolve } from './address-policy.ts';

export type GuardedFetch = typeof globalThis.fetch;

export interface GuardedFetchOptions {
  /** Name resolution (tests map names to chosen addresses). */
  resolve?: Resolve;
  /** Connect timeout in ms. */
  connectTimeoutMs?: number;
}

export function createGuardedFetch(policy: OutboundPolicy, opts: GuardedFetchOptions = {}): GuardedFetch {
  const resolve = opts.resolve ?? systemResolve;
  const connect = buildConnector({ timeout: opts.connectTimeoutMs ?? 10_000 });
  const dispatcher = new Agent({
    connect(options, callback) {
      resolveAllowed(options.hostname, policy, resolve).then(
        ({ address }) => connect({ ...options, hostname: address }, callback),
        (err: Error) => callback(err, null),
      );
    },
  });
  return ((input: Parameters<GuardedFetch>[0], init?: Parameters<GuardedFetch>[1]) =>
    undiciFetch(input as never, { ...(init as object), dispatcher } as never)) as unknown as GuardedFetch;
}

/** The refusal behind a failed guarded fetch (fetch wraps connector errors as `cause`), or null. */
export function refusalOf(err: unknown): Error | null {
  for (let e = err as { cause?: unknown; code?: string } | undefined; e; e = e.cause as typeof e) {
    if (e.code === 'outbound_address_refused') return e as unknown as Error;
  }
  return null;
}
