import type { JsonObject } from '../json.js';
import type { Draft } from './draft.js';
import { signalBytes } from './early-signals.js';
import { type AttemptRecord, isFinished } from './types.js';

/**
 * `POST /api/job/{id}/rerun` `{from, input?}`: an ended top-level job runs again from `from`: that
 * step and every step after it (its dependents, transitively) start a new attempt; the steps before
 * it keep their outputs; a failed or cancelled step elsewhere runs again as a retry would. The
 * attempts that ended stay in each step's history (a completed one is recorded as such). `input`:
 * what the worker step `from` is sent in place of its merged input; for a signal step, its new
 * signal (kept by the job, taken when the step is ready).
 * The caller then starts the job as `retry` does. Refusals leave the job unchanged.
 */
export function rerunFrom(d: Draft, from: string, input: JsonObject | undefined): void {
  if (!isFinished(d.job.status))
    return d.reject('conflict', `only an ended job can be rerun; this one is ${d.job.status}`);
  if (d.job.parent !== null || d.job.calledBy !== undefined) {
    return d.reject(
      'invalid',
      `job ${d.job.id} runs inside another job (${d.job.parent ? 'a fan-out child' : 'a called job'}): rerun its top-level job`,
    );
  }
  const start = d.graph.byName.get(from);
  if (!start) return d.reject('invalid', `job ${d.job.id} has no step "${from}"`);
  if (input !== undefined && start.kind !== 'worker' && start.kind !== 'signal') {
    return d.reject(
      'invalid',
      `step "${from}" is a ${start.kind} step: only a worker or signal step takes a new input`,
    );
  }
  const rerun = stepsFrom(d, from);
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    if (rerun.has(node.name)) {
      if (state.status === 'waiting') continue;
      if (state.status === 'completed') keepCompletedAttempt(d, node.name);
      d.updateStep(node.name, {
        status: 'waiting',
        firstAttempt: d.step(node.name).attempts + 1,
        output: undefined,
        error: undefined,
        endedAt: undefined,
        deadline: undefined,
        retryAt: undefined,
        handled: undefined,
        skipReason: undefined,
        suspendNote: undefined,
        seq: undefined,
        waitingOn: undefined,
        children: undefined,
        job: undefined,
        input: undefined,
        iterations: undefined,
        sleepUntil: undefined,
      });
      continue;
    }
    if ((state.status === 'failed' || state.status === 'cancelled') && !state.handled) {
      d.updateStep(node.name, {
        status: 'waiting',
        firstAttempt: state.attempts + 1,
        error: undefined,
        endedAt: undefined,
        deadline: undefined,
        retryAt: undefined,
        iterations: undefined,
      });
    }
  }
  renumberSettled(d);
  if (input !== undefined && start.kind === 'signal') {
    // A signal step's new input is its new signal: kept, it completes the step when it is ready.
    const others = (d.job.pendingSignals ?? []).filter((signal) => signal.step !== from);
    d.updateJob({
      pendingSignals: [...others, { step: from, body: input, at: d.now, bytes: signalBytes(input) }],
    });
  } else if (input !== undefined) d.updateStep(from, { rerunInput: input });
  d.updateJob({ status: 'waiting', error: undefined, endedAt: undefined, result: undefined });
}

/** `from` and every step that depends on it, directly or not. */
function stepsFrom(d: Draft, from: string): Set<string> {
  const seen = new Set<string>([from]);
  const queue = [from];
  while (queue.length) {
    const node = d.graph.byName.get(queue.pop() as string);
    for (const next of node?.dependents ?? []) {
      if (seen.has(next)) continue;
      seen.add(next);
      queue.push(next);
    }
  }
  return seen;
}

/** The completed attempt a rerun replaces stays in the step's history, as it ended. */
function keepCompletedAttempt(d: Draft, step: string): void {
  const state = d.step(step);
  if (state.attempts === 0 || state.pastAttempts?.at(-1)?.attempt === state.attempts) return;
  const record: AttemptRecord = {
    attempt: state.attempts,
    sentAt: state.attemptStartedAt ?? state.startedAt ?? d.now,
    endedAt: state.endedAt ?? d.now,
    outcome: 'completed',
  };
  d.updateStep(step, { pastAttempts: [...(state.pastAttempts ?? []).slice(-99), record] });
}

/**
 * The job completes when as many steps settled as it has (`seq` counts them, and numbers their
 * order): the steps that keep their outputs are numbered again 1…k, in the order they settled.
 */
function renumberSettled(d: Draft): void {
  const settled = d.job.steps
    .toArray()
    .filter((state) => state.seq !== undefined)
    .sort((a, b) => (a.seq as number) - (b.seq as number));
  settled.forEach((state, n) => {
    if (state.seq !== n + 1) d.updateStep(state.name, { seq: n + 1 });
  });
  d.updateJob({ seq: settled.length });
}
