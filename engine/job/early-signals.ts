import type { StepNode } from '../definition/compile.js';
import type { JsonObject } from '../json.js';
import { jsonBytesWithin } from '../json-size.js';
import type { JobStatus, PendingSignal, StepState } from './types.js';
import { isFinished } from './types.js';

/** The most signals a job keeps for steps that do not wait yet. */
export const MAX_BUFFERED_SIGNALS = 20;
/** The most bytes (their bodies as JSON, all together) a job keeps of signals for steps that do not wait yet. */
export const MAX_BUFFERED_SIGNAL_BYTES = 256 * 1024;

/**
 * What becomes of a signal for one step of one job, given where the step is:
 * - `take`: the step waits for it now (a running signal step, a suspended worker step);
 * - `buffer`: the step will or may wait for it later (a signal step not ready yet, a worker step whose
 *   worker may still answer `suspend`): the job keeps it and hands it over when the step waits;
 * - `refuse`: it can never be taken, for the reason given (`conflict`: the step or the job is past
 *   taking it; `invalid`: the step does not take signals).
 */
export type SignalFate =
  | { kind: 'take' }
  | { kind: 'buffer'; reason: string }
  | { kind: 'refuse'; code: 'conflict' | 'invalid'; reason: string };

/** Where the step a signal names stands. */
export interface SignalTarget {
  step: string;
  kind: StepNode['kind'];
  state: StepState;
  jobStatus: JobStatus;
  /** A signal for this step is already kept by the job. */
  buffered?: PendingSignal;
}

/** The rule: what a signal for `target` does now. */
export function signalFate(target: SignalTarget): SignalFate {
  const { step, kind, state, jobStatus } = target;
  if (kind !== 'signal' && kind !== 'worker') {
    return {
      kind: 'refuse',
      code: 'invalid',
      reason: `step "${step}" is a ${kind} step: only a signal step or a worker step takes a signal`,
    };
  }
  if (isFinished(jobStatus)) return { kind: 'refuse', code: 'conflict', reason: `the job is ${jobStatus}` };
  if (state.status !== 'waiting' && state.status !== 'running' && state.status !== 'suspended') {
    const how = state.status === 'failed' && state.handled ? 'failed (continueOnError)' : state.status;
    return { kind: 'refuse', code: 'conflict', reason: `step "${step}" is already ${how}` };
  }
  const active = jobStatus === 'running' || jobStatus === 'paused';
  const waits = kind === 'signal' ? state.status === 'running' : state.status === 'suspended';
  if (active && waits) return { kind: 'take' };
  if (target.buffered) {
    return {
      kind: 'refuse',
      code: 'conflict',
      reason: `a signal for step "${step}" is already kept for it (one per step until the step takes it)`,
    };
  }
  const reason =
    kind === 'signal'
      ? `step "${step}" is not ready yet`
      : `step "${step}" has not been suspended by its worker (yet)`;
  return { kind: 'buffer', reason };
}

/**
 * Whether the job may keep one more signal of `body` beside those it keeps: the reason it may not
 * (too many, too large), or undefined.
 */
export function bufferRefusal(kept: readonly PendingSignal[], body: JsonObject): string | undefined {
  if (kept.length >= MAX_BUFFERED_SIGNALS) {
    return `the job already keeps ${kept.length} signals for steps that do not wait yet; it keeps at most ${MAX_BUFFERED_SIGNALS}`;
  }
  const used = kept.reduce((sum, signal) => sum + signal.bytes, 0);
  const bytes = jsonBytesWithin(body, MAX_BUFFERED_SIGNAL_BYTES - used);
  if (bytes === undefined) {
    return `the job keeps ${used} bytes of signals for steps that do not wait yet; this one would pass the limit of ${MAX_BUFFERED_SIGNAL_BYTES} bytes`;
  }
  return undefined;
}

/** The byte size a kept signal counts for (its body as JSON). */
export function signalBytes(body: JsonObject): number {
  return jsonBytesWithin(body, Number.MAX_SAFE_INTEGER) ?? 0;
}
