import { type SlotLimits, slotStarts } from './concurrency-slots.js';
import type { FanCounts, JobStatus } from './types.js';

/** What a retried fan-out step does once its children are reset. */
export type ResumePlan =
  /** Every child had completed: the step fans in at once. */
  | { counts: FanCounts; fanIn: true }
  /** Each slot starts its next child: these indexes. */
  | { counts: FanCounts; fanIn: false; starts: number[] };

/**
 * A retried fan-out step: failed, cancelled and aborted children are reset (they wait again),
 * completed ones keep their results.
 */
export function resetOnResume(status: JobStatus): boolean {
  return status === 'failed' || status === 'cancelled' || status === 'aborted';
}

/**
 * Once its children are reset (`statuses` by index, as they are after the reset), a retried fan-out
 * step's counters are recounted from its completed children, and each slot starts its next child.
 */
export function resumeFanOut(statuses: readonly (JobStatus | undefined)[], limits: SlotLimits): ResumePlan {
  let done = 0;
  for (const status of statuses) if (status === 'completed') done++;
  const counts: FanCounts = { total: limits.total, done, failed: 0 };
  if (done === limits.total) return { counts, fanIn: true };
  return { counts, fanIn: false, starts: slotStarts((index) => statuses[index], limits) };
}
