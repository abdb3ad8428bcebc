import type { StepNode } from '../definition/compile.js';
import type { Draft } from './draft.js';

/** A step's next attempt begins now: running, counted, with its reply deadline when it has a timeout. */
export function beginAttempt(d: Draft, node: StepNode): number {
  const state = d.step(node.name);
  const attempt = state.attempts + 1;
  d.updateStep(node.name, {
    status: 'running',
    attempts: attempt,
    attemptStartedAt: d.now,
    startedAt: state.startedAt ?? d.now,
    retryAt: undefined,
    deadline: node.timeoutMs ? d.now + node.timeoutMs : undefined,
  });
  return attempt;
}

/** Arms the timer of the step's current deadline, if it has one. */
export function armAttemptTimer(d: Draft, node: StepNode): void {
  const state = d.step(node.name);
  if (state.deadline === undefined) return;
  d.effects.timers.push({
    op: 'set',
    timer: { jobId: d.job.id, step: node.name, kind: 'attempt', attempt: state.attempts, at: state.deadline },
  });
}

export function clearStepTimer(d: Draft, step: string): void {
  d.effects.timers.push({ op: 'clear', key: { jobId: d.job.id, step } });
}
