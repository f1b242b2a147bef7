// The group-commit writer: a submission that arrives as a flush loop is ending is still written.
import { describe, expect, it } from 'vitest';
import { GroupCommitWriter, type PendingEvent } from '../../src/analytics/writer.ts';
import type { AnalyticsEngine, StoredEvent } from '../../src/analytics/engine.ts';

function engine(written: StoredEvent[][]): AnalyticsEngine {
  return {
    write: async (events: StoredEvent[]) => {
      written.push([...events]);
      return { duplicates: new Map() };
    },
  } as unknown as AnalyticsEngine;
}

const event = (path: string): PendingEvent =>
  ({ projectId: 'p', ts: Date.now(), path, visitor: 1n, cls: 1, agent: null, referrer: null, source: 1, importKey: null }) as PendingEvent;

describe('group-commit writer', () => {
  it('writes a submission made right after the previous flush resolved (no timer to rescue it)', async () => {
    const written: StoredEvent[][] = [];
    // A window far longer than the test: only the flush loop itself can pick the second batch up.
    const writer = new GroupCommitWriter(engine(written), { flushMs: 60_000, flushMaxEvents: 1 });
    await writer.submit([event('/a')]);
    const second = writer.submit([event('/b')]);
    const outcome = await Promise.race([second.then(() => 'written'), new Promise((r) => setTimeout(() => r('stranded'), 2_000))]);
    expect(outcome).toBe('written');
    expect(written.flat().map((e) => e.path)).toEqual(['/a', '/b']);
    await writer.close();
  });
});
