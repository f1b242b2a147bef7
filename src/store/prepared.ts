// Hot-path queries compiled once: later calls only swap the parameters, skipping Kysely's compiler.
import type { CompiledQuery, Compilable, Kysely } from 'kysely';
import type { StoreDialect } from './dialect.ts';

/** Where prepared reads run: the dialect's committed-read path, or plainly through Kysely. */
export type ReadTarget = Pick<StoreDialect, 'readCommitted' | 'dataVersion'> | Kysely<any>;

/**
 * A read of committed data on a hot path. `query` is built with placeholders (':id') for every
 * parameter; the returned function takes an object of their values.
 */
export function preparedRead<R, K extends string>(target: ReadTarget, query: Compilable<R>, names: readonly K[]) {
  const compiled = query.compile();
  const order = compiled.parameters.map((p) => names.findIndex((n) => p === `:${n}`));
  if (order.some((i) => i < 0)) throw new Error(`preparedRead: parameters must be placeholders :${names.join(', :')}`);
  return async (values: Record<K, unknown>): Promise<R[]> => {
    const q: CompiledQuery<R> = { ...compiled, parameters: order.map((i) => values[names[i]]) };
    return 'readCommitted' in target ? target.readCommitted(q) : (await target.executeQuery(q)).rows;
  };
}
