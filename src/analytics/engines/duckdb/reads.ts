// What the reports' DuckDB SQL runs on (src/analytics/reports/): the read connections, the project
// and path dictionaries, the rows not compacted yet (NEW_ROWS, state.ts), and the range conditions.
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../../traffic-class.ts';
import { int, rows as rowsOf, type Dictionaries, type PathHosts, type PendingRows, type Pool, type Row } from './state.ts';

/** Rows of visitors (humans and AI), not other bots. */
export const IS_VISITOR = `cls <= ${LAST_VISITOR_CODE}`;
export const HAS_HUMAN = (mask: string) => `${mask} & ${HUMAN_BIT} = ${HUMAN_BIT}`;
export const HAS_AI = (mask: string) => `${mask} & ${AI_BIT} = ${AI_BIT}`;
export const LACKS = (mask: string, bit: number) => `coalesce(${mask}, 0) & ${bit} = 0`;

/** `day` condition for whole days [d1, d2); null: unbounded. */
export function dayCond(days: { d1: number | null; d2: number | null }): string {
  const c: string[] = [];
  if (days.d1 !== null) c.push(`day >= ${int(days.d1)}`);
  if (days.d2 !== null) c.push(`day < ${int(days.d2)}`);
  return c.length ? c.join(' AND ') : 'true';
}

/** `ts` condition for the partial days at a range's edges. */
export function edgeCond(edges: [number, number][]): string {
  return edges.length ? '(' + edges.map(([a, b]) => `(ts >= ${int(a)} AND ts < ${int(b)})`).join(' OR ') + ')' : 'false';
}

/** `ts` condition for [from, to); null: unbounded. */
export function tsCond(range: { from: number | null; to: number | null }): string[] {
  const c: string[] = [];
  if (range.from !== null) c.push(`ts >= ${int(range.from)}`);
  if (range.to !== null) c.push(`ts < ${int(range.to)}`);
  return c;
}

export class DuckDbReads {
  readonly readers: Pool;
  readonly dict: Dictionaries;
  readonly pending: PendingRows;
  /** The referring hosts `daily_path_keys` keeps rows of. */
  readonly pathHosts: PathHosts;

  constructor(readers: Pool, dict: Dictionaries, pending: PendingRows, pathHosts: PathHosts) {
    this.readers = readers;
    this.dict = dict;
    this.pending = pending;
    this.pathHosts = pathHosts;
  }

  /** The project's key; undefined when it has stored nothing (every report is then empty). */
  projectKey(projectId: string): number | undefined {
    return this.dict.projectKeys.get(projectId);
  }

  /** Runs a query on a reader connection (never with user input in its text). */
  rows(query: string): Promise<Row[]> {
    return this.readers.use((c) => rowsOf(c, query));
  }
}
