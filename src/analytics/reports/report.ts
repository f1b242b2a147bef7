// What an analytics report is: one module (reports/<name>.ts) with its parameters and answer (the
// query and response schemas of src/contracts/analytics.ts), its DuckDB SQL and its ClickHouse SQL
// side by side, and the mapping of its result onto the wire. Engines run any report (`engine.run`);
// the route, the client method and the CLI command are one registration line each (docs/ARCHITECTURE.md).
import type { Static, TSchema } from 'typebox';
import type { Range } from '../dates.ts';
import type { OwnHosts } from '../own-hosts.ts';
import type { ClassificationRules } from '../classify.ts';
import type { ClickHouseReads } from '../engines/clickhouse/reads.ts';
import type { DuckDbReads } from '../engines/duckdb/reads.ts';

/**
 * What a report is asked: the project, the parsed date range and its query's other parameters (page,
 * interval); and what the analytics service adds: the project's own hosts (own-hosts.ts: no
 * referrers) and the classification rules in force (the reports that map agents and hosts).
 */
export type ReportParams<Q extends TSchema> = { projectId: string; range: Range; ownHosts?: OwnHosts; rules?: ClassificationRules } & Omit<Static<Q>, 'dateFrom' | 'dateTo'>;

/** The rules a report that maps agents or hosts runs with: never a default of its own. */
export function rulesOf(rules: ClassificationRules | undefined): ClassificationRules {
  if (!rules) throw new Error('This report maps agents and hosts: run it with the classification rules (the analytics service adds them).');
  return rules;
}

export interface Report<Q extends TSchema, R extends TSchema, Result> {
  /** The route's last segment: `GET /v1/analytics/{projectId}/<name>`. */
  readonly name: string;
  /** The operation's summary and description in the API reference. */
  readonly summary: string;
  readonly description: string;
  readonly query: Q;
  readonly response: R;
  duckdb(db: DuckDbReads, p: ReportParams<Q>): Promise<Result>;
  clickhouse(db: ClickHouseReads, p: ReportParams<Q>): Promise<Result>;
  /** The answer as the API sends it (ISO times, the contract's field names). */
  wire(result: Result): Static<R>;
}

/** Milliseconds since the epoch as the API's date-time. */
export const iso = (ms: number) => new Date(ms).toISOString();
