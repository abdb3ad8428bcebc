import type { JobRecord, StepState } from '../../engine/index.js';

/** A job's step states by name, for assertions. */
export function stepsOf(job: JobRecord): Record<string, StepState | undefined> {
  return Object.fromEntries(job.steps.map((step) => [step.name, step]));
}
