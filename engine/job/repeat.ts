import type { StepNode } from '../definition/compile.js';
import type { JsonObject } from '../json.js';
import { MAX_ATTEMPT_RECORDS } from './attempt-log.js';
import type { Draft } from './draft.js';
import { evaluateStepExpression, startedInput } from './step-input.js';
import type { AttemptRecord } from './types.js';

/** The most iterations a `repeat:` may ask for. */
export const MAX_REPEAT = 1_000;
/** An iteration's output is kept in the attempt history when its JSON is at most this long. */
export const MAX_KEPT_ITERATION_OUTPUT = 512;

/** What a loop does with an iteration's output: stop (the step completes), go again, or fail. */
export type RepeatDecision =
  | { kind: 'done'; iterations: number }
  | { kind: 'again'; iterations: number; delayMs: number }
  | { kind: 'fail'; message: string };

/**
 * `repeat: {until, max, delay}` (do-until): after each iteration, `until` is evaluated with the
 * iteration's `output`; true ends the loop, false runs the step again after `delay`, unless `max`
 * iterations ran, which fails the step.
 */
export function repeatDecision(d: Draft, node: StepNode, output: JsonObject): RepeatDecision {
  const repeat = node.repeat as NonNullable<StepNode['repeat']>;
  const iterations = (d.step(node.name).iterations ?? 0) + 1;
  const until = evaluateStepExpression(d, 'repeat.until', repeat.until, startedInput(d, node), output);
  if (!until.ok) return { kind: 'fail', message: until.error };
  if (until.value) return { kind: 'done', iterations };
  if (iterations >= repeat.max) {
    return {
      kind: 'fail',
      message: `"repeat.until" (${repeat.until.source}) did not hold after ${repeat.max} iterations (its "max")`,
    };
  }
  return { kind: 'again', iterations, delayMs: repeat.delayMs ?? 0 };
}

/**
 * Keeps an iteration that did not end the loop in the step's attempt history, with its output when
 * that is small (a loop of 1,000 large outputs must not swell the job).
 */
export function recordIteration(d: Draft, node: StepNode, output: JsonObject, iterations: number): void {
  const state = d.step(node.name);
  const record: AttemptRecord = {
    attempt: state.attempts,
    sentAt: state.attemptStartedAt ?? d.now,
    endedAt: d.now,
    outcome: 'repeated',
  };
  if (JSON.stringify(output).length <= MAX_KEPT_ITERATION_OUTPUT) record.output = output;
  const past = state.pastAttempts ?? [];
  const kept = past.length >= MAX_ATTEMPT_RECORDS ? past.slice(past.length - MAX_ATTEMPT_RECORDS + 1) : past;
  // Each iteration has its own retries: they count from its first attempt.
  d.updateStep(node.name, { pastAttempts: [...kept, record], iterations, firstAttempt: state.attempts + 1 });
}
