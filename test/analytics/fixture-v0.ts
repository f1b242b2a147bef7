// The analytics store written before versioning (test/fixtures/analytics-v0): the events it holds and
// the ranges the upgrade tests check.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { RefEvent } from './helpers.ts';

export const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/analytics-v0');
const DAY = 86_400_000;
const D0 = Date.UTC(2025, 0, 1);

export interface FixtureEvent {
  ts: number;
  path: string;
  visitor: string;
  cls: number;
  agent: string | null;
  key: string | null;
}

export function fixtureEvents(): { projectId: string; events: FixtureEvent[]; ref: RefEvent[] } {
  const f = JSON.parse(readFileSync(path.join(FIXTURE, 'events.json'), 'utf8')) as { projectId: string; events: FixtureEvent[] };
  const ref = f.events.map((e) => ({ ts: e.ts, path: e.path, visitor: e.visitor, cls: e.cls === 1 ? 'human' : e.cls === 2 ? 'ai' : 'none' }) as RefEvent);
  return { ...f, ref };
}

export const UPGRADE_RANGES: [number | null, number | null][] = [
  [null, null],
  [D0, D0 + 10 * DAY],
  [D0 + 5 * DAY, D0 + 25 * DAY],
  [D0 + 19 * DAY, null],
  [D0 + 3 * DAY + 3_600_000, D0 + 30 * DAY - 7_200_000],
];

