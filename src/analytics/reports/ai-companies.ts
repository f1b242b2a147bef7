// What each AI company takes and gives back: views and distinct agents of its training and search
// crawlers, visitors and views of its assistants (user-triggered fetchers), and the distinct humans
// its assistants' answers sent (an ai_assistant referrer naming the company); per company, or with
// `company` per path of one company. Agents map to companies by the agent list (classify.ts), hosts by
// the source list (referrer-sources.ts), both at query time over the few agents and hosts in range.
// On both engines the per-company report over whole days reads the agents' view sums (daily_agents)
// and the first-seen rows per agent and per referring host (DuckDB daily_keys, ClickHouse seen_keys),
// plus the rows not compacted or folded yet; with a bound inside a day, the raw events. Per path,
// DuckDB reads the view sums and the first-seen rows per path of the company's agents and hosts
// (daily_path_keys); ClickHouse the first-seen rows per path (seen_path_keys) and the view sums per
// path (agent_path_views; days stored before them: the events). The lists are the params' rules. ClickHouse SQL for 18.16 and current.
import { AiCompaniesQuery, AiCompaniesResponse } from '../../contracts/analytics.ts';
import { CodedError } from '../../errors.ts';
import type { ClassificationRules } from '../classify.ts';
import { AGENT_VIEW_CLASSES, CLASS_CODE, HUMAN_BIT, KEY_KIND } from '../traffic-class.ts';
import { dayCond, HAS_HUMAN, tsCond, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { int, KEY_ROWS, num, UNCOMPACTED } from '../engines/duckdb/state.ts';
import { splitRange } from '../dates.ts';
import { firstIn, keysOf } from './first-seen.ts';
import { dayCond as chDayCond, HAS_BIT, tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { inList, join, raw, sql, SqlDate, type Sql } from '../engines/clickhouse/sql.ts';
import { firstDay, foldState, hostsMatching, type FoldState } from './first-seen-clickhouse.ts';
import { pathKeyRows } from '../engines/clickhouse/keys.ts';
import { NO_OWN_HOSTS, type OwnHosts } from '../own-hosts.ts';
import type { Range } from '../dates.ts';
import { clickhouseHost, clickhouseNotOwn, duckdbHost, duckdbNotOwn, needPathHosts, quote } from './referrers.ts';
import { rulesOf, type Report, type ReportParams } from './report.ts';

export interface CompanyRow {
  company: string;
  path: string | null;
  trainingViews: number;
  searchViews: number;
  crawlers: number;
  assistantVisitors: number;
  assistantViews: number;
  referredHumans: number;
}

export interface AiCompaniesReport {
  company: string | null;
  rows: CompanyRow[];
  hasMore: boolean;
}

type Params = ReportParams<typeof AiCompaniesQuery>;

export const aiCompanies: Report<typeof AiCompaniesQuery, typeof AiCompaniesResponse, AiCompaniesReport> = {
  name: 'ai-companies',
  summary: 'What each AI company takes and gives back',
  description:
    "Per company of the agent list: views and distinct agents of its training and search crawlers, distinct visitors and views of its assistants, and the distinct humans who arrived from its assistants' answers, with the crawls per referred human. With `company`, the same per path of that company (which pages it reads, which it sends readers to). Unknown company: 400 unknown_company.",
  query: AiCompaniesQuery,
  response: AiCompaniesResponse,
  duckdb,
  clickhouse,
  wire: ({ company, rows, hasMore }) => ({
    company,
    companies: rows.map((r) => ({ ...r, crawlsPerReferredHuman: r.referredHumans === 0 ? null : (r.trainingViews + r.searchViews) / r.referredHumans })),
    hasMore,
  }),
};

/** Every company the lists name: agents' and ai_assistant hosts'. */
export function knownCompanies(rules: ClassificationRules): Set<string> {
  const hosts = rules.sources.flatMap((r) => (r.category === 'ai_assistant' && r.company ? [r.company] : []));
  return new Set([...rules.agentCompanies.values(), ...hosts]);
}

/** The route's check: a `company` must be one the lists name (a typo answers 400, not an empty page). */
export function knownCompany(_range: Range, query: { company?: string }, rules: ClassificationRules): void {
  if (query.company !== undefined && !knownCompanies(rules).has(query.company)) {
    throw new CodedError('unknown_company', `No company "${query.company.slice(0, 100)}" in the agent list: use a company as GET …/ai-companies lists it, such as OpenAI.`, {
      details: [{ message: 'not a company of the agent list', path: '/querystring/company' }],
    });
  }
}

/** The ai_assistant hosts that name a company, in the order the source list checks them (first match wins). */
const hostRules = (rules: ClassificationRules) => rules.sources.map((r) => ({ host: r.host, company: r.category === 'ai_assistant' ? (r.company ?? null) : null }));

/** The views the report reads: humans (credited by referrer), assistants, search and training crawlers. */
const READ_CLASSES = [CLASS_CODE.human, CLASS_CODE.ai, CLASS_CODE.search, CLASS_CODE.training].join(', ');
const CRAWLERS = `${CLASS_CODE.search}, ${CLASS_CODE.training}`;
/** Views taken first, then readers sent: both engines' order (the contract's description). */
const ORDER = '(training_views + search_views + assistant_views) DESC, referred_humans DESC, company ASC';

/** DuckDB: the company a referring host (a column) credits, NULL for none. */
function duckdbHostCompany(host: string, rules: ClassificationRules): string {
  const hosts = hostRules(rules).map((r) => `WHEN ${host} = ${quote(r.host)} OR ${host} LIKE ${quote(`%.${r.host}`)} THEN ${r.company === null ? 'NULL' : quote(r.company)}`);
  return hosts.length ? `CASE ${hosts.join(' ')} END` : 'NULL';
}

/** DuckDB: the company of an agent (a column), NULL for none. */
function duckdbAgentCompany(agent: string, rules: ClassificationRules): string {
  const agents = [...rules.agentCompanies].map(([name, company]) => `WHEN ${quote(name)} THEN ${quote(company)}`);
  return agents.length ? `CASE ${agent} ${agents.join(' ')} END` : 'NULL';
}

/** DuckDB: the company a view credits, over columns cls, agent and host. */
const duckdbCompany = (rules: ClassificationRules) => `CASE WHEN cls = ${CLASS_CODE.human} THEN ${duckdbHostCompany('host', rules)} ELSE ${duckdbAgentCompany('agent', rules)} END`;

const DUCKDB_COUNTS = `count(*) FILTER (WHERE cls = ${CLASS_CODE.training}) AS training_views, count(*) FILTER (WHERE cls = ${CLASS_CODE.search}) AS search_views,
  count(DISTINCT agent) FILTER (WHERE cls IN (${CRAWLERS})) AS crawlers, count(DISTINCT visitor) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_visitors,
  count(*) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_views, count(DISTINCT visitor) FILTER (WHERE cls = ${CLASS_CODE.human}) AS referred_humans`;

async function duckdb(db: DuckDbReads, { projectId, range, ownHosts, rules, company, limit, offset }: Params): Promise<AiCompaniesReport> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return { company: company ?? null, rows: [], hasMore: false };
  const split = splitRange(range);
  if (split.edges.length === 0 && split.days !== 'none') {
    const own = ownHosts ?? NO_OWN_HOSTS;
    const r = rulesOf(rules);
    return company === undefined ? duckdbFirstSeen(db, pk, split.days, own, r, limit, offset) : duckdbPerPath(db, pk, split.days, own, r, company, limit, offset);
  }
  return duckdbFromEvents(db, pk, { range, ownHosts, rules, company, limit, offset }, company !== undefined);
}

/**
 * DuckDB, one company per path over whole days [d1, d2): its agents' views and crawler agents from
 * daily_agents; its assistants' visitors and the humans its hosts sent from the first rows in range
 * of its (path, agent, visitor) and (path, host, visitor) keys (daily_path_keys; its hosts: the
 * range's hosts from daily_keys, mapped to companies first), counted as distinct (path, visitor)
 * pairs (a visitor of two of its agents or hosts on one path counts once). Rows not compacted yet are
 * added as they are (sums, and rows of the distinct counts).
 */
async function duckdbPerPath(
  db: DuckDbReads,
  pk: number,
  days: { d1: number | null; d2: number | null },
  own: OwnHosts,
  rules: ClassificationRules,
  company: string,
  limit: number,
  offset: number,
): Promise<AiCompaniesReport> {
  needPathHosts(db, rules.sources);
  const p = `project_key = ${int(pk)}`;
  const dc = dayCond(days);
  const first = firstIn(days.d1);
  // Visitor rows not compacted yet (crawlers' views are not counted there: the view sums always read the events).
  const pending = (db.pending.byProject.get(pk) ?? 0) > 0;
  const agents = [...rules.agentCompanies].filter(([, c]) => c === company).map(([name]) => quote(name));
  const inList = (col: string, list: string[]) => (list.length ? `${col} IN (${list.join(', ')})` : 'false');
  const fresh = `SELECT path_id, kind, k, visitor, mask FROM (${KEY_ROWS(UNCOMPACTED)}) WHERE ${p} AND ${dc}`;
  const hostRows = `${p} AND kind = ${KEY_KIND.host} AND ${dc} AND ${duckdbNotOwn('k', own)}`;
  // The company's hosts among the range's referring hosts (few: mapped after grouping).
  const hosts = `SELECT k FROM (${keysOf(`daily_keys WHERE ${hostRows}`)}${pending ? ` UNION SELECT k FROM (${KEY_ROWS(UNCOMPACTED)}) WHERE ${hostRows}` : ''})
    WHERE ${duckdbHostCompany('k', rules)} = ${quote(company)}`;
  const views = `SELECT path_id, agent, cls, sum(views)::BIGINT AS views FROM (
      SELECT path_id, agent, cls, views FROM daily_agents WHERE ${p} AND ${dc} AND ${inList('agent', agents)}
      UNION ALL SELECT path_id, agent, cls, 1 FROM events WHERE ${p} AND ${dc} AND ${UNCOMPACTED} AND cls IN (${AGENT_VIEW_CLASSES}) AND ${inList('agent', agents)})
    GROUP BY ALL`;
  // Its assistants' keys (every row of an agent key is an assistant's view) and its hosts' keys with a
  // human's view: a scan each (one with OR would filter every row instead of pushing the conditions down).
  const assistant = `kind = ${KEY_KIND.agent} AND ${inList('k', agents)}`;
  const referred = `kind = ${KEY_KIND.host} AND k IN (SELECT k FROM company_hosts) AND ${HAS_HUMAN('mask')}`;
  const readers = `SELECT path_id, visitor, kind FROM daily_path_keys WHERE ${p} AND ${dc} AND ${assistant} AND ${first('prev_t')}
    UNION ALL SELECT path_id, visitor, kind FROM daily_path_keys WHERE ${p} AND ${dc} AND ${referred} AND ${first('prev_h')}
    ${pending ? `UNION ALL SELECT path_id, visitor, kind FROM (${fresh}) WHERE (${assistant}) OR (${referred})` : ''}`;
  const query = `WITH company_hosts AS MATERIALIZED (${hosts}), v AS (${views}),
      taken AS (SELECT path_id, sum(views) FILTER (WHERE cls = ${CLASS_CODE.training}) AS training_views, sum(views) FILTER (WHERE cls = ${CLASS_CODE.search}) AS search_views,
                  count(DISTINCT agent) FILTER (WHERE cls IN (${CRAWLERS})) AS crawlers, sum(views) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_views FROM v GROUP BY path_id),
      r AS (SELECT path_id, visitor, kind FROM (${readers}) GROUP BY ALL),
      served AS (SELECT path_id, count(*) AS n FROM r WHERE kind = ${KEY_KIND.agent} GROUP BY path_id),
      sent AS (SELECT path_id, count(*) AS n FROM r WHERE kind = ${KEY_KIND.host} GROUP BY path_id),
      c AS (SELECT path_id, coalesce(training_views, 0) AS training_views, coalesce(search_views, 0) AS search_views, coalesce(crawlers, 0) AS crawlers,
                   coalesce(served.n, 0) AS assistant_visitors, coalesce(assistant_views, 0) AS assistant_views, coalesce(sent.n, 0) AS referred_humans
            FROM taken FULL JOIN served USING (path_id) FULL JOIN sent USING (path_id))
    SELECT ${quote(company)} AS company, paths.path AS path, c.* EXCLUDE (path_id) FROM c JOIN paths USING (path_id)
    ORDER BY ${ORDER}, path ASC LIMIT ${int(limit + 1)} OFFSET ${int(offset)}`;
  return companiesReport(await db.rows(query), company, limit);
}

/**
 * DuckDB, any range, per company or per path: COUNT(DISTINCT) over the raw events (also the
 * benchmark's naive query). `narrow`, with a company: only views that may credit it are mapped (its
 * agents' views and referred humans' views), not every view of the range.
 */
export async function duckdbFromEvents(db: DuckDbReads, pk: number, { range, ownHosts, rules, company, limit, offset }: Omit<Params, 'projectId'>, narrow = false): Promise<AiCompaniesReport> {
  const agents = [...rulesOf(rules).agentCompanies].filter(([, c]) => c === company).map(([name]) => quote(name));
  const mayCredit = `((cls = ${CLASS_CODE.human} AND referrer IS NOT NULL) OR ${agents.length ? `agent IN (${agents.join(', ')})` : 'false'})`;
  const where = [`project_key = ${int(pk)}`, `cls IN (${READ_CLASSES})`, ...tsCond(range), ...(narrow && company !== undefined ? [mayCredit] : [])].join(' AND ');
  const hosted = `SELECT path_id, visitor, cls, agent, ${duckdbHost(ownHosts ?? NO_OWN_HOSTS)} AS host FROM events WHERE ${where}`;
  const credited = `SELECT path_id, visitor, cls, agent, ${duckdbCompany(rulesOf(rules))} AS company FROM (${hosted})`;
  const perPath = company !== undefined;
  const query = perPath
    ? `SELECT c.company, p.path AS path, ${DUCKDB_COUNTS} FROM (${credited}) c JOIN paths p ON p.path_id = c.path_id
        WHERE c.company = ${quote(company)} GROUP BY c.company, p.path ORDER BY ${ORDER}, path ASC`
    : `SELECT company, NULL AS path, ${DUCKDB_COUNTS} FROM (${credited}) WHERE company IS NOT NULL GROUP BY company ORDER BY ${ORDER}`;
  return companiesReport(await db.rows(`${query} LIMIT ${int(limit + 1)} OFFSET ${int(offset)}`), company, limit);
}

/**
 * DuckDB, per company over whole days [d1, d2): views per (agent, class) from daily_agents; the
 * assistants' visitors from each (agent, visitor) key's first row in range and the humans sent from
 * each (host, visitor) key's first human row, counted distinct per company (a visitor of two agents
 * or hosts of one company counts once). Agents and hosts map to companies after grouping (few of
 * them). Rows not compacted yet are added as they are (sums, and rows of the distinct counts).
 */
async function duckdbFirstSeen(
  db: DuckDbReads,
  pk: number,
  days: { d1: number | null; d2: number | null },
  own: OwnHosts,
  rules: ClassificationRules,
  limit: number,
  offset: number,
): Promise<AiCompaniesReport> {
  const p = `project_key = ${int(pk)}`;
  const dc = dayCond(days);
  const first = firstIn(days.d1);
  const fresh = (kind: number) => `SELECT k, visitor, mask FROM (${KEY_ROWS(UNCOMPACTED)}) WHERE ${p} AND kind = ${kind} AND ${dc}`;
  const views = `SELECT agent, cls, sum(views)::BIGINT AS views FROM (
      SELECT agent, cls, views FROM daily_agents WHERE ${p} AND ${dc}
      UNION ALL SELECT agent, cls, 1 FROM events WHERE ${p} AND ${dc} AND ${UNCOMPACTED} AND cls IN (${AGENT_VIEW_CLASSES}) AND agent IS NOT NULL) GROUP BY agent, cls`;
  const assistants = `SELECT k, visitor, false AS fresh FROM daily_keys WHERE ${p} AND kind = ${KEY_KIND.agent} AND ${dc} AND ${first('prev_t')}
    UNION ALL SELECT k, visitor, true FROM (${fresh(KEY_KIND.agent)})`;
  const hostRows = `${p} AND kind = ${KEY_KIND.host} AND ${dc} AND ${duckdbNotOwn('k', own)}`;
  const humans = `SELECT k, visitor, false AS fresh FROM daily_keys WHERE ${hostRows} AND ${HAS_HUMAN('mask')} AND ${first('prev_h')}
    UNION ALL SELECT k, visitor, true FROM (${fresh(KEY_KIND.host)}) WHERE ${duckdbNotOwn('k', own)} AND ${HAS_HUMAN('mask')}`;
  const query = `WITH v AS MATERIALIZED (${views}),
      agent_company AS MATERIALIZED (SELECT agent, ${duckdbAgentCompany('agent', rules)} AS company FROM (SELECT DISTINCT agent FROM v)),
      taken AS (SELECT company, sum(views) FILTER (WHERE cls = ${CLASS_CODE.training}) AS training_views, sum(views) FILTER (WHERE cls = ${CLASS_CODE.search}) AS search_views,
                  count(DISTINCT agent) FILTER (WHERE cls IN (${CRAWLERS})) AS crawlers, sum(views) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_views
                FROM v JOIN agent_company USING (agent) WHERE company IS NOT NULL GROUP BY company),
      a AS MATERIALIZED (${assistants}),
      served AS (SELECT company, n AS assistant_visitors FROM ${distinctPerCompany('a', duckdbAgentCompany('k', rules))}),
      h AS MATERIALIZED (${humans}),
      sent AS (SELECT company, n AS referred_humans FROM ${distinctPerCompany('h', duckdbHostCompany('k', rules))}),
      c AS (SELECT company, coalesce(training_views, 0) AS training_views, coalesce(search_views, 0) AS search_views, coalesce(crawlers, 0) AS crawlers,
                   coalesce(assistant_visitors, 0) AS assistant_visitors, coalesce(assistant_views, 0) AS assistant_views, coalesce(referred_humans, 0) AS referred_humans
            FROM taken FULL JOIN served USING (company) FULL JOIN sent USING (company))
    SELECT company, NULL AS path, * EXCLUDE (company) FROM c ORDER BY ${ORDER} LIMIT ${int(limit + 1)} OFFSET ${int(offset)}`;
  return companiesReport(await db.rows(query), undefined, limit);
}

/**
 * DuckDB: the distinct visitors per company (company, n) of `rows`, a CTE of rows (k, visitor, fresh):
 * first-seen rows holding each key's visitor once, and rows not compacted yet (fresh) as they are. Its
 * keys are mapped by `companyOf` (over k) once each. A company with one key and no fresh rows counts
 * that key's rows; only the rows of the others (a visitor of two keys, or also in a fresh row, counts
 * once) are grouped per (company, visitor).
 */
function distinctPerCompany(rows: string, companyOf: string): string {
  const perKey = keysOf(rows, ', count(*) AS n, bool_or(fresh) AS fresh');
  return `(WITH keyed AS MATERIALIZED (SELECT k, n, company, count(*) OVER (PARTITION BY company) > 1 OR bool_or(fresh) OVER (PARTITION BY company) AS shared
                  FROM (SELECT k, n, fresh, ${companyOf} AS company FROM (${perKey})) WHERE company IS NOT NULL)
    SELECT company, sum(n)::BIGINT AS n FROM keyed WHERE NOT shared GROUP BY company
    UNION ALL SELECT company, count(*) FROM (SELECT company, visitor FROM ${rows} JOIN keyed USING (k) WHERE shared GROUP BY ALL) GROUP BY company)`;
}

/** ClickHouse: the company an agent (a column) names, '' for none. */
function clickhouseAgentCompany(agent: Sql, rules: ClassificationRules): Sql {
  const arms = [...rules.agentCompanies].flatMap(([name, company]) => [sql`${agent} = ${name}`, sql`${company}`]);
  return arms.length ? sql`multiIf(${join(arms)}, '')` : raw(`''`);
}

/** ClickHouse: the company a referring host (a column) credits, '' for none. */
function clickhouseHostCompany(host: Sql, rules: ClassificationRules): Sql {
  const arms = hostRules(rules).flatMap((r) => [sql`(${host} = ${r.host} OR like(${host}, ${`%.${r.host}`}))`, sql`${r.company ?? ''}`]);
  return arms.length ? sql`multiIf(${join(arms)}, '')` : raw(`''`);
}

/** ClickHouse: the company a view credits ('' for none), over columns cls, agent and host. */
const clickhouseCompany = (rules: ClassificationRules): Sql =>
  sql`if(cls = ${CLASS_CODE.human}, ${clickhouseHostCompany(raw('host'), rules)}, ${clickhouseAgentCompany(raw(`ifNull(agent, '')`), rules)})`;

const CLICKHOUSE_COUNTS = raw(`countIf(cls = ${CLASS_CODE.training}) AS training_views, countIf(cls = ${CLASS_CODE.search}) AS search_views,
  uniqExactIf(ifNull(agent, ''), cls IN (${CRAWLERS})) AS crawlers, uniqExactIf(visitor, cls = ${CLASS_CODE.ai}) AS assistant_visitors,
  countIf(cls = ${CLASS_CODE.ai}) AS assistant_views, uniqExactIf(visitor, cls = ${CLASS_CODE.human}) AS referred_humans`);

/** A ClickHouse query over whole days [d1, d2): the range's first day as links compare it, its rows' scope, and the fold state there. */
interface WholeDays extends FoldState {
  first: Sql;
  scope: Sql;
  own: OwnHosts;
  rules: ClassificationRules;
  limit: number;
  offset: number;
}

async function clickhouse(db: ClickHouseReads, params: Params): Promise<AiCompaniesReport> {
  const split = splitRange(params.range);
  if (split.edges.length > 0 || split.days === 'none') return clickhouseFromEvents(db, params);
  const { d1, d2 } = split.days;
  const days = chDayCond(d1, d2);
  if (days.text === '0') return companiesReport([], params.company, params.limit);
  const scope = sql`project = ${params.projectId} AND ${days}`;
  const w: WholeDays = { first: firstDay(d1), scope, ...(await foldState(db, scope)), own: params.ownHosts ?? NO_OWN_HOSTS, rules: rulesOf(params.rules), limit: params.limit, offset: params.offset };
  return params.company === undefined ? clickhouseFirstSeen(db, w) : clickhousePerPath(db, w, params.company);
}

/** The report's columns summed over the union of its parts (each part fills some, zero in the others). */
const SUMMED = raw(`sum(training_views) AS training_views, sum(search_views) AS search_views, sum(crawlers) AS crawlers,
  sum(assistant_visitors) AS assistant_visitors, sum(assistant_views) AS assistant_views, sum(referred_humans) AS referred_humans`);

/**
 * ClickHouse, any range, per company or per path: uniqExact over the raw events (also the
 * benchmark's naive query). With a company, only views that may credit it are mapped (its agents'
 * views and referred humans' views), not every view of the range.
 */
export async function clickhouseFromEvents(db: ClickHouseReads, { projectId, range, ownHosts, rules, company, limit, offset }: Params): Promise<AiCompaniesReport> {
  const agents = [...rulesOf(rules).agentCompanies].filter(([, c]) => c === company).map(([name]) => name);
  const mayCredit = company === undefined ? raw('1') : sql`((cls = ${CLASS_CODE.human} AND referrer IS NOT NULL) OR ifNull(agent, '') IN ${inList(agents)})`;
  const hosted = sql`SELECT path, visitor, cls, agent, ${clickhouseHost(ownHosts ?? NO_OWN_HOSTS)} AS host FROM ${db.db}.events
    WHERE project = ${projectId} AND ${chTsCond(range.from, range.to)} AND cls IN (${raw(READ_CLASSES)}) AND ${mayCredit}`;
  const credited = sql`SELECT path, visitor, cls, agent, ${clickhouseCompany(rulesOf(rules))} AS company FROM (${hosted})`;
  const query =
    company !== undefined
      ? sql`SELECT company, path, ${CLICKHOUSE_COUNTS} FROM (${credited}) WHERE company = ${company} GROUP BY company, path ORDER BY ${raw(ORDER)}, path ASC`
      : sql`SELECT company, ${CLICKHOUSE_COUNTS} FROM (${credited}) WHERE company != '' GROUP BY company ORDER BY ${raw(ORDER)}`;
  return companiesReport(await db.rows(sql`${query} LIMIT ${offset}, ${limit + 1}`), company, limit);
}

/**
 * ClickHouse, per company over whole days [d1, d2): views per (agent, class) from daily_agents; the
 * assistants' visitors from each (agent, visitor) key's first row in range and the humans sent
 * from each (host, visitor) key's first human row (seen_keys), grouped by key first so the few
 * agents and hosts map to companies once each, then distinct per (company, visitor). Rows not folded
 * yet are added as they are (daily_agents is complete: its materialized view sums every insert).
 */
async function clickhouseFirstSeen(db: ClickHouseReads, { first, scope, foldedUpTo, unfolded, own, rules, limit, offset }: WholeDays): Promise<AiCompaniesReport> {
  const views = sql`SELECT agent, cls, sum(views) AS n_views FROM ${db.db}.daily_agents WHERE ${scope} GROUP BY agent, cls`;
  const taken = sql`SELECT ${clickhouseAgentCompany(raw('agent'), rules)} AS company, toUInt64(sumIf(n_views, cls = ${CLASS_CODE.training})) AS training_views,
      toUInt64(sumIf(n_views, cls = ${CLASS_CODE.search})) AS search_views, toUInt64(uniqExactIf(agent, cls IN (${raw(CRAWLERS)}))) AS crawlers,
      toUInt64(0) AS assistant_visitors, toUInt64(sumIf(n_views, cls = ${CLASS_CODE.ai})) AS assistant_views, toUInt64(0) AS referred_humans
    FROM (${views}) GROUP BY company`;
  /** Distinct visitors per company of one kind's keys: their first rows matching `folded`, plus unfolded rows matching `fresh`. */
  const perCompany = (kind: number, folded: Sql, fresh: Sql, company: (k: Sql) => Sql) => {
    const where = sql`${scope} AND kind = ${kind}`;
    const keyRows = sql`SELECT k, visitor FROM ${db.db}.seen_keys WHERE ${where} AND ${folded}`;
    const rows = unfolded ? sql`${keyRows} UNION ALL SELECT k, visitor FROM ${db.db}.pending_keys WHERE ins > ${foldedUpTo} AND ${where} AND ${fresh}` : keyRows;
    const byKey = sql`SELECT ${company(raw('k'))} AS company, vs FROM (SELECT k, groupArray(visitor) AS vs FROM (${rows}) GROUP BY k)`;
    return sql`SELECT company, toUInt64(uniqExact(v)) AS n FROM (${byKey}) ARRAY JOIN vs AS v WHERE company != '' GROUP BY company`;
  };
  const served = perCompany(KEY_KIND.agent, sql`pt < ${first}`, raw('1'), (k) => clickhouseAgentCompany(k, rules));
  const notOwn = clickhouseNotOwn('k', own);
  const sent = perCompany(
    KEY_KIND.host,
    sql`${notOwn} AND ${HAS_BIT('mask', HUMAN_BIT)} AND ph < ${first}`,
    sql`${notOwn} AND cls = ${HUMAN_BIT}`,
    (k) => clickhouseHostCompany(k, rules),
  );
  const zero = raw('toUInt64(0)');
  const all = sql`${taken}
    UNION ALL SELECT company, ${zero}, ${zero}, ${zero}, n, ${zero}, ${zero} FROM (${served})
    UNION ALL SELECT company, ${zero}, ${zero}, ${zero}, ${zero}, ${zero}, n FROM (${sent})`;
  const query = sql`SELECT company, ${SUMMED}
    FROM (${all}) WHERE company != '' GROUP BY company ORDER BY ${raw(ORDER)} LIMIT ${offset}, ${limit + 1}`;
  return companiesReport(await db.rows(query), undefined, limit);
}

/**
 * ClickHouse, one company per path over whole days [d1, d2): its agents' views and crawler agents
 * from agent_path_views (viewsPerPath); its assistants' visitors and the humans its hosts sent from
 * the first rows in range of its (agent, path, visitor) and (host, path, visitor) keys
 * (seen_path_keys; its hosts: the range's referring hosts from day_keys, mapped to companies first),
 * counted as distinct (path, visitor) pairs (a visitor of two of its agents or hosts on one path
 * counts once). Rows not folded yet are added as they are.
 */
async function clickhousePerPath(db: ClickHouseReads, { first, scope, foldedUpTo, unfolded, own, rules, limit, offset }: WholeDays, company: string): Promise<AiCompaniesReport> {
  const agents = inList([...rules.agentCompanies].filter(([, c]) => c === company).map(([name]) => name));
  const hostRows = sql`${scope} AND kind = ${KEY_KIND.host} AND ${clickhouseNotOwn('k', own)}`;
  const [companyHosts, views] = await Promise.all([
    hostsMatching(db, { foldedUpTo, unfolded }, hostRows, sql`${clickhouseHostCompany(raw('k'), rules)} = ${company}`),
    viewsPerPath(db, scope, agents),
  ]);
  const taken = sql`SELECT path, toUInt64(sumIf(views, cls = ${CLASS_CODE.training})) AS training_views, toUInt64(sumIf(views, cls = ${CLASS_CODE.search})) AS search_views,
      toUInt64(uniqExactIf(agent, cls IN (${raw(CRAWLERS)}))) AS crawlers, toUInt64(0) AS assistant_visitors,
      toUInt64(sumIf(views, cls = ${CLASS_CODE.ai})) AS assistant_views, toUInt64(0) AS referred_humans
    FROM (${views}) GROUP BY path`;
  // Its assistants' keys (every agent key row is an assistant's view) and its hosts' keys with a human's view.
  const assistant = sql`kind = ${KEY_KIND.agent} AND k IN ${agents}`;
  const referred = sql`kind = ${KEY_KIND.host} AND k IN ${companyHosts}`;
  const keys = sql`${db.db}.seen_path_keys`;
  const folded = sql`SELECT path, visitor, kind FROM ${keys} WHERE ${scope} AND ${assistant} AND pt < ${first}
    UNION ALL SELECT path, visitor, kind FROM ${keys} WHERE ${scope} AND ${referred} AND ${HAS_BIT('mask', HUMAN_BIT)} AND ph < ${first}`;
  const fresh = sql`SELECT path, visitor, kind FROM (${pathKeyRows(db.db, sql`ins > ${foldedUpTo} AND ${scope}`)})
    WHERE (${assistant}) OR (${referred} AND cls = ${HUMAN_BIT})`;
  const readers = sql`SELECT path, toUInt64(0), toUInt64(0), toUInt64(0), toUInt64(uniqExactIf(visitor, kind = ${KEY_KIND.agent})), toUInt64(0),
      toUInt64(uniqExactIf(visitor, kind = ${KEY_KIND.host})) FROM (${folded}${unfolded ? sql` UNION ALL ${fresh}` : raw('')}) GROUP BY path`;
  const query = sql`SELECT ${company} AS company, path, ${SUMMED}
    FROM (${taken} UNION ALL ${readers}) GROUP BY path ORDER BY ${raw(ORDER)}, path ASC LIMIT ${offset}, ${limit + 1}`;
  return companiesReport(await db.rows(query), company, limit);
}

/**
 * ClickHouse: rows (path, agent, cls, views) of the views of `agents` in `scope`. Days whose sums in
 * agent_path_views equal daily_agents' (both fed by views of the same inserts) are read there; the
 * others (days stored before migration 8, an insert caught between its two views) from the events,
 * one row per view. Both sums only grow, so equal sums mean the per-path rows are all there.
 */
async function viewsPerPath(db: ClickHouseReads, scope: Sql, agents: Sql): Promise<Sql> {
  const ofAgents = sql`${scope} AND agent IN ${agents}`;
  const daySums = (table: string, side: number) => sql`SELECT date, sum(views) AS n, ${side} AS side FROM ${db.db}.${raw(table)} WHERE ${ofAgents} GROUP BY date`;
  const differ = await db.rows(sql`SELECT toUInt32(date) AS d FROM (${daySums('daily_agents', 1)} UNION ALL ${daySums('agent_path_views', 2)})
    GROUP BY date HAVING sumIf(n, side = 1) != sumIf(n, side = 2)`);
  const perPath = sql`SELECT path, agent, cls, views FROM ${db.db}.agent_path_views WHERE ${ofAgents}`;
  if (differ.length === 0) return perPath;
  const days = inList(differ.map((r) => new SqlDate(Number(r.d))));
  // PREWHERE on the agent: the other columns are read for the company's views only.
  return sql`${perPath} AND date NOT IN ${days}
    UNION ALL SELECT path, ifNull(agent, '') AS agent, cls, toUInt64(1) AS views FROM ${db.db}.events
      PREWHERE ifNull(agent, '') IN ${agents} WHERE ${scope} AND date IN ${days} AND cls IN (${raw(AGENT_VIEW_CLASSES)})`;
}

/** Either engine's rows (one past the page) as the report. */
function companiesReport(rows: Record<string, unknown>[], company: string | undefined, limit: number): AiCompaniesReport {
  return {
    company: company ?? null,
    rows: rows.slice(0, limit).map((r) => ({
      company: String(r.company),
      path: company === undefined ? null : String(r.path),
      trainingViews: num(r.training_views),
      searchViews: num(r.search_views),
      crawlers: num(r.crawlers),
      assistantVisitors: num(r.assistant_visitors),
      assistantViews: num(r.assistant_views),
      referredHumans: num(r.referred_humans),
    })),
    hasMore: rows.length > limit,
  };
}
