import type { Draft } from './draft.js';
import { JOB_STATUSES, type JobRecord, type JobStatus, type StepState } from './types.js';

/**
 * A job's status as lists, filters, counts and the job document show it. It is the stored status
 * with two differences:
 * - `waiting`: a running job with a step that waits for someone (a signal step waiting for its
 *   signal, or a step its worker suspended): what an operator looks for, and the status the job
 *   document, `switchyard jobs --status waiting`, `watch` and the dashboard show.
 * - `pending`: a job created and not started yet (a fan-out child waiting for its turn, a retried
 *   job before it runs again): the stored status the engine calls `waiting`.
 */
export type ListedStatus = Exclude<JobStatus, 'waiting'> | 'pending' | 'waiting';

export const LISTED_STATUSES: readonly ListedStatus[] = [
  'scheduled',
  'pending',
  'queued',
  'running',
  'waiting',
  'paused',
  'completed',
  'failed',
  'cancelled',
  'aborted',
];

/** The listed statuses of jobs that have not ended. */
export const ACTIVE_LISTED_STATUSES: readonly ListedStatus[] = [
  'scheduled',
  'pending',
  'queued',
  'running',
  'waiting',
  'paused',
];

export function isListedStatus(value: string): value is ListedStatus {
  return (LISTED_STATUSES as readonly string[]).includes(value);
}

/** The listed status of a job (its `waitsForSomeone` is kept by the engine, `settleWaits`). */
export function listedStatusOf(job: Pick<JobRecord, 'status' | 'waitsForSomeone'>): ListedStatus {
  if (job.status === 'waiting') return 'pending';
  if (job.status === 'running' && job.waitsForSomeone) return 'waiting';
  return job.status;
}

/** The stored statuses a listed status comes from (a store that indexes stored statuses reads these). */
export function storedStatusesOf(listed: ListedStatus): JobStatus[] {
  if (listed === 'pending') return ['waiting'];
  if (listed === 'waiting') return ['running'];
  return JOB_STATUSES.includes(listed) ? [listed] : [];
}

/** A count of 0 for every listed status. */
export function zeroListedCounts(): Record<ListedStatus, number> {
  return Object.fromEntries(LISTED_STATUSES.map((status) => [status, 0])) as Record<ListedStatus, number>;
}

/** Whether a step waits for someone outside the job (waits.ts says the same for the document). */
export function stepWaitsForSomeone(state: StepState, isSignalStep: boolean): boolean {
  return state.status === 'suspended' || (isSignalStep && state.status === 'running');
}

/**
 * After a transition's events: the job's `waitsForSomeone` is brought up to date. A job that did
 * not wait can start to only when a step was set suspended or a signal step running (the draft
 * notes it), so only a job that waits (or starts waiting) reads all its steps: the other
 * transitions cost what they cost before.
 */
export function settleWaits(d: Draft): void {
  // Kept whatever the status: a paused job that waits still waits when it is resumed.
  const waits = jobWaits(d);
  if (waits !== (d.job.waitsForSomeone === true)) d.updateJob({ waitsForSomeone: waits ? true : undefined });
}

function jobWaits(d: Draft): boolean {
  // Plain loops, no closure: this runs in every transition (a fan-out's slice runs thousands).
  if (!d.job.waitsForSomeone) {
    if (!d.mayStartWaiting) return false;
    for (const name of d.changedSteps) if (stepWaitsNow(d, name)) return true;
    return false;
  }
  for (const node of d.graph.steps) if (stepWaitsNow(d, node.name)) return true;
  return false;
}

function stepWaitsNow(d: Draft, name: string): boolean {
  const node = d.graph.byName.get(name);
  return node !== undefined && stepWaitsForSomeone(d.step(name), node.kind === 'signal');
}
