import type { StepDefinition } from './types.js';

/**
 * What a step is, read from its definition in one place (workflows.md, "Keys"): a `task:` fans out,
 * a `workflow:` calls a registered workflow, `type: signal` waits for the API; any other step sends a
 * request to a worker's queue.
 */
export type StepKind = 'worker' | 'signal' | 'fanout' | 'call' | 'sleep' | 'fail' | 'pass';

/**
 * Steps that need no worker: `sleep:` waits, `fail:` fails, and a step with `output:` but no queue,
 * task, workflow or type passes its input on, reshaped.
 */
export function stepKindOf(step: StepDefinition): StepKind {
  if (step.task !== undefined) return 'fanout';
  if (step.workflow !== undefined) return 'call';
  if (step.type === 'signal') return 'signal';
  if (step.sleep !== undefined) return 'sleep';
  if (step.fail !== undefined) return 'fail';
  if (step.output !== undefined && step.queue === undefined && step.type === undefined) return 'pass';
  return 'worker';
}

/** The queue a step sends its requests to (its `queue`, else its name), or undefined for a step that sends none. */
export function sentQueueOf(step: StepDefinition): string | undefined {
  return stepKindOf(step) === 'worker' ? (step.queue ?? step.name) : undefined;
}
