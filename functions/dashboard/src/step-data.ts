import { mergeFirstWins } from '../../../engine/json.js';
import type { JobDocument, Json, JsonObject, StepDefinition } from './api-types.js';

/** A completed step's output: its `message` in the job document's `completed` list. */
export function stepOutput(job: Pick<JobDocument, 'completed'>, step: string): Json | undefined {
  return job.completed.find((entry) => entry.name === step)?.message;
}

/**
 * What a step received, by the rule of workflows.md: a step with no `depends` the job input, else
 * the merge (first wins, in `depends` order) of those steps' outputs. Undefined until they all have one.
 */
export function stepInput(
  job: Pick<JobDocument, 'input' | 'completed'>,
  step: Pick<StepDefinition, 'depends'>,
): JsonObject | undefined {
  const depends = step.depends ?? [];
  if (!depends.length) return job.input;
  const outputs = depends.map((name) => stepOutput(job, name));
  if (outputs.some((output) => output === undefined)) return undefined;
  return mergeFirstWins(outputs);
}
