// Tests that record event types Folio does not declare ('test.turn', 'step'): the typed emit
// (src/contracts/job-events.ts) refuses them when compiling, so they go through here, cast once.
// Clients must cope with such types anyway: a newer server may send types an older client lacks.
import type { EmitJobEvent } from '../../src/contracts/job-events.ts';

type UntypedEmit = (type: string, data: object) => Promise<void>;

/** `emit` of a job context, taking any type. */
export const untypedEmit = (emit: EmitJobEvent): UntypedEmit => emit as unknown as UntypedEmit;

/** `JobsService.event`, taking any type. */
export function recordUntyped(jobs: { event: (...args: never[]) => unknown }, jobId: string, type: string, data: object): Promise<unknown> {
  return (jobs.event as unknown as (jobId: string, type: string, data: object) => Promise<unknown>).call(jobs, jobId, type, data);
}
