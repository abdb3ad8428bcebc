import type { StepNode } from '../definition/compile.js';
import { resolveInCallerNamespace } from '../definition/namespace.js';
import type { JsonObject } from '../json.js';
import { armAttemptTimer, beginAttempt } from './attempt-start.js';
import { handOverSignals } from './call-path-signals.js';
import type { Draft } from './draft.js';
import { startedInput } from './step-input.js';
import { countTreeJobs } from './tree-growth.js';
import { treeRootOf } from './tree-quota.js';
import type { CallLink, FollowUp } from './types.js';
import { uuidV5 } from './uuid-v5.js';

/** Calls nest at most this deep: a job of depth 16 may not call another workflow. */
export const MAX_CALL_DEPTH = 16;

/** The id of the job a `workflow:` step's attempt runs: derived, so that no attempt starts two. */
export function calledJobId(jobId: string, step: string, attempt: number): string {
  return uuidV5(`${jobId}/${step}/call/${attempt}`);
}

/**
 * A `workflow:` step's next attempt: a job of the called workflow, started by a follow-up stored
 * with this transition, with the step's input, counted in the caller's tree (tree-quota.ts). A chain
 * of calls deeper than `MAX_CALL_DEPTH` (a cycle across workflows ends here too) fails the step, with
 * the chain spelled out; so does a tree with no room left for the called job under its quota.
 */
export function startCall(d: Draft, node: StepNode, fail: (message: string) => void): void {
  const named = node.call as NonNullable<StepNode['call']>;
  // A plain name: the workflow of that name in the caller's namespace.
  const call = { ...named, workflow: resolveInCallerNamespace(d.workflow.name, named.workflow) };
  const chain = [...(d.job.calledBy?.chain ?? []), d.workflow.name];
  const attempt = beginAttempt(d, node);
  if (chain.length > MAX_CALL_DEPTH) {
    return fail(
      `calls nest deeper than ${MAX_CALL_DEPTH} workflows: ${[...chain, call.workflow].join(' -> ')}`,
    );
  }
  const overQuota = countTreeJobs(d, 1);
  if (overQuota) return fail(overQuota);
  const id = calledJobId(d.job.id, node.name, attempt);
  d.updateStep(node.name, { job: id });
  const calledBy: CallLink = { id: d.job.id, step: node.name, attempt, chain };
  const input: JsonObject = startedInput(d, node);
  const treeRoot = treeRootOf(d.job);
  const start: Extract<FollowUp, { kind: 'startJob' }> = {
    kind: 'startJob',
    jobId: d.job.id,
    workflow: call.workflow,
    id,
    input,
    calledBy,
    treeRoot,
  };
  if (call.version !== undefined) start.version = call.version;
  // Signals sent through this step before it started (`publish/approve`) go with its called job.
  const signals = handOverSignals(d, node);
  if (signals) start.signals = signals;
  d.effects.followUps.push(start);
  armAttemptTimer(d, node);
  d.effects.notes.push({ kind: 'dispatched', jobId: d.job.id, step: node.name, attempt });
}

/** A called job that ended: its caller's step hears of it through a `callFinished` follow-up. */
export function reportToCaller(d: Draft): void {
  const caller = d.job.calledBy;
  if (!caller) return;
  d.effects.followUps.push({
    kind: 'callFinished',
    jobId: d.job.id,
    callerId: caller.id,
    step: caller.step,
    attempt: caller.attempt,
  });
}

/** The step's called job stops (the step timed out or stopped): cancel it. */
export function cancelCall(d: Draft, node: StepNode): void {
  const child = d.step(node.name).job;
  if (node.kind === 'call' && child) d.effects.followUps.push({ kind: 'cancelJob', jobId: child });
}
