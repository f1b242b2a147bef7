// Whether a started suggestion worked: each path's not-found visitors in the traffic the suggestion
// was drawn from ("before"), and since its pull request was merged, or else since its job completed
// ("after"). The two periods differ in length; both are given in days so they can be compared, and
// "after" is counted only once it covers a day: the windows are analytics/impact-windows.ts's, which
// a merged job's impact uses too.
import { afterSince, inDays } from '../analytics/impact-windows.ts';
import type { NotFoundRow } from '../analytics/reports/not-found.ts';
import type { SuggestionJobRow } from '../store/suggestions.ts';
import { webLink } from '../jobs/view.ts';
import type { JobStatusName } from '../contracts/jobs.ts';
import type { SuggestedPath, SuggestionKind } from './proposals.ts';

type Visitors = { human: number; ai: number; total: number };

export interface StartedSuggestion {
  suggestionId: string;
  kind: SuggestionKind;
  title: string;
  automatic: boolean;
  createdAt: number;
  job: { id: string; status: JobStatusName; prLink: string | null };
  pullRequest: { state: 'open' | 'merged' | 'closed'; mergedAt: number | null } | null;
  /** Where "after" starts: the merge, else the job's completion; null while neither happened. */
  measuredFrom: 'merge' | 'completion' | null;
  measuredSince: number | null;
  beforeDays: number;
  afterDays: number | null;
  /** "after" covers at least a day (impact-windows.ts MIN_AFTER_MS): until then no path has an `after` count. */
  afterReady: boolean;
  /** `after` is null before measuredSince, and when the path was not among the period's busiest not-found paths read. */
  paths: { path: string; before: Visitors; after: Visitors | null }[];
}

/** Not-found paths of a period, busiest first; `complete` when every one of them was read. */
export type NotFoundRead = (from: number, to: number) => Promise<{ rows: NotFoundRow[]; complete: boolean }>;

export async function startedView(
  row: SuggestionJobRow,
  notFound: NotFoundRead,
  now: number,
): Promise<StartedSuggestion> {
  const state = row.pr_state === 'open' || row.pr_state === 'merged' || row.pr_state === 'closed' ? row.pr_state : null;
  const since = row.merged_at !== null ? Number(row.merged_at) : (row.status === 'completed' ? row.job_updated_at : null);
  const measuredFrom = row.merged_at !== null ? 'merge' : since !== null ? 'completion' : null;
  const after = since !== null ? afterSince(since, now) : null;
  const afterReady = after?.ready ?? false;
  const read = after?.ready ? await notFound(after.from, after.to) : null;
  const afterRows = read ? new Map(read.rows.map((r) => [r.path, r])) : null;
  const zero: Visitors = { human: 0, ai: 0, total: 0 };
  const paths = (JSON.parse(row.paths) as SuggestedPath[]).map((p) => {
    const a = afterRows?.get(p.path);
    // Absent from a complete read: nobody missed it. Absent from a cut one: not known.
    const counted = a ? { human: a.human, ai: a.ai, total: a.total } : read?.complete ? zero : null;
    return { path: p.path, before: p.visitors, after: afterRows ? counted : null };
  });
  return {
    suggestionId: row.suggestion_id,
    kind: row.kind as SuggestionKind,
    title: row.title,
    automatic: row.automatic === 1,
    createdAt: row.created_at,
    job: { id: row.job_id, status: row.status, prLink: webLink(row.pr_link) },
    pullRequest: state ? { state, mergedAt: row.merged_at === null ? null : Number(row.merged_at) } : null,
    measuredFrom,
    measuredSince: since,
    beforeDays: inDays(row.range_to - row.range_from),
    afterDays: since !== null ? inDays(now - since) : null,
    afterReady,
    paths,
  };
}
