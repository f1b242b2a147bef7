// What each AI company takes and gives back, from the raw events: views and distinct agents of its
// training and search crawlers, visitors and views of its assistants (user-triggered fetchers), and
// the distinct humans its assistants' answers sent (an ai_assistant referrer naming the company);
// per company, or with `company` per path of one company. Agents map to companies by the agent list
// (classify.ts), hosts by the source list (referrer-sources.ts), both in the params' rules. ClickHouse
// SQL for 18.16 and current.
import { AiCompaniesQuery, AiCompaniesResponse } from '../../contracts/analytics.ts';
import { CodedError } from '../../errors.ts';
import type { ClassificationRules } from '../classify.ts';
import { CLASS_CODE } from '../traffic-class.ts';
import { tsCond, type DuckDbReads } from '../engines/duckdb/reads.ts';
import { int, num } from '../engines/duckdb/state.ts';
import { tsCond as chTsCond, type ClickHouseReads } from '../engines/clickhouse/reads.ts';
import { join, raw, sql, type Sql } from '../engines/clickhouse/sql.ts';
import { NO_OWN_HOSTS } from '../own-hosts.ts';
import type { Range } from '../dates.ts';
import { clickhouseHost, duckdbHost, quote } from './referrers.ts';
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

/** DuckDB: the company a view credits, over columns cls, agent and host. */
function duckdbCompany(rules: ClassificationRules): string {
  const host = 'host';
  const hosts = hostRules(rules).map((r) => `WHEN ${host} = ${quote(r.host)} OR ${host} LIKE ${quote(`%.${r.host}`)} THEN ${r.company === null ? 'NULL' : quote(r.company)}`);
  const agents = [...rules.agentCompanies].map(([name, company]) => `WHEN ${quote(name)} THEN ${quote(company)}`);
  const byHost = hosts.length ? `CASE ${hosts.join(' ')} END` : 'NULL';
  const byAgent = agents.length ? `CASE agent ${agents.join(' ')} END` : 'NULL';
  return `CASE WHEN cls = ${CLASS_CODE.human} THEN ${byHost} ELSE ${byAgent} END`;
}

const DUCKDB_COUNTS = `count(*) FILTER (WHERE cls = ${CLASS_CODE.training}) AS training_views, count(*) FILTER (WHERE cls = ${CLASS_CODE.search}) AS search_views,
  count(DISTINCT agent) FILTER (WHERE cls IN (${CRAWLERS})) AS crawlers, count(DISTINCT visitor) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_visitors,
  count(*) FILTER (WHERE cls = ${CLASS_CODE.ai}) AS assistant_views, count(DISTINCT visitor) FILTER (WHERE cls = ${CLASS_CODE.human}) AS referred_humans`;

async function duckdb(db: DuckDbReads, { projectId, range, ownHosts, rules, company, limit, offset }: Params): Promise<AiCompaniesReport> {
  const pk = db.projectKey(projectId);
  if (pk === undefined) return { company: company ?? null, rows: [], hasMore: false };
  const where = [`project_key = ${int(pk)}`, `cls IN (${READ_CLASSES})`, ...tsCond(range)].join(' AND ');
  const hosted = `SELECT path_id, visitor, cls, agent, ${duckdbHost(ownHosts ?? NO_OWN_HOSTS)} AS host FROM events WHERE ${where}`;
  const credited = `SELECT path_id, visitor, cls, agent, ${duckdbCompany(rulesOf(rules))} AS company FROM (${hosted})`;
  const perPath = company !== undefined;
  const query = perPath
    ? `SELECT c.company, p.path AS path, ${DUCKDB_COUNTS} FROM (${credited}) c JOIN paths p ON p.path_id = c.path_id
        WHERE c.company = ${quote(company)} GROUP BY c.company, p.path ORDER BY ${ORDER}, path ASC`
    : `SELECT company, NULL AS path, ${DUCKDB_COUNTS} FROM (${credited}) WHERE company IS NOT NULL GROUP BY company ORDER BY ${ORDER}`;
  return companiesReport(await db.rows(`${query} LIMIT ${int(limit + 1)} OFFSET ${int(offset)}`), company, limit);
}

/** ClickHouse: the company a view credits ('' for none), over columns cls, agent and host. */
function clickhouseCompany(rules: ClassificationRules): Sql {
  const host = raw('host');
  const hostArms = hostRules(rules).flatMap((r) => [sql`(${host} = ${r.host} OR like(${host}, ${`%.${r.host}`}))`, sql`${r.company ?? ''}`]);
  const agentArms = [...rules.agentCompanies].flatMap(([name, company]) => [sql`ifNull(agent, '') = ${name}`, sql`${company}`]);
  const byHost = hostArms.length ? sql`multiIf(${join(hostArms)}, '')` : raw(`''`);
  const byAgent = agentArms.length ? sql`multiIf(${join(agentArms)}, '')` : raw(`''`);
  return sql`if(cls = ${CLASS_CODE.human}, ${byHost}, ${byAgent})`;
}

const CLICKHOUSE_COUNTS = raw(`countIf(cls = ${CLASS_CODE.training}) AS training_views, countIf(cls = ${CLASS_CODE.search}) AS search_views,
  uniqExactIf(ifNull(agent, ''), cls IN (${CRAWLERS})) AS crawlers, uniqExactIf(visitor, cls = ${CLASS_CODE.ai}) AS assistant_visitors,
  countIf(cls = ${CLASS_CODE.ai}) AS assistant_views, uniqExactIf(visitor, cls = ${CLASS_CODE.human}) AS referred_humans`);

async function clickhouse(db: ClickHouseReads, { projectId, range, ownHosts, rules, company, limit, offset }: Params): Promise<AiCompaniesReport> {
  const hosted = sql`SELECT path, visitor, cls, agent, ${clickhouseHost(ownHosts ?? NO_OWN_HOSTS)} AS host FROM ${db.db}.events
    WHERE project = ${projectId} AND ${chTsCond(range.from, range.to)} AND cls IN (${raw(READ_CLASSES)})`;
  const credited = sql`SELECT path, visitor, cls, agent, ${clickhouseCompany(rulesOf(rules))} AS company FROM (${hosted})`;
  const query =
    company !== undefined
      ? sql`SELECT company, path, ${CLICKHOUSE_COUNTS} FROM (${credited}) WHERE company = ${company} GROUP BY company, path ORDER BY ${raw(ORDER)}, path ASC`
      : sql`SELECT company, ${CLICKHOUSE_COUNTS} FROM (${credited}) WHERE company != '' GROUP BY company ORDER BY ${raw(ORDER)}`;
  return companiesReport(await db.rows(sql`${query} LIMIT ${offset}, ${limit + 1}`), company, limit);
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
