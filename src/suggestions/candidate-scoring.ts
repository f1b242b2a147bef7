// Candidate scoring (candidates.ts) off the server's thread, with a time limit (util/off-loop.ts): a
// list's work is bounded by design, and the limit is the backstop, so no list of visitors' paths can
// hold the event loop. Each of the pool's threads keeps the site versions' indexes it built; a site's
// pages are sent to a thread only when it has not indexed that version yet.
import { OffLoop, OffLoopTimeoutError } from '../util/off-loop.ts';
import type { Candidate, ScoredPage } from './candidates.ts';
import type { tasks } from './candidate-tasks.ts';

/** Time one list's scoring may take; a list within WORK_PER_LIST takes well under a second. */
export const SCORING_TIMEOUT_MS = 10_000;

const offLoop = new OffLoop<typeof tasks>(new URL('./candidate-tasks.ts', import.meta.url), { timeoutMs: SCORING_TIMEOUT_MS });

export interface ListCandidates {
  byPath: Map<string, Candidate[]>;
  /** What was left unscored, in a sentence for people; null when every path was scored. */
  note: string | null;
}

/** The likely pages of each of `paths` on the site at `version` (e.g. its commit). */
export async function scoreCandidates(site: { version: string; pages: readonly ScoredPage[] }, paths: string[]): Promise<ListCandidates> {
  if (paths.length === 0 || site.pages.length === 0) return { byPath: new Map(), note: null };
  try {
    const pages = site.pages.map(({ file, url, title }) => ({ file, url, title }));
    const scored = (await offLoop.run('scoreList', site.version, paths, null)) ?? (await offLoop.run('scoreList', site.version, paths, pages));
    if (!scored) throw new Error('The scoring worker did not index the pages it was sent.');
    const note = scored.unscored > 0 ? `${scored.unscored} of ${paths.length} paths were not compared with the site's pages (the work one list may do was used up); they show no likely pages.` : null;
    return { byPath: new Map(Object.entries(scored.byPath)), note };
  } catch (err) {
    if (!(err instanceof OffLoopTimeoutError)) throw err;
    return { byPath: new Map(), note: `Comparing the paths with the site's pages took over ${SCORING_TIMEOUT_MS / 1000} s and was stopped; no likely pages are shown.` };
  }
}
