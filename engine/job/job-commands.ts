import type { JsonObject } from '../json.js';
import { jsonEqual } from '../json.js';
import type { JobEvent } from './events.js';
import { type FollowUp, findStep, isFinished, type JobRecord, type JobStatus } from './types.js';

/*
 * The rules the manager carries out across jobs (functions/manager/follow-ups.ts, manager.ts): which
 * jobs a command or a cascade acts on, and what event each gets. Each is the spec's sentence as a
 * pure function; the manager reads the jobs and applies the events.
 */

/**
 * Cancel, pause, resume and retry act on the whole top-level job a job belongs to (workflows.md,
 * "Cancelling and retrying a job"): a child's command goes to its root. A signal names its own job.
 */
export function actsOnRoot(command: 'cancel' | 'pause' | 'resume' | 'retry' | 'signal'): boolean {
  return command !== 'signal';
}

/**
 * What a fan-out step's child gets when its step is stopped (`cancel`: running and paused children
 * are cancelled; children not yet dispatched stay so), its job paused (`pause`: running children
 * pause), or resumed (`resume`: paused children resume). Undefined: the child is left as it is.
 */
export function childCommand(
  command: 'cancel' | 'pause' | 'resume',
  status: JobStatus,
): JobEvent | undefined {
  switch (command) {
    case 'cancel':
      return status === 'running' || status === 'paused' ? { type: 'cancel' } : undefined;
    case 'pause':
      return status === 'running' ? { type: 'pause' } : undefined;
    case 'resume':
      return status === 'paused' ? { type: 'resume' } : undefined;
  }
}

/**
 * Children just paused or resumed (or started) follow their parent as it is now: the parent may have
 * been resumed or paused meanwhile, after the other cascade listed them. Undefined: the parent is as
 * the cascade expected, or ended (its own cascade stops the children).
 */
export function followParentEvent(
  parentStatus: JobStatus | undefined,
  expected: 'running' | 'paused',
): JobEvent | undefined {
  if (parentStatus === expected) return undefined;
  if (parentStatus === 'paused') return { type: 'pause' };
  if (parentStatus === 'running') return { type: 'resume' };
  return undefined;
}

/**
 * A fan-out step still takes its children's ends: its job is running or paused (a paused job's
 * children still finish, and their step fans in; only no child starts) and the step still runs.
 */
export function fanOutOpen(parent: JobRecord | undefined, step: string): parent is JobRecord {
  if (parent?.status !== 'running' && parent?.status !== 'paused') return false;
  return findStep(parent, step)?.status === 'running';
}

/**
 * A called job ended: the event its caller's step gets. An aborted called job is a failed call (the
 * caller's attempt fails; the abort ended the called job's tree, not the caller's).
 */
export function callFinishedEvent(
  followUp: Extract<FollowUp, { kind: 'callFinished' }>,
  called: JobRecord,
): JobEvent | undefined {
  if (!isFinished(called.status)) return undefined;
  return {
    type: 'callFinished',
    step: followUp.step,
    attempt: followUp.attempt,
    childId: called.id,
    status: called.status === 'aborted' ? 'failed' : called.status,
    result: called.result,
    message: called.error?.message,
  };
}

/**
 * A failed child's entry in a `continueOnError` fan-out's list (workflows.md, "Errors a workflow
 * handles itself"): `{step, message, attempts, at, child}`.
 */
export function failedChildEntry(child: JobRecord, step: string): JsonObject {
  const error = child.error;
  return {
    step: error?.step ?? step,
    message: error?.message ?? 'the child job failed',
    attempts: error?.attempt ?? 0,
    at: error?.at ?? child.updatedAt,
    child: child.id,
  };
}

/**
 * A start sent again with a chosen id is the same start (idempotent) when that id holds a top-level
 * job of the same workflow with the same input, as JSON values (key order aside); anything else is a
 * conflict.
 */
export function isSameStart(existing: JobRecord, workflow: string, input: JsonObject): boolean {
  return existing.workflow === workflow && existing.parent === null && jsonEqual(existing.input, input);
}

/** An event that may start a top-level job, which then starts under its workflow's `maxRunning`. */
export function mayStartJob(event: JobEvent): boolean {
  return (
    event.type === 'promote' ||
    event.type === 'retry' ||
    event.type === 'rerun' ||
    (event.type === 'timer' && event.timer.kind === 'start')
  );
}
