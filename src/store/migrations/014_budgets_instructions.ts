// The team's instructions and spending limits (docs/agent.md). A project's own instructions for the
// agent, its per-job defaults (dollars, or tokens for a model without a price) and its monthly
// budgets; a job's own limits, fixed when it is created. Null everywhere means "no limit".
import type { Kysely } from 'kysely';
import type { StoreDialect } from '../dialect.ts';

export async function up(db: Kysely<unknown>, _dialect: StoreDialect): Promise<void> {
  await db.schema.alterTable('projects').addColumn('instructions', 'text').execute();
  await db.schema.alterTable('projects').addColumn('default_max_cost_usd', 'double precision').execute();
  await db.schema.alterTable('projects').addColumn('default_max_tokens', 'integer').execute();
  await db.schema.alterTable('projects').addColumn('monthly_budget_usd', 'double precision').execute();
  await db.schema.alterTable('projects').addColumn('monthly_token_budget', 'integer').execute();
  await db.schema.alterTable('jobs').addColumn('max_cost_usd', 'double precision').execute();
  await db.schema.alterTable('jobs').addColumn('max_tokens', 'integer').execute();
}
