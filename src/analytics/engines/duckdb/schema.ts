// The DuckDB analytics store's layout, as numbered migrations (like the state store's): the version
// is kept in `schema_version`, and open() applies every migration above it, each in one transaction.
// Never edit a shipped migration: add the next number.
//
// Layout (designed for exact distinct counts over any day range without a big hash table):
//   events      every stored view (raw): partial-day ranges, hourly series, the agents report, retention;
//               `seq` (v2) numbers the writes: rows above compaction_state.seq are not compacted yet.
//   daily       one row per (project, day, path, visitor) with `mask` (1 human, 2 AI) and, per key,
//               the previous day that key was seen (prev_h / prev_a / prev_t). A key is counted in a
//               day range [d1, d2) exactly once: on its first row in the range, i.e. the row whose
//               previous day is before d1. So the visitors query is a filtered COUNT … GROUP BY path.
//   daily_site  the same per (project, day, visitor), for site-wide totals.
//   paths, projects   dictionaries: paths and projects are stored as integers.
//   import_keys (project, day, key) of imported log lines, so importing a file twice changes nothing.
//   not_found   views that answered 404/410 (v3), raw, with the referrer's host: the not-found report;
//               `derived_visitor` (v4) the keyed hash of address and user agent, NULL when none is known.
//   daily_keys  (v5) the first-seen layout per (project, day, kind, key, visitor): kind 1 the referring
//               host of humans' and AI views, kind 2 the agent of assistant views; raw keys (hosts,
//               agent names), so source classes and companies are mapped at query time by the lists.
//   daily_agents (v5) views per (project, day, path, agent, class) of assistants and crawlers.
//   daily_path_keys (v6) the same first-seen rows as daily_keys per (project, day, path, kind, key,
//               visitor): the AI-companies report per path of one company. A table apart, so the
//               referrers and per-company reads of daily_keys do not grow.
//   events_raw  (v7) the table behind `events` (now a view of its page views): a write appends its
//               not-found views here too (encoded as not-found.ts says), so it touches one table;
//               compaction moved them to `not_found_stored` (the old `not_found`; keyed imports
//               still go there), and the view `not_found` reads both. Since v9 they stay here.
//   path_hosts  (v8) which referring hosts daily_path_keys keeps rows of (PathHosts' key): the service
//               keeps the AI assistants' of its lists; a store opened with another choice refolds them.
import type { DuckDBConnection } from '@duckdb/node-api';
import { fold, FIRST_SEEN, foldKeys, FOLD_TEMPS } from './writes.ts';
import { AGENT_VIEW_ROWS, ALL_PATH_HOSTS, COMPACTED, KEY_ROWS } from './state.ts';
import { NOT_FOUND_DERIVED_VISITOR, NOT_FOUND_IN_PLACE, NOT_FOUND_TABLE, RAW_VIEWS } from './not-found.ts';

export interface DuckDbMigration {
  version: number;
  name: string;
  up(c: DuckDBConnection): Promise<void>;
}

const statements = (...list: string[]) => async (c: DuckDBConnection) => {
  for (const s of list) await c.run(s);
};

export const MIGRATIONS: readonly DuckDbMigration[] = [
  {
    // The layout every store had before versioning (IF NOT EXISTS: such a store takes this as version 1 unchanged).
    version: 1,
    name: 'first-seen day layout',
    up: statements(
      `CREATE TABLE IF NOT EXISTS projects (project_key INTEGER NOT NULL, project_id VARCHAR NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS paths (path_id INTEGER NOT NULL, project_key INTEGER NOT NULL, path VARCHAR NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS events (project_key INTEGER NOT NULL, ts BIGINT NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL,
         visitor BIGINT NOT NULL, cls UTINYINT NOT NULL, agent VARCHAR, referrer VARCHAR, source UTINYINT NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS recent (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, visitor BIGINT NOT NULL,
         mask UTINYINT NOT NULL, views_h INTEGER NOT NULL, views_a INTEGER NOT NULL)`,
      `CREATE TABLE IF NOT EXISTS daily (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, visitor BIGINT NOT NULL,
         mask UTINYINT NOT NULL, views_h INTEGER NOT NULL, views_a INTEGER NOT NULL, prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`,
      `CREATE TABLE IF NOT EXISTS daily_site (project_key INTEGER NOT NULL, day INTEGER NOT NULL, visitor BIGINT NOT NULL, mask UTINYINT NOT NULL,
         prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`,
      `CREATE TABLE IF NOT EXISTS import_keys (project_key INTEGER NOT NULL, day INTEGER NOT NULL, k BIGINT NOT NULL)`,
    ),
  },
  {
    // Writes append to `events` only: each write's sequence number tells which rows are not compacted
    // yet, instead of a second table written by every flush. The old `recent` rows are folded here.
    version: 2,
    name: 'write sequence instead of the recent table',
    async up(c) {
      await c.run('ALTER TABLE events ADD COLUMN seq BIGINT DEFAULT 0');
      await c.run('CREATE TABLE compaction_state (seq BIGINT NOT NULL)');
      await c.run('INSERT INTO compaction_state VALUES (0)');
      const old = 'SELECT project_key, day, path_id, visitor, mask, views_h, views_a FROM recent';
      await fold(c, 'daily', ['path_id', 'visitor'], true, old);
      await fold(c, 'daily_site', ['visitor'], false, old);
      for (const t of FOLD_TEMPS) await c.run(`DROP TABLE IF EXISTS temp.${t}`);
      await c.run('DROP TABLE recent');
    },
  },
  {
    // Not-found views (404, 410) apart from page views: they never count in the other reports.
    version: 3,
    name: 'not-found views',
    up: statements(NOT_FOUND_TABLE),
  },
  {
    // The identity the server derives from a not-found view's address and user agent, beside the
    // visitor a client may name: automatic runs count it. Existing rows read NULL (counted in none).
    version: 4,
    name: 'server-derived identity of not-found views',
    up: statements(NOT_FOUND_DERIVED_VISITOR),
  },
  {
    // The referrers and AI-companies reports read first-seen rows per referring host and per
    // assistant agent, and agents' daily view sums; the rows compacted so far are folded in here
    // (the rest by the next compaction, as any new row).
    version: 5,
    name: 'first-seen rows per referring host and agent',
    async up(c) {
      await c.run(`CREATE TABLE daily_keys (project_key INTEGER NOT NULL, day INTEGER NOT NULL, kind UTINYINT NOT NULL, k VARCHAR NOT NULL,
        visitor BIGINT NOT NULL, mask UTINYINT NOT NULL, prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`);
      await c.run(`CREATE TABLE daily_agents (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, agent VARCHAR NOT NULL,
        cls UTINYINT NOT NULL, views INTEGER NOT NULL)`);
      await fold(c, 'daily_keys', [...FIRST_SEEN.daily_keys], false, KEY_ROWS(COMPACTED));
      await c.run(`INSERT INTO daily_agents ${AGENT_VIEW_ROWS(COMPACTED)}`);
      for (const t of FOLD_TEMPS) await c.run(`DROP TABLE IF EXISTS temp.${t}`);
    },
  },
  {
    // The AI-companies report per path of one company reads first-seen rows per (path, key, visitor)
    // instead of scanning the events; the rows compacted so far are folded in here.
    version: 6,
    name: 'first-seen rows per path, referring host and agent',
    async up(c) {
      await c.run(`CREATE TABLE daily_path_keys (project_key INTEGER NOT NULL, day INTEGER NOT NULL, path_id INTEGER NOT NULL, kind UTINYINT NOT NULL,
        k VARCHAR NOT NULL, visitor BIGINT NOT NULL, mask UTINYINT NOT NULL, prev_h INTEGER, prev_a INTEGER, prev_t INTEGER)`);
      await foldKeys(c, KEY_ROWS(COMPACTED), ['daily_path_keys'], ALL_PATH_HOSTS);
      for (const t of FOLD_TEMPS) await c.run(`DROP TABLE IF EXISTS temp.${t}`);
    },
  },
  {
    // A write with not-found views touched two tables: a second appender flush and commit, ~1.5 ms per
    // write (issue 34). They now go into the page views' table, kept apart from them by their class;
    // the names the reports read become views.
    version: 7,
    name: 'not-found views in the events table until compacted',
    up: statements(
      'ALTER TABLE events RENAME TO events_raw',
      'ALTER TABLE not_found RENAME TO not_found_stored',
      ...RAW_VIEWS,
    ),
  },
  {
    // daily_path_keys keeps the host rows of the hosts a PathHosts choice names (state.ts); the choice
    // its rows were folded for is recorded here. None yet: the next open settles it (path-hosts.ts).
    version: 8,
    name: 'the referring hosts kept per path',
    up: statements('CREATE TABLE path_hosts (choice VARCHAR NOT NULL)'),
  },
  {
    // Compaction no longer moves not-found views out of events_raw: deleting them there made the
    // compactions and checkpoints after it dearer, several page views' worth per not-found view
    // (issue 34). The view reads every one left there; those moved before stay in not_found_stored.
    version: 9,
    name: 'not-found views stay in the events table',
    up: statements(NOT_FOUND_IN_PLACE),
  },
];

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

async function scalar(c: DuckDBConnection, sql: string): Promise<unknown> {
  const rows = (await c.runAndReadAll(sql)).getRows();
  return rows[0]?.[0];
}

/** The store's version: 0 for a new or pre-versioning store. */
export async function schemaVersion(c: DuckDBConnection): Promise<number> {
  await c.run(`CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL, name VARCHAR NOT NULL, applied_at BIGINT NOT NULL)`);
  return Number((await scalar(c, 'SELECT coalesce(max(version), 0) FROM schema_version')) ?? 0);
}

/**
 * Applies the migrations above the store's version, each with its version row in one transaction.
 * Returns the versions applied. A store newer than this build is refused (its layout is unknown here).
 */
export async function migrate(c: DuckDBConnection): Promise<number[]> {
  const current = await schemaVersion(c);
  if (current > LATEST_VERSION) {
    throw new Error(`The analytics store is at schema version ${current}; this Folio knows versions up to ${LATEST_VERSION}. Upgrade Folio.`);
  }
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    await c.run('BEGIN TRANSACTION');
    try {
      await m.up(c);
      await c.run(`INSERT INTO schema_version VALUES (${m.version}, '${m.name.replace(/'/g, "''")}', ${Date.now()})`);
      await c.run('COMMIT');
    } catch (err) {
      await c.run('ROLLBACK').catch(() => {});
      throw new Error(`Analytics migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
    }
    applied.push(m.version);
  }
  return applied;
}
