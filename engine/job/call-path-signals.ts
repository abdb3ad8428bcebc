import type { StepNode } from '../definition/compile.js';
import type { Draft } from './draft.js';
import type { SignalFate } from './early-signals.js';
import { parseStepPath } from './step-path.js';
import { isFinished, type PendingSignal } from './types.js';

/**
 * A signal whose path goes through a `workflow:` step of the job that has not started its called
 * job yet (`publish/approve`, `publish/inner/approve`): the job keeps it, under that path, like any
 * early signal (counted in the same bounds), and hands it to the called job when the step starts
 * it, under the rest of the path (`approve`), where it waits for its step as any kept signal does.
 */

/** `publish/approve` -> `{ call: 'publish', rest: 'approve' }`; undefined for a step of the job itself or a fan-out hop. */
export function callHopOf(path: string): { call: string; rest: string } | undefined {
  const slash = path.indexOf('/');
  if (slash < 0) return undefined;
  const parsed = parseStepPath(path);
  if ('error' in parsed) return undefined;
  const first = parsed.hops[0];
  if (!first || first.index !== undefined) return undefined;
  return { call: first.step, rest: path.slice(slash + 1) };
}

/** What a signal for `path` (through the call step `node`) does now: kept until the step starts its job, or refused. */
export function callPathFate(
  d: Draft,
  path: string,
  node: StepNode | undefined,
  call: string,
  buffered: PendingSignal | undefined,
): SignalFate {
  if (!node) return { kind: 'refuse', code: 'invalid', reason: `job ${d.job.id} has no step "${call}"` };
  if (node.kind !== 'call')
    return {
      kind: 'refuse',
      code: 'invalid',
      reason: `step "${call}" is a ${node.kind} step: a signal path keeps only through a workflow: step not started yet`,
    };
  if (isFinished(d.job.status))
    return { kind: 'refuse', code: 'conflict', reason: `the job is ${d.job.status}` };
  const state = d.step(node.name);
  if (state.status !== 'waiting') {
    return {
      kind: 'refuse',
      code: 'conflict',
      reason:
        state.job === undefined
          ? `step "${call}" is ${state.status}: it will not start a called job`
          : `step "${call}" has started its called job: ${STARTED_MEANWHILE}`,
    };
  }
  if (buffered)
    return {
      kind: 'refuse',
      code: 'conflict',
      reason: `a signal for "${path}" is already kept for it (one per path until its step takes it)`,
    };
  return { kind: 'buffer', reason: `step "${call}" has not started its called job yet` };
}

/** The end of the refusal the manager reads to send the signal again, to the called job this time. */
export const STARTED_MEANWHILE = 'send the signal to it';

/**
 * The call step `node` starts its called job: the signals the job keeps for paths through it leave
 * the job, to be the called job's kept signals under the rest of their paths.
 */
export function handOverSignals(d: Draft, node: StepNode): PendingSignal[] | undefined {
  const kept = d.job.pendingSignals;
  if (!kept?.length) return undefined;
  const handed: PendingSignal[] = [];
  const stay: PendingSignal[] = [];
  for (const signal of kept) {
    const hop = callHopOf(signal.step);
    if (hop?.call === node.name) handed.push({ ...signal, step: hop.rest });
    else stay.push(signal);
  }
  if (!handed.length) return undefined;
  d.updateJob({ pendingSignals: stay.length ? stay : undefined });
  for (const signal of handed) {
    d.effects.notes.push({
      kind: 'signalDelivered',
      jobId: d.job.id,
      step: `${node.name}/${signal.step}`,
      message: 'handed to the called job',
    });
  }
  return handed;
}
