import type { StepNode } from '../definition/compile.js';
import { clearStepTimer } from './attempt-start.js';
import type { Draft } from './draft.js';

/**
 * Called by `sendAttempt` for a paused job: the attempt is not sent but held as a retry due now,
 * which `resumeJob` sends.
 */
export function holdAttempt(d: Draft, node: StepNode): void {
  const state = d.step(node.name);
  d.updateStep(node.name, { status: 'running', retryAt: d.now, deadline: undefined });
  if (state.deadline !== undefined) clearStepTimer(d, node.name);
}
