import type { OutboxEntry } from '../ports/store.js';
import { isLimited, type SlotLimits } from './concurrency-slots.js';
import type { ChildOutcome } from './transition.js';
import type { FanCounts, FollowUp } from './types.js';

export type ChildFinished = Extract<FollowUp, { kind: 'childFinished' }>;

/** What the manager does once children of one fan-out step finished. */
export type ChildrenFinishedPlan =
  /** A child failed: the step fails, naming this child. */
  | { kind: 'failStep'; index: number }
  /** Every child completed: gather their results and complete the step. */
  | { kind: 'fanIn' }
  /** In a limited fan-out, the slot of each finished child moves on from these indexes. */
  | { kind: 'nextInSlots'; from: number[] }
  /** Other children are still running; the one that finishes last carries on. */
  | { kind: 'wait' };

/** Some child of a fan-out step has still to finish: the completed and failed fall short of the total. */
function childrenStillToFinish(counts: FanCounts): boolean {
  return counts.done + counts.failed < counts.total;
}

/**
 * A fan-out step fans in once every child has finished as it needs: all of them completed, or, for
 * a `continueOnError` step, each completed or failed. The manager asks it of the counters after
 * a child finishes (`afterChildrenFinished`); a store that recovers lost fan-ins asks it too, with
 * the `continueOnError` its counters were created with (`FanInit`).
 */
export function readyToFanIn(counts: FanCounts | undefined, continueOnError: boolean): counts is FanCounts {
  if (counts === undefined || childrenStillToFinish(counts)) return false;
  return continueOnError || counts.failed === 0;
}

/**
 * Children of one fan-out step finished: a failed one fails the step; when every child has
 * completed the step fans in; otherwise, in a limited fan-out, each finished child's slot starts
 * its next child. A `continueOnError` step lets failed children count as finished: it fans in
 * once every child completed or failed.
 */
export function afterChildrenFinished(
  finished: readonly ChildFinished[],
  counts: FanCounts | undefined,
  limits: SlotLimits | undefined,
  continueOnError = false,
): ChildrenFinishedPlan {
  const failed = finished.find((item) => item.status === 'failed');
  if (failed && !continueOnError) return { kind: 'failStep', index: failed.index };
  if (readyToFanIn(counts, continueOnError)) return { kind: 'fanIn' };
  if (limits && isLimited(limits))
    return { kind: 'nextInSlots', from: finished.map((item) => item.index + limits.concurrency) };
  return { kind: 'wait' };
}

/**
 * A finished child's follow-up marked `onlyIfLast` is not needed when the commit that counted the
 * child (`outcome`, same parent and step) left the counters short of the total: another child is
 * still to finish, and the one that does will carry the fan-in. A store that counts the child in the
 * same write may leave such an entry out, and saves writing and deleting it for all but one child.
 */
export function followUpNotNeeded(
  entry: OutboxEntry,
  outcome: ChildOutcome | undefined,
  counts: FanCounts | undefined,
): boolean {
  if (entry.kind !== 'followUp' || !outcome || !counts) return false;
  const followUp = entry.followUp;
  return (
    followUp.kind === 'childFinished' &&
    followUp.onlyIfLast === true &&
    followUp.parentId === outcome.parentId &&
    followUp.step === outcome.step &&
    childrenStillToFinish(counts)
  );
}
