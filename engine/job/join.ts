/**
 * Joins: what a step with dependencies waits for, and whether it then runs or is skipped
 * (workflows.md, "Joins"). A step's `join:` names its rule:
 *
 * - `all_completed` (the default): it waits until every dependency has settled, and runs unless every
 *   one of them was skipped;
 * - `none_failed`: it waits until every dependency has settled, and runs unless one of them failed
 *   (a `continueOnError` failure); skipped dependencies do not stop it;
 * - `any_completed`: it runs as soon as one dependency completes, and is skipped when every
 *   dependency has settled and none completed.
 */
export const JOIN_RULES = ['all_completed', 'none_failed', 'any_completed'] as const;
export type JoinRule = (typeof JOIN_RULES)[number];
export const DEFAULT_JOIN: JoinRule = 'all_completed';

/** A dependency as a join sees it: not settled yet, or how it settled. */
export type DependencyStatus = 'pending' | 'completed' | 'skipped' | 'failed';

export type JoinVerdict = { kind: 'wait' } | { kind: 'run' } | { kind: 'skip'; reason: string };

const WAIT: JoinVerdict = { kind: 'wait' };
const RUN: JoinVerdict = { kind: 'run' };

/** Which statuses are among a step's dependencies. */
export interface DependencyStatuses {
  pending: boolean;
  completed: boolean;
  failed: boolean;
  skipped: boolean;
}

/** What the rule says over the statuses of the dependencies, in `depends` order. */
export function joinVerdict(rule: JoinRule, dependencies: readonly DependencyStatus[]): JoinVerdict {
  if (dependencies.length === 0) return RUN;
  const seen: DependencyStatuses = { pending: false, completed: false, failed: false, skipped: false };
  for (const status of dependencies) seen[status === 'pending' ? 'pending' : status] = true;
  return joinVerdictOf(rule, seen);
}

/** The same, from which statuses are among the dependencies (at least one): the engine's hot path. */
export function joinVerdictOf(rule: JoinRule, seen: DependencyStatuses): JoinVerdict {
  const { pending, completed, failed, skipped } = seen;
  switch (rule) {
    case 'any_completed':
      if (completed) return RUN;
      if (pending) return WAIT;
      return { kind: 'skip', reason: 'join any_completed: none of the steps it depends on completed' };
    case 'none_failed':
      if (pending) return WAIT;
      if (failed) return { kind: 'skip', reason: 'join none_failed: a step it depends on failed' };
      return RUN;
    case 'all_completed':
      if (pending) return WAIT;
      // A handled failure hands its error on: like a completed step, it is something to run on.
      if (skipped && !completed && !failed)
        return { kind: 'skip', reason: 'every step it depends on was skipped' };
      return RUN;
  }
}
