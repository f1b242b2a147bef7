// Which referring hosts `daily_path_keys` keeps rows of (PathHosts, state.ts) is a choice recorded in
// `path_hosts`. A store opened with another choice (the operator edited the lists, the default of a
// test or tool, or an upgraded store that kept every host) refolds its per-path host rows from the
// compacted events, which are kept until retention: a host newly listed as an AI assistant gets its
// whole history per path, and the rows of hosts no longer kept go. One transaction, at open, before
// any read or write.
import type { DuckDBConnection } from '@duckdb/node-api';
import { KEY_KIND } from '../../traffic-class.ts';
import { COMPACTED, KEY_ROWS, rows, type PathHosts } from './state.ts';
import { FOLD_TEMPS, foldKeys } from './writes.ts';

/** Makes the store's per-path host rows those of `pathHosts` (nothing to do when they are). */
export async function settlePathHosts(w: DuckDBConnection, pathHosts: PathHosts): Promise<void> {
  const stored = await rows(w, 'SELECT choice FROM path_hosts');
  if (stored.length === 1 && stored[0].choice === pathHosts.key) return;
  await w.run('BEGIN TRANSACTION');
  try {
    await w.run(`DELETE FROM daily_path_keys WHERE kind = ${KEY_KIND.host}`);
    // The host rows of the compacted events only: the agents' rows stay as they are, and the rows not
    // compacted yet are folded by the next compaction (with this choice).
    await foldKeys(w, `SELECT * FROM (${KEY_ROWS(COMPACTED)}) WHERE kind = ${KEY_KIND.host}`, ['daily_path_keys'], pathHosts);
    await w.run('DELETE FROM path_hosts');
    await w.run('INSERT INTO path_hosts VALUES ($1)', [pathHosts.key]);
    await w.run('COMMIT');
  } catch (err) {
    await w.run('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    for (const t of FOLD_TEMPS) await w.run(`DROP TABLE IF EXISTS temp.${t}`).catch(() => {});
  }
}
