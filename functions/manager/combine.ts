import type { Transition } from '../../engine/index.js';

/** Several transitions of one job, applied one after the other, as one write. */
export function combineTransitions(first: Transition, next: Transition): Transition {
  // A job that stopped (its unsent requests dropped) sends none of what earlier events made ready.
  const status = next.job.status;
  const stopped = status === 'failed' || status === 'cancelled' || status === 'aborted';
  return {
    job: next.job,
    changed: true,
    expectedRev: first.expectedRev,
    patch: {
      fields: { ...first.patch.fields, ...next.patch.fields },
      steps: { ...first.patch.steps, ...next.patch.steps },
    },
    requests: stopped ? [] : [...first.requests, ...next.requests],
    timers: [...first.timers, ...next.timers],
    creates: [...first.creates, ...next.creates],
    followUps: [...first.followUps, ...next.followUps],
    fanInits: [...first.fanInits, ...next.fanInits],
    childOutcome: first.childOutcome ?? next.childOutcome,
    dropUnsent: first.dropUnsent || next.dropUnsent,
    // Never both: the manager commits a second change to the counters on its own (manager.ts, `apply`).
    limit: first.limit ?? next.limit,
    tree: combinedTree(first, next),
    notes: [...first.notes, ...next.notes],
  };
}

/** Both decided on the same read of the tree: what they add, added up, under the latest's condition. */
function combinedTree(first: Transition, next: Transition): Transition['tree'] {
  if (!first.tree || !next.tree) return first.tree ?? next.tree;
  return { ...next.tree, add: first.tree.add + next.tree.add };
}
