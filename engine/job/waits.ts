import type { WorkflowDefinition } from '../definition/types.js';
import type { JobRecord, StepState } from './types.js';

/**
 * A step that waits for someone outside the job: a `type: signal` step running (it waits for its
 * signal), or a worker step its worker suspended (it waits for the signal that sends it again). Both
 * are unblocked by `POST /api/job/{id}/signal/{step}`. Neither is a status of the job, which stays
 * `running` (or `paused`): this is a view of its steps, derived each time it is asked for.
 */
export interface SignalWait {
  step: string;
  /** `signal`: a signal step; `suspended`: a worker's `suspend` reply. */
  kind: 'signal' | 'suspended';
  /** Since when (ms since the epoch): the signal step's start, or the suspend reply. */
  since: number;
  /** A suspended step's note from its worker. */
  note?: string;
}

/** The names of the `type: signal` steps a job runs: its workflow's, or for a fan-out child its task's. */
export function signalStepsOf(definition: WorkflowDefinition, task: string | null): Set<string> {
  const steps =
    task === null
      ? definition.steps
      : (definition.tasks?.find((candidate) => candidate.name === task)?.steps ?? []);
  return new Set(steps.filter((step) => step.type === 'signal').map((step) => step.name));
}

/** The steps of `job` that wait for a signal, in the job's step order. */
export function signalWaits(job: JobRecord, signalSteps: ReadonlySet<string>): SignalWait[] {
  const waits: SignalWait[] = [];
  for (const state of job.steps) {
    const wait = signalWaitOf(state, signalSteps.has(state.name), job.updatedAt);
    if (wait) waits.push(wait);
  }
  return waits;
}

/** `fallback`: a time for a step whose records say none (a job stored before they were kept). */
function signalWaitOf(state: StepState, isSignalStep: boolean, fallback: number): SignalWait | undefined {
  if (state.status === 'suspended') {
    const suspended = state.pastAttempts?.findLast((record) => record.outcome === 'suspended');
    const wait: SignalWait = { step: state.name, kind: 'suspended', since: suspended?.endedAt ?? fallback };
    if (state.suspendNote !== undefined) wait.note = state.suspendNote;
    return wait;
  }
  // Also while a timed-out wait waits for its retry: a signal completes the step then too.
  if (isSignalStep && state.status === 'running')
    return { step: state.name, kind: 'signal', since: state.attemptStartedAt ?? state.startedAt ?? fallback };
  return undefined;
}
