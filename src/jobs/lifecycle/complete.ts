// running → completed: a turn ended with the agent's title and summary (`turn.completed`); the job
// completes unless more messages wait (turn.ts).
import type { Change, LifecycleDeps, Trx } from './context.ts';
import { endTurn } from './turn.ts';

export interface CompletedTurn {
  jobId: string;
  owner: string;
  seq: number | null;
  title: string;
  summary: string;
  prLink: string | null;
}

export function completeTurn(trx: Trx, deps: LifecycleDeps, t: CompletedTurn): Promise<{ change: Change; more: boolean } | undefined> {
  return endTurn(trx, deps, {
    jobId: t.jobId,
    owner: t.owner,
    seq: t.seq,
    prLink: t.prLink,
    message: { outcome: 'completed', title: t.title, summary: t.summary },
    event: (seq) => ({ type: 'turn.completed', data: { seq, title: t.title, summary: t.summary, prLink: t.prLink } }),
    end: { status: 'completed', error_code: null, error_message: null },
  });
}
