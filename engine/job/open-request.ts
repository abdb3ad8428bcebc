import { isFinished, type JobRecord } from './types.js';

/**
 * A request sent for attempt `attempt` of `step` is still of use to its job while the job has not
 * ended and the step has not moved past that attempt: the attempt was not answered, timed out or
 * cancelled, and no later one started. A step the job does not have yet counts as open. A store
 * that keeps unsent requests drops those no longer open instead of sending them.
 */
export function requestStillOpen(
  job: Pick<JobRecord, 'status' | 'steps'>,
  request: { step: string; attempt: number },
): boolean {
  if (isFinished(job.status)) return false;
  const step = job.steps.find((state) => state.name === request.step);
  if (!step) return true;
  if (step.attempts !== request.attempt) return step.attempts < request.attempt;
  return step.status === 'running';
}
