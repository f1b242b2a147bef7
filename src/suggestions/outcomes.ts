// Whether a started suggestion worked: each path's not-found visitors in the traffic the suggestion
// was drawn from ("before"), and since its pull request was merged, or else since its job completed
// ("after"). The two periods differ in length; both are given in days so they can be compared.
import { DAY_MS } from '../analytics/index.ts';
import type { NotFoundRow } from '../analytics/engine.ts';
import type { SuggestionJobRow } from '../store/suggestions.ts';
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
  paths: { path: string; before: Visitors; after: Visitors | null }[];
}

const days = (ms: number) => Math.round((ms / DAY_MS) * 10) / 10;

export async function startedView(
  row: SuggestionJobRow,
  notFound: (from: number, to: number) => Promise<NotFoundRow[]>,
  now: number,
): Promise<StartedSuggestion> {
  const state = row.pr_state === 'open' || row.pr_state === 'merged' || row.pr_state === 'closed' ? row.pr_state : null;
  const since = row.merged_at ?? (row.status === 'completed' ? row.job_updated_at : null);
  const measuredFrom = row.merged_at !== null ? 'merge' : since !== null ? 'completion' : null;
  const after = since !== null && since < now ? new Map((await notFound(since, now)).map((r) => [r.path, r])) : null;
  const zero: Visitors = { human: 0, ai: 0, total: 0 };
  const paths = (JSON.parse(row.paths) as SuggestedPath[]).map((p) => {
    const a = after?.get(p.path);
    return { path: p.path, before: p.visitors, after: after ? (a ? { human: a.human, ai: a.ai, total: a.total } : zero) : null };
  });
  return {
    suggestionId: row.suggestion_id,
    kind: row.kind as SuggestionKind,
    title: row.title,
    automatic: row.automatic === 1,
    createdAt: row.created_at,
    job: { id: row.job_id, status: row.status, prLink: row.pr_link },
    pullRequest: state ? { state, mergedAt: row.merged_at } : null,
    measuredFrom,
    measuredSince: since,
    beforeDays: days(row.range_to - row.range_from),
    afterDays: since !== null ? days(Math.max(0, now - since)) : null,
    paths,
  };
}
