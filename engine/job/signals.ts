import type { StepNode } from '../definition/compile.js';
import type { JsonObject } from '../json.js';
import { callHopOf, callPathFate } from './call-path-signals.js';
import { resumeSuspended } from './control-replies.js';
import type { Draft } from './draft.js';
import { bufferRefusal, MAX_BUFFERED_SIGNALS, signalBytes, signalFate } from './early-signals.js';
import { startedInput } from './step-input.js';
import { completeStep } from './steps.js';
import type { PendingSignal } from './types.js';

/**
 * `POST /api/job/{id}/signal/{step}`: taken by a step that waits for it, kept by the job for a step
 * that will or may wait for it later, or refused (early-signals.ts says which).
 */
export function signal(d: Draft, step: string, body: JsonObject): void {
  const kept = d.job.pendingSignals ?? [];
  const buffered = kept.find((signal) => signal.step === step);
  // A path through a workflow: step that has not started its called job (call-path-signals.ts).
  const hop = callHopOf(step);
  const node = d.graph.byName.get(hop ? hop.call : step);
  if (!node && !hop) return d.reject('invalid', `job ${d.job.id} has no step "${step}"`);
  const fate = hop
    ? callPathFate(d, step, node, hop.call, buffered)
    : signalFate({
        step,
        kind: (node as StepNode).kind,
        state: d.step(step),
        jobStatus: d.job.status,
        buffered,
      });
  if (fate.kind === 'refuse') return d.reject(fate.code, fate.reason);
  if (fate.kind === 'take') return takeSignal(d, node as StepNode, body);
  const full = bufferRefusal(kept, body);
  if (full) return d.reject('too_large', full);
  d.updateJob({ pendingSignals: [...kept, { step, body, at: d.now, bytes: signalBytes(body) }] });
  d.effects.notes.push({ kind: 'signalBuffered', jobId: d.job.id, step, message: fate.reason });
}

/**
 * After every event: each kept signal whose step now waits is handed to it, one at a time (taking
 * one may make another step wait, or end the job); those whose step can no longer take them (it
 * ended without waiting, or the job ended) are dropped, with a note saying why.
 */
export function deliverKeptSignals(d: Draft): void {
  for (let pass = 0; pass <= MAX_BUFFERED_SIGNALS; pass++) {
    const kept = d.job.pendingSignals ?? [];
    const keep: PendingSignal[] = [];
    let taken: { signal: PendingSignal; node: StepNode } | undefined;
    let dropped = false;
    for (const signal of kept) {
      const hop = callHopOf(signal.step);
      const node = d.graph.byName.get(hop ? hop.call : signal.step);
      const fate: ReturnType<typeof signalFate> = hop
        ? callPathFate(d, signal.step, node, hop.call, undefined)
        : node
          ? signalFate({
              step: signal.step,
              kind: node.kind,
              state: d.step(node.name),
              jobStatus: d.job.status,
            })
          : { kind: 'refuse', code: 'invalid', reason: `the job has no step "${signal.step}"` };
      if (fate.kind === 'buffer' || (fate.kind === 'take' && taken)) keep.push(signal);
      else if (fate.kind === 'take') taken = { signal, node: node as StepNode };
      else {
        dropped = true;
        d.effects.notes.push({
          kind: 'signalDropped',
          jobId: d.job.id,
          step: signal.step,
          message: fate.reason,
        });
      }
    }
    if (!taken && !dropped) return;
    d.updateJob({ pendingSignals: keep.length ? keep : undefined });
    if (!taken) return;
    d.effects.notes.push({ kind: 'signalDelivered', jobId: d.job.id, step: taken.signal.step });
    takeSignal(d, taken.node, taken.signal.body);
  }
}

/** A step that waits takes its signal: a signal step completes with it, a suspended step is sent again. */
function takeSignal(d: Draft, node: StepNode, body: JsonObject): void {
  if (node.kind === 'worker') return resumeSuspended(d, node, body);
  // The job's data upstream of the step flows on through it, with the signal's keys over it.
  completeStep(d, node, { ...startedInput(d, node), ...body });
}
