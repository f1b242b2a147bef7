// AI agents and crawlers: distinct visitors and views per agent (AI and other bots), from the raw events.
import { AgentsResponse, RangeQuery } from '../../contracts/analytics.ts';
import { CLASS_CODE, CLASS_NAME } from '../traffic-class.ts';
import { tsCond } from '../engines/duckdb/reads.ts';
import { int, num } from '../engines/duckdb/state.ts';
import { tsCond as chTsCond } from '../engines/clickhouse/reads.ts';
import { sql } from '../engines/clickhouse/sql.ts';
import type { Report } from './report.ts';

export interface AgentRow {
  agent: string;
  category: string;
  visitors: number;
  views: number;
}

/** A row of either engine, whose agent is in column `name`. */
const agentRow = (name: string) => (r: Record<string, unknown>): AgentRow => ({ agent: String(r[name]), category: CLASS_NAME[num(r.cls)], visitors: num(r.visitors), views: num(r.views) });

export const agents: Report<typeof RangeQuery, typeof AgentsResponse, AgentRow[]> = {
  name: 'agents',
  summary: 'AI agents and crawlers',
  description: 'Distinct visitors and views per agent: AI assistants and coding agents (category ai), search and training crawlers, other bots.',
  query: RangeQuery,
  response: AgentsResponse,
  async duckdb(db, { projectId, range }) {
    const pk = db.projectKey(projectId);
    if (pk === undefined) return [];
    const conds = [`project_key = ${int(pk)}`, `cls >= ${CLASS_CODE.ai}`, ...tsCond(range)]; // AI and other bots
    const rows = await db.rows(`SELECT coalesce(agent, 'Other bots') AS agent, cls, count(DISTINCT visitor) AS visitors, count(*) AS views FROM events
      WHERE ${conds.join(' AND ')} GROUP BY ALL ORDER BY visitors DESC, views DESC, agent`);
    return rows.map(agentRow('agent'));
  },
  async clickhouse(db, { projectId, range }) {
    // `agent_name`, not `agent`: an alias equal to a column name would shadow the column inside ifNull.
    const rows = await db.rows(sql`SELECT ifNull(agent, 'Other bots') AS agent_name, cls, uniqExact(visitor) AS visitors, count() AS views
      FROM ${db.db}.events WHERE project = ${projectId} AND cls >= ${CLASS_CODE.ai} AND ${chTsCond(range.from, range.to)}
      GROUP BY agent_name, cls ORDER BY visitors DESC, views DESC, agent_name ASC, cls ASC`);
    return rows.map(agentRow('agent_name'));
  },
  wire: (rows) => ({ agents: rows }),
};
