// What candidate scoring runs on the off-loop pool's threads (util/off-loop.ts loads this module; the
// main thread calls it through candidate-scoring.ts). Each thread builds a site version's PageIndex
// once and keeps it for the next lists.
import { LRUCache } from 'lru-cache';
import { candidatesOfList, PageIndex, type Candidate, type ScoredPage } from './candidates.ts';

/** Site versions kept indexed (a few projects' lists in a row reuse theirs). */
const indexes = new LRUCache<string, PageIndex>({ max: 8 });

/**
 * The candidates of each path on the site at `version`; null when that version is not indexed on this
 * worker and no `pages` came to index it (the caller then sends them: a site is sent once per version).
 */
function scoreList(version: string, paths: string[], pages: ScoredPage[] | null): { byPath: Record<string, Candidate[]>; unscored: number } | null {
  let index = indexes.get(version);
  if (!index) {
    if (!pages) return null;
    index = new PageIndex(pages);
    indexes.set(version, index);
  }
  return candidatesOfList(paths, index);
}

export const tasks = { scoreList };
