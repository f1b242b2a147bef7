// running → failed: a turn ended with a failure (`error` with its code); the job fails unless more
// messages wait (turn.ts), keeping its pull request link.
import type { Change, LifecycleDeps, Trx } from './context.ts';
import { endTurn } from './turn.ts';

export interface FailedTurn {
  jobId: string;
  owner: string;
  seq: number | null;
  code: string;
  message: string;
}

export function failTurn(trx: Trx, deps: LifecycleDeps, t: FailedTurn): Promise<{ change: Change; more: boolean } | undefined> {
  return endTurn(trx, deps, {
    jobId: t.jobId,
    owner: t.owner,
    seq: t.seq,
    prLink: null,
    message: { outcome: 'failed' },
    event: (seq) => ({ type: 'error', data: { seq, code: t.code, message: t.message } }),
    end: { status: 'failed', error_code: t.code, error_message: t.message },
  });
}
