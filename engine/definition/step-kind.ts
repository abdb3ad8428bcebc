import type { StepDefinition } from './types.js';

/**
 * What a step is, read from its definition in one place (workflows.md, "Keys"): a `task:` fans out,
 * a `workflow:` calls a registered workflow, `type: signal` waits for the API; any other step sends a
 * request to a worker's queue.
 */
export type StepKind = 'worker' | 'signal' | 'fanout' | 'call';

export function stepKindOf(step: StepDefinition): StepKind {
  if (step.task !== undefined) return 'fanout';
  if (step.workflow !== undefined) return 'call';
  if (step.type === 'signal') return 'signal';
  return 'worker';
}

/** The queue a step sends its requests to (its `queue`, else its name), or undefined for a step that sends none. */
export function sentQueueOf(step: StepDefinition): string | undefined {
  return stepKindOf(step) === 'worker' ? (step.queue ?? step.name) : undefined;
}
