import type { StepNode } from '../definition/compile.js';
import type { JsonObject } from '../json.js';
import { recordAttemptEnd } from './attempt-log.js';
import { clearStepTimer } from './attempt-start.js';
import type { Draft } from './draft.js';
import { startedInput } from './step-input.js';
import { abortJob, sendAttempt } from './steps.js';

/**
 * A worker answered `abort`: the whole job ends now as `aborted`. In a fan-out child, the child
 * ends so, and a follow-up aborts its top-level job, which cancels the other children.
 */
export function abortFromWorker(d: Draft, node: StepNode, reason: string): void {
  const message = `aborted by the worker: ${reason}`;
  recordAttemptEnd(d, node.name, 'error', message);
  const state = d.step(node.name);
  d.updateStep(node.name, { status: 'failed', error: message, endedAt: d.now, deadline: undefined });
  if (state.deadline !== undefined) clearStepTimer(d, node.name);
  abortJob(d, { step: node.name, attempt: state.attempts, message, at: d.now });
  if (d.job.parent !== null) {
    d.effects.followUps.push({ kind: 'abortJob', jobId: d.job.id, root: d.job.root, reason });
  }
}

/**
 * A worker answered `suspend`: the step waits for a signal, with no timeout running, keeping the
 * worker's note of what it waits for (none when the reply gave none).
 */
export function suspendStep(d: Draft, node: StepNode, note?: string): void {
  recordAttemptEnd(d, node.name, 'suspended');
  const state = d.step(node.name);
  d.updateStep(node.name, { status: 'suspended', deadline: undefined, suspendNote: note });
  if (state.deadline !== undefined) clearStepTimer(d, node.name);
  d.effects.notes.push({ kind: 'stepSuspended', jobId: d.job.id, step: node.name, attempt: state.attempts });
}

/**
 * The signal a suspended step waited for: it is sent to its worker again, as a new attempt, with
 * the signal's body under `signal` in its input (kept for the attempts after it).
 */
export function resumeSuspended(d: Draft, node: StepNode, signal: JsonObject): void {
  const { attempts } = d.step(node.name);
  // Retries count from this attempt: the wait was not a failure.
  d.updateStep(node.name, {
    input: { ...startedInput(d, node), signal },
    firstAttempt: attempts + 1,
    suspendNote: undefined,
  });
  sendAttempt(d, node);
}
