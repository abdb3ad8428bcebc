import { mergeFirstWins } from '../../../engine/index.js';
import type { JobDocument, Json, JsonObject, StepDefinition, StepView } from './api-types.js';

/**
 * A step's output as its dependents got it: a completed step's `message` in the job document's
 * `completed` list; for a failure its workflow handled (`continueOnError`), the error it handed on,
 * `{"error": {"step", "message", "attempts", "at"}}` as the engine builds it.
 */
export function stepOutput(
  job: Pick<JobDocument, 'completed'> & Partial<Pick<JobDocument, 'steps'>>,
  step: string,
): Json | undefined {
  const view = job.steps?.[step];
  if (view?.handled) return handedOnError(step, view);
  return job.completed.find((entry) => entry.name === step)?.message;
}

function handedOnError(step: string, view: StepView): JsonObject {
  const error: JsonObject = { step, message: view.error ?? '', attempts: view.attempt };
  if (view.endedAt) error.at = Date.parse(view.endedAt);
  return { error };
}

/**
 * What a step received, by the rules of workflows.md: a step with no `depends` the job input, else the
 * merge (first wins, in `depends` order) of the outputs of those steps that completed or handed on
 * their error; a skipped one adds nothing. Undefined until they all settled, and for a skipped step.
 * `input:` and `params` are not applied here: the job document records what was sent (`sentInput`).
 */
export function stepInput(
  job: Pick<JobDocument, 'input' | 'completed'> & Partial<Pick<JobDocument, 'steps'>>,
  step: Pick<StepDefinition, 'depends'> & { name?: string },
): JsonObject | undefined {
  if (step.name && job.steps?.[step.name]?.status === 'skipped') return undefined;
  const depends = step.depends ?? [];
  if (!depends.length) return job.input;
  const skipped = (name: string) => job.steps?.[name]?.status === 'skipped';
  const outputs = depends.map((name) => (skipped(name) ? null : stepOutput(job, name)));
  if (outputs.some((output) => output === undefined)) return undefined;
  if (outputs.every((output) => output === null)) return undefined;
  return mergeFirstWins(outputs.map((output) => output ?? undefined));
}

/**
 * What the worker (or called workflow) was sent: the document's recorded `input` when `input:` or
 * `params` made it differ from the merged input, else the merged input. `recorded` says which.
 */
export function sentInput(
  job: Pick<JobDocument, 'input' | 'completed' | 'steps'>,
  step: Pick<StepDefinition, 'name' | 'depends'>,
): { value: JsonObject; recorded: boolean } | undefined {
  const recorded = job.steps[step.name]?.input;
  if (recorded) return { value: recorded, recorded: true };
  const merged = stepInput(job, step);
  return merged && { value: merged, recorded: false };
}
