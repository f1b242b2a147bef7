// The bench's job for the job-impact report (jobImpactAsked), and the report's answer the naive way
// (naiveJobImpact), for query.ts to check it against: one plain COUNT(DISTINCT) query per page and
// per total over the raw events of its addresses (no VALUES join of (page, address) pairs, no shared
// scan), each split before/after the merge. The report itself
// is already COUNT(DISTINCT) over path-filtered raw events: this is a check of its page mapping,
// windows and totals, and a per-page cost for reference, not a faster-than baseline.
import type { ClassificationRules } from '../../src/analytics/classify.ts';
import { rows as rowsOf, num } from '../../src/analytics/engines/duckdb/state.ts';
import type { DuckDbReads } from '../../src/analytics/engines/duckdb/reads.ts';
import { equalWindows } from '../../src/analytics/impact-windows.ts';
import type { OwnHosts } from '../../src/analytics/own-hosts.ts';
import type { JobImpactResult } from '../../src/analytics/reports/job-impact.ts';
import { duckdbHost, duckdbSourceOf, quote } from '../../src/analytics/reports/referrers.ts';
import { AI_BIT, HUMAN_BIT, LAST_VISITOR_CODE } from '../../src/analytics/traffic-class.ts';
import { addressesFor } from '../../src/jobs/impact.ts';

const DAY = 86_400_000;

/**
 * A job as the impact endpoint asks about it (addressesFor, src/jobs/impact.ts): the most viewed
 * path, two mid (one moved from an old address that has not-found views: 1 view in 50 is one) and
 * two rare ones (generate.ts ranks paths by popularity), merged on day 15 of 30 at 13:37 UTC: both
 * windows 14 whole days, the merge's day between them.
 */
export function jobImpactAsked(paths: string[], start: number) {
  const touched = [
    { change: 'edited' as const, path: paths[0], previousPath: null },
    { change: 'edited' as const, path: paths[60], previousPath: null },
    { change: 'moved' as const, path: '/docs/guide/moved-page', previousPath: paths[150] },
    { change: 'edited' as const, path: paths[2500], previousPath: null },
    { change: 'edited' as const, path: paths[4000], previousPath: null },
  ];
  const pages = touched.map((p) => addressesFor({ ...p, file: null, redirectTo: null }));
  return { pages, at: start + 15 * DAY + 13 * 3_600_000 + 37 * 60_000, days: 14, now: start + 30 * DAY };
}

interface Asked {
  pk: number;
  pages: { views: string[]; notFound: string[] }[];
  at: number;
  days: number;
  now: number;
  ownHosts: OwnHosts;
  rules: ClassificationRules;
}

type Counts = JobImpactResult['total']['before'];
const zero = (): Counts => ({ humans: 0, ai: 0, views: 0, fromAiAnswers: 0, notFound: 0 });

export async function naiveJobImpact(db: DuckDbReads, { pk, pages, at, days, now, ownHosts, rules }: Asked): Promise<JobImpactResult> {
  return db.readers.use(async (c) => {
    const [first] = await rowsOf(c, `SELECT least((SELECT min(ts) FROM events WHERE project_key = ${pk} AND ts < ${at}),
      (SELECT min(ts) FROM not_found WHERE project_key = ${pk} AND ts < ${at})) AS first`);
    const windows = equalWindows(at, days, now, first.first === null ? null : Number(first.first));
    if (!windows) throw new Error('the bench merge must be over a day old');
    // Whole-day windows with the merge's day between them (equalWindows): a view in either, split by the after-window's start.
    const span = `((ts >= ${windows.before.from} AND ts < ${windows.before.to}) OR (ts >= ${windows.after.from} AND ts < ${windows.after.to}))`;
    const after = windows.after.from;
    const source = duckdbSourceOf(duckdbHost(ownHosts), rules.sources);
    const count = async (views: string[], notFound: string[]) => {
      const out = { before: zero(), after: zero() };
      const side = (r: Record<string, unknown>) => (num(r.after) === 1 ? out.after : out.before);
      if (views.length > 0) {
        for (const r of await rowsOf(c, `SELECT (ts >= ${after})::INTEGER AS after,
            count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT}) AS humans, count(DISTINCT visitor) FILTER (WHERE cls = ${AI_BIT}) AS ai, count(*) AS views,
            count(DISTINCT visitor) FILTER (WHERE cls = ${HUMAN_BIT} AND ${source} = 'ai_assistant') AS from_ai
          FROM events WHERE project_key = ${pk} AND cls <= ${LAST_VISITOR_CODE} AND ${span}
            AND path_id IN (SELECT path_id FROM paths WHERE project_key = ${pk} AND path IN (${views.map(quote).join(', ')}))
          GROUP BY after`)) Object.assign(side(r), { humans: num(r.humans), ai: num(r.ai), views: num(r.views), fromAiAnswers: num(r.from_ai) });
      }
      if (notFound.length > 0) {
        for (const r of await rowsOf(c, `SELECT (ts >= ${after})::INTEGER AS after, count(DISTINCT visitor) AS not_found FROM not_found
          WHERE project_key = ${pk} AND cls <= ${LAST_VISITOR_CODE} AND ${span} AND path IN (${notFound.map(quote).join(', ')}) GROUP BY after`)) side(r).notFound = num(r.not_found);
      }
      return out;
    };
    const perPage = [];
    for (const p of pages) perPage.push(await count([...new Set(p.views)], [...new Set(p.notFound)]));
    const total = await count([...new Set(pages.flatMap((p) => p.views))], [...new Set(pages.flatMap((p) => p.notFound))]);
    return { windows, total, pages: perPage };
  });
}
