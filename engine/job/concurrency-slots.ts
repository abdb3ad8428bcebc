import type { JobStatus } from './types.js';

/** How many children a fan-out step has, and how many of them may run at once. */
export interface SlotLimits {
  total: number;
  concurrency: number;
}

/** What a slot does with one of its children. */
export type SlotTurn = 'passOn' | 'start' | 'hold';

/** A fan-out is limited when it may run fewer children at once than it has. */
export function isLimited(limits: SlotLimits): boolean {
  return limits.concurrency < limits.total;
}

/**
 * A limited fan-out runs its children in `concurrency` slots: slot s runs children s, s + c, s + 2c…
 * one after the other, so at most c are in flight without a shared counter. These are the indexes
 * of the slot of child `index`, from it on.
 */
export function* slotIndexesFrom(index: number, limits: SlotLimits): Generator<number> {
  for (let i = index; i < limits.total; i += limits.concurrency) yield i;
}

/**
 * The next child of a slot is the first one that has not completed: a completed child passes the
 * turn on, a waiting one is started, and any other (running, stopped, not created yet) holds it.
 * In a `continueOnError` fan-out a failed child passes the turn on too.
 */
export function slotTurn(status: JobStatus | undefined, failedPassesOn = false): SlotTurn {
  if (status === 'completed' || (failedPassesOn && status === 'failed')) return 'passOn';
  return status === 'waiting' ? 'start' : 'hold';
}

/** The index of each slot's next child to start, given every child's status (by index). */
export function slotStarts(statusOf: (index: number) => JobStatus | undefined, limits: SlotLimits): number[] {
  const starts: number[] = [];
  for (let slot = 0; slot < Math.min(limits.concurrency, limits.total); slot++) {
    for (const i of slotIndexesFrom(slot, limits)) {
      const turn = slotTurn(statusOf(i));
      if (turn === 'passOn') continue;
      if (turn === 'start') starts.push(i);
      break;
    }
  }
  return starts;
}
