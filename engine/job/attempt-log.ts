import type { Draft } from './draft.js';
import type { AttemptOutcome, AttemptRecord } from './types.js';

/** Ended attempts a step keeps; the oldest go first (a step signalled again and again). */
export const MAX_ATTEMPT_RECORDS = 100;

/**
 * Records how the step's current attempt ended without completing it (an error, a timeout, a
 * request the worker kept rejecting, a cancel, a suspend): the audit trail of every attempt.
 * An attempt that completes its step needs no record: the step's own fields describe it.
 */
export function recordAttemptEnd(d: Draft, step: string, outcome: AttemptOutcome, error?: string): void {
  const state = d.step(step);
  if (state.attempts === 0) return;
  const past = state.pastAttempts ?? [];
  if (past.at(-1)?.attempt === state.attempts) return;
  const record: AttemptRecord = {
    attempt: state.attempts,
    sentAt: state.attemptStartedAt ?? d.now,
    endedAt: d.now,
    outcome,
  };
  if (error !== undefined) record.error = error;
  const kept = past.length >= MAX_ATTEMPT_RECORDS ? past.slice(past.length - MAX_ATTEMPT_RECORDS + 1) : past;
  d.updateStep(step, { pastAttempts: [...kept, record] });
}
