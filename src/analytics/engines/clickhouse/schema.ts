// The ClickHouse analytics store's layout, as numbered migrations (like the state store's): the version
// is kept in `schema_version`; open() and `folio migrate` apply every migration above it. Never edit a
// shipped migration: add the next number. Statements parse on 18.16 (Debian) and current releases.
//
// Tables (MergeTree family, PARTITION BY month where rows have a day, so retention drops whole months):
//   events            every stored view, ORDER BY (project, date, ts): hourly series, the agents report,
//                     partial-day range edges, import dedupe (import_key). `ins`: when it was written (ms).
//   daily, daily_site views per (project, date, path?, visitor), SummingMergeTree fed by materialized
//                     views: the views query and partial-day visitor ranges.
//   pending           (v2) the visitor rows of events by insertion time, fed by a materialized view: the
//                     rows a fold takes, and the not-yet-folded rows a query adds.
//   seen, seen_site   (v2) the first-seen layout (fold.ts): exact distinct visitors over whole days.
//   fold_state        (v2) the fold watermark: events with ins ≤ watermark are in seen/seen_site.
//   not_found         (v3) views that answered 404/410, raw; `derived_visitor` (v4) the keyed hash of
//                     address and user agent, NULL when none is known.
//   pending_keys      (v5) the key rows of events (keys.ts: referring host, assistant agent) by insertion
//                     time, fed by two materialized views: folded with `pending`, in the same window.
//                     `path` (v6): the view's path, NULL in rows written before migration 6.
//   seen_keys         (v5) the first-seen layout per (project, kind, day, key, visitor): the referrers and
//                     AI-companies reports over whole days.
//   daily_agents      (v5) views per (project, date, agent, class) of assistants and crawlers,
//                     SummingMergeTree fed by a materialized view: the AI-companies report per company.
//   seen_path_keys    (v6) the first-seen layout per (project, kind, day, key, path, visitor): the
//                     AI-companies report per path of one company.
//   day_keys          (v7) the distinct keys per (project, kind, day), a set filled by each fold: which
//                     referring hosts a range has (a company's, the AI answers'), without reading a row
//                     per visitor.
//   agent_path_views  (v8) views per (project, agent, date, path, class) of assistants and crawlers,
//                     SummingMergeTree fed by a materialized view from v8 on (no backfill: a day whose
//                     sums differ from daily_agents' is read from events): the per-path report.
import { CLASS_CODE, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import type { ClickHouseConnection } from './connection.ts';
import { addDerivedVisitor, notFoundTable } from './not-found.ts';
import { dayKeysStatement, foldStatement, FOLD_SETTINGS } from './fold.ts';
import { agentViewRows, KEY_COLUMNS, KEY_PATH, keyRows, PATH_KEY_COLUMNS } from './keys.ts';
import { raw, sql, type Sql } from './sql.ts';

export interface ClickHouseMigration {
  version: number;
  name: string;
  up(c: ClickHouseConnection, db: Sql, database: string): Promise<void>;
}

const statements =
  (...list: ((db: Sql) => Sql)[]) =>
  async (c: ClickHouseConnection, db: Sql) => {
    for (const s of list) await c.command(s(db));
  };

export const MIGRATIONS: readonly ClickHouseMigration[] = [
  {
    // The layout every store had before versioning (IF NOT EXISTS: such a store takes this as version 1 unchanged).
    version: 1,
    name: 'events and per-day tables',
    up: statements(
      (db) => sql`CREATE TABLE IF NOT EXISTS ${db}.events (
        project String, date Date, ts UInt64, path String, visitor UInt64, cls UInt8,
        agent Nullable(String), referrer Nullable(String), source UInt8, import_key Nullable(Int64)
      ) ENGINE = MergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, ts)`,
      (db) => sql`CREATE TABLE IF NOT EXISTS ${db}.daily (
        project String, date Date, path String, visitor UInt64, views_h UInt64, views_a UInt64
      ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, path, visitor)`,
      (db) => sql`CREATE TABLE IF NOT EXISTS ${db}.daily_site (
        project String, date Date, visitor UInt64, views_h UInt64, views_a UInt64
      ) ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, visitor)`,
      (db) => sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_mv TO ${db}.daily AS
        SELECT project, date, path, visitor, toUInt64(countIf(cls = ${CLASS_CODE.human})) AS views_h, toUInt64(countIf(cls = ${CLASS_CODE.ai})) AS views_a
        FROM ${db}.events WHERE cls <= ${LAST_VISITOR_CODE} GROUP BY project, date, path, visitor`,
      (db) => sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_site_mv TO ${db}.daily_site AS
        SELECT project, date, visitor, toUInt64(countIf(cls = ${CLASS_CODE.human})) AS views_h, toUInt64(countIf(cls = ${CLASS_CODE.ai})) AS views_a
        FROM ${db}.events WHERE cls <= ${LAST_VISITOR_CODE} GROUP BY project, date, visitor`,
    ),
  },
  {
    // The first-seen layout: existing events (ins = 0 after ADD COLUMN) are folded into it here.
    version: 2,
    name: 'first-seen layout',
    async up(c, db, database) {
      const cols = await c.rows(sql`SELECT name FROM system.columns WHERE database = ${database} AND table = 'events' AND name = 'ins'`);
      if (cols.length === 0) {
        // 18.16 has no ADD COLUMN IF NOT EXISTS: another process may add it between the check and here.
        await c.command(sql`ALTER TABLE ${db}.events ADD COLUMN ins UInt64`).catch((err: Error) => {
          if (!/already exists/.test(err.message)) throw err;
        });
      }
      await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.pending (project String, date Date, path String, visitor UInt64, cls UInt8, ins UInt64)
        ENGINE = MergeTree PARTITION BY intDiv(ins, 86400000) ORDER BY ins`);
      await c.command(sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.pending_mv TO ${db}.pending AS
        SELECT project, date, path, visitor, cls, ins FROM ${db}.events WHERE cls <= ${LAST_VISITOR_CODE}`);
      for (const [table, key] of [['seen', 'path String, visitor UInt64'], ['seen_site', 'visitor UInt64']] as const) {
        await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.${raw(table)} (project String, date Date, ${raw(key)},
            mask UInt8, ph Int32, pa Int32, pt Int32, sign Int8)
          ENGINE = CollapsingMergeTree(sign) PARTITION BY toYYYYMM(date) ORDER BY (project, date, ${raw(table === 'seen' ? 'path, visitor' : 'visitor')})`);
      }
      await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.fold_state (watermark UInt64, at UInt64) ENGINE = MergeTree ORDER BY watermark`);
      // Everything stored so far (ins = 0) is folded now, in both tables, then the watermark says so.
      const old = sql`SELECT project, date, path, visitor, cls FROM ${db}.events WHERE cls <= ${LAST_VISITOR_CODE} AND ins = 0`;
      const folded = await c.rows(sql`SELECT count() AS n FROM ${db}.fold_state`);
      if (Number(folded[0]?.n ?? 0) === 0) {
        await c.command(foldStatement(db, 'seen', ['path', 'visitor'], old), FOLD_SETTINGS);
        await c.command(foldStatement(db, 'seen_site', ['visitor'], old), FOLD_SETTINGS);
        await c.insert(`${db.text}.fold_state`, [{ watermark: 0, at: Date.now() }]);
      }
    },
  },
  {
    // Not-found views (404, 410) apart from page views: they never count in the other reports.
    version: 3,
    name: 'not-found views',
    up: statements(notFoundTable),
  },
  {
    // The identity the server derives from a not-found view's address and user agent, beside the
    // visitor a client may name: automatic runs count it. Existing rows read NULL (counted in none).
    version: 4,
    name: 'server-derived identity of not-found views',
    up: addDerivedVisitor,
  },
  {
    // The first-seen key rows and the agents' view sums; the stored events are folded and summed here.
    version: 5,
    name: 'first-seen rows per referring host and agent, agents daily views',
    up: firstSeenKeys,
  },
  {
    // The first-seen key rows per path; the stored events are folded here.
    version: 6,
    name: 'first-seen rows per path of referring host and agent',
    up: firstSeenPathKeys,
  },
  {
    // The keys per day; the folded key rows are copied here.
    version: 7,
    name: 'distinct referring hosts and agents per day',
    up: dayKeys,
  },
  {
    // The agents' views per path, from now on. Nothing is copied, so nothing can be summed twice: a
    // retried migration or processes opening a new store at once only create what is missing. A day
    // with views from before (its sums differ from daily_agents') is read from events by the report.
    version: 8,
    name: 'agents views per path',
    up: statements(
      (db) => sql`CREATE TABLE IF NOT EXISTS ${db}.agent_path_views (project String, date Date, agent String, path String, cls UInt8, views UInt64)
        ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, agent, date, path, cls)`,
      (db) => sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.agent_path_views_mv TO ${db}.agent_path_views AS ${agentViewRows(db, raw('1'), true)}`,
    ),
  },
];

/**
 * Migration 5. Key rows of events written from now on reach `pending_keys` (folded with `pending`);
 * every stored event is folded into `seen_keys` here, month by month (a fold is a set union: rows
 * folded twice, by this and by a later fold, change nothing). On a store with events, `daily_agents`
 * is rebuilt whole (a retried migration must not sum a view twice): its view takes inserts from now
 * on, the events written before are summed here, so no other process may write meanwhile (`folio
 * migrate`); a new store's processes may all migrate at once.
 */
async function firstSeenKeys(c: ClickHouseConnection, db: Sql): Promise<void> {
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.pending_keys (project String, date Date, kind UInt8, k String, visitor UInt64, cls UInt8, ins UInt64)
    ENGINE = MergeTree PARTITION BY intDiv(ins, 86400000) ORDER BY ins`);
  for (const kind of ['host', 'agent'] as const) {
    await c.command(sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${raw(`pending_${kind}s_mv`)} TO ${db}.pending_keys AS ${keyRows(db, kind, raw('1'), KEY_PATH.none)}`);
  }
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.seen_keys (project String, date Date, kind UInt8, k String, visitor UInt64,
      mask UInt8, ph Int32, pa Int32, pt Int32, sign Int8)
    ENGINE = CollapsingMergeTree(sign) PARTITION BY toYYYYMM(date) ORDER BY (project, kind, date, k, visitor)`);
  const stored = (await c.rows(sql`SELECT count() AS n FROM ${db}.events`))[0]?.n;
  if (Number(stored ?? 0) > 0) {
    await c.command(sql`DROP TABLE IF EXISTS ${db}.daily_agents_mv`);
    await c.command(sql`DROP TABLE IF EXISTS ${db}.daily_agents`);
  }
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.daily_agents (project String, date Date, agent String, cls UInt8, views UInt64)
    ENGINE = SummingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, date, agent, cls)`);
  const before = Date.now();
  await c.command(sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.daily_agents_mv TO ${db}.daily_agents AS ${agentViewRows(db)}`);
  if (Number(stored ?? 0) > 0) await c.command(sql`INSERT INTO ${db}.daily_agents ${agentViewRows(db, raw(`ins < ${before}`))}`);
  for (const r of await c.rows(sql`SELECT DISTINCT toYYYYMM(date) AS m FROM ${db}.events ORDER BY m`)) {
    const month = raw(`toYYYYMM(date) = ${Number(r.m)}`);
    const source = sql`${keyRows(db, 'host', month, KEY_PATH.none)} UNION ALL ${keyRows(db, 'agent', month, KEY_PATH.none)}`;
    await c.command(foldStatement(db, 'seen_keys', KEY_COLUMNS, source), FOLD_SETTINGS);
  }
}

/**
 * Migration 6. `pending_keys` gains the path (NULL in the rows written before), its materialized
 * views are replaced by ones writing it (the new ones first: while both run a view's key rows are
 * there twice, harmless to a set union, and none is lost to a write meanwhile), then every stored
 * event is folded into `seen_path_keys`, month by month (the NULL-path rows are never folded there:
 * these events are). No fold may run meanwhile (`folio migrate`, as for migration 5). Retried, every
 * step is a no-op or a set union again.
 */
async function firstSeenPathKeys(c: ClickHouseConnection, db: Sql, database: string): Promise<void> {
  const cols = await c.rows(sql`SELECT name FROM system.columns WHERE database = ${database} AND table = 'pending_keys' AND name = 'path'`);
  if (cols.length === 0) {
    await c.command(sql`ALTER TABLE ${db}.pending_keys ADD COLUMN path Nullable(String)`).catch((err: Error) => {
      if (!/already exists/.test(err.message)) throw err;
    });
  }
  for (const kind of ['host', 'agent'] as const) {
    await c.command(sql`CREATE MATERIALIZED VIEW IF NOT EXISTS ${db}.${raw(`pending_${kind}_paths_mv`)} TO ${db}.pending_keys AS ${keyRows(db, kind, raw('1'), KEY_PATH.pending)}`);
    await c.command(sql`DROP TABLE IF EXISTS ${db}.${raw(`pending_${kind}s_mv`)}`);
  }
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.seen_path_keys (project String, date Date, kind UInt8, k String, path String, visitor UInt64,
      mask UInt8, ph Int32, pa Int32, pt Int32, sign Int8)
    ENGINE = CollapsingMergeTree(sign) PARTITION BY toYYYYMM(date) ORDER BY (project, kind, k, date, path, visitor)`);
  for (const r of await c.rows(sql`SELECT DISTINCT toYYYYMM(date) AS m FROM ${db}.events ORDER BY m`)) {
    const month = raw(`toYYYYMM(date) = ${Number(r.m)}`);
    const source = sql`${keyRows(db, 'host', month)} UNION ALL ${keyRows(db, 'agent', month)}`;
    await c.command(foldStatement(db, 'seen_path_keys', PATH_KEY_COLUMNS, source), FOLD_SETTINGS);
  }
}

/**
 * Migration 7. `day_keys` is a set (ReplacingMergeTree, read grouped): the keys of `seen_keys` are
 * copied in, month by month, and each fold adds its window's. A copy run twice, or beside another
 * process's migration or folds, adds nothing, so a retried migration and processes opening a new
 * store at once are safe; unfolded rows are read from `pending_keys` as before.
 */
async function dayKeys(c: ClickHouseConnection, db: Sql): Promise<void> {
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.day_keys (project String, date Date, kind UInt8, k String)
    ENGINE = ReplacingMergeTree PARTITION BY toYYYYMM(date) ORDER BY (project, kind, date, k)`);
  for (const r of await c.rows(sql`SELECT DISTINCT toYYYYMM(date) AS m FROM ${db}.seen_keys ORDER BY m`)) {
    await c.command(dayKeysStatement(db, sql`${db}.seen_keys`, raw(`toYYYYMM(date) = ${Number(r.m)}`)));
  }
}

export const LATEST_VERSION = MIGRATIONS[MIGRATIONS.length - 1].version;

/** The store's version: 0 for a new or pre-versioning store. */
export async function schemaVersion(c: ClickHouseConnection, db: Sql): Promise<number> {
  await c.command(sql`CREATE TABLE IF NOT EXISTS ${db}.schema_version (version UInt32, name String, applied_at UInt64) ENGINE = MergeTree ORDER BY version`);
  const r = await c.rows(sql`SELECT max(version) AS v FROM ${db}.schema_version`);
  return Number(r[0]?.v ?? 0);
}

/**
 * Applies the migrations above the store's version, then records each. Several processes starting on
 * an old store at once should not race: run `folio migrate` once before starting them.
 */
export async function migrate(c: ClickHouseConnection, db: Sql, database: string): Promise<number[]> {
  await c.command(sql`CREATE DATABASE IF NOT EXISTS ${db}`);
  const current = await schemaVersion(c, db);
  if (current > LATEST_VERSION) {
    throw new Error(`The analytics database ${database} is at schema version ${current}; this Folio knows versions up to ${LATEST_VERSION}. Upgrade Folio.`);
  }
  const applied: number[] = [];
  for (const m of MIGRATIONS) {
    if (m.version <= current) continue;
    try {
      await m.up(c, db, database);
    } catch (err) {
      throw new Error(`Analytics migration ${m.version} (${m.name}) failed: ${(err as Error).message}`, { cause: err });
    }
    await c.insert(`${db.text}.schema_version`, [{ version: m.version, name: m.name, applied_at: Date.now() }]);
    applied.push(m.version);
  }
  return applied;
}
