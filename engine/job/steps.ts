import type { StepNode } from '../definition/compile.js';
import { formatDuration } from '../definition/duration.js';
import type { CompiledExpression } from '../expressions/expression.js';
import type { Json, JsonObject } from '../json.js';
import { recordAttemptEnd } from './attempt-log.js';
import { armAttemptTimer, beginAttempt, clearStepTimer } from './attempt-start.js';
import { cancelCall, reportToCaller, startCall } from './calls.js';
import { Draft } from './draft.js';
import {
  DEFAULT_FAN_OUT_SLICE,
  DEFAULT_MAX_FAN_OUT,
  DEFAULT_MAX_FAN_OUT_BYTES,
  type EngineContext,
} from './events.js';
import {
  childIds,
  childInput,
  childInputBase,
  emptyFanOutOutput,
  fanOutList,
  fanOutTooLarge,
} from './fan-out.js';
import { holdAttempt } from './hold.js';
import { jobResult, stepInput } from './inputs.js';
import { type JoinVerdict, joinVerdictOf } from './join.js';
import { DEFAULT_MAX_MESSAGE_BYTES, oversizedRequest } from './message-size.js';
import { startOnFailure } from './on-failure.js';
import { PersistentList } from './persistent-list.js';
import { recordIteration, repeatDecision } from './repeat.js';
import { retriesFailure, retryDelayMs } from './retry-policy.js';
import { effectiveInput, evaluateStepExpression, evaluateWhen, startedInput } from './step-input.js';
import type { ChildOutcome, Effects, FanInit } from './transition.js';
import { countTreeJobs, heldByRoot } from './tree-growth.js';
import {
  correlationIdOf,
  dependencyStatus,
  isSettled,
  JOB_FORMAT_VERSION,
  type JobError,
  type JobRecord,
  type ParentLink,
  type StepState,
} from './types.js';

/**
 * Dispatches, in declaration order, the candidates that are waiting and whose join is decided
 * (join.ts: for most, every dependency settled: completed, skipped, or failed with `continueOnError`).
 */
export function dispatchReady(d: Draft, candidates: Iterable<string>): void {
  for (const name of candidates) {
    if (d.job.status !== 'running') return;
    if (d.step(name).status !== 'waiting') continue;
    const node = d.graph.byName.get(name) as StepNode;
    if (joinOf(d, node).kind !== 'wait') dispatchStep(d, node);
  }
}

/** The step's join rule over its dependencies as they stand (without a list per check: it runs at each dispatch). */
function joinOf(d: Draft, node: StepNode): JoinVerdict {
  const seen = { pending: false, completed: false, failed: false, skipped: false };
  for (const index of node.dependsIndex) seen[dependencyStatus(d.job.steps.get(index))] = true;
  return joinVerdictOf(node.join, seen);
}

/**
 * A step settled: its dependents each count one dependency fewer (in their `waitingOn`, so that
 * a step with many dependencies is not checked against all of them at each one's completion), then
 * those with none left are dispatched, in declaration order. Every count is taken before the first
 * dispatch, which may stop the job: a retry then finds them right.
 */
function dispatchDependents(d: Draft, settled: StepNode): void {
  const ready: StepNode[] = [];
  const completed = d.step(settled.name).status === 'completed';
  for (const name of settled.dependents) {
    const node = d.graph.byName.get(name) as StepNode;
    if (node.dependsIndex.length === 1 || (node.join === 'any_completed' && completed)) {
      ready.push(node);
      continue;
    }
    const counted = d.step(name).waitingOn;
    const waitingOn = counted === undefined ? unfinishedDepends(d, node) : counted - 1;
    d.updateStep(name, { waitingOn });
    if (waitingOn === 0) ready.push(node);
  }
  for (const node of ready) {
    if (d.job.status !== 'running') return;
    if (d.step(node.name).status === 'waiting') dispatchStep(d, node);
  }
}

/** Dependencies not settled (a job stored before `waitingOn` existed counts them once). */
function unfinishedDepends(d: Draft, node: StepNode): number {
  let count = 0;
  for (const index of node.dependsIndex) if (!isSettled(d.job.steps.get(index))) count++;
  return count;
}

/**
 * A ready step is skipped when its join says so (join.ts), or its `when:` is false; else it starts
 * with its input fixed and is dispatched: a request to a worker, a wait for a signal, or a fan-out.
 */
export function dispatchStep(d: Draft, node: StepNode): void {
  if (node.dependsIndex.length) {
    const join = joinOf(d, node);
    if (join.kind === 'wait') return;
    if (join.kind === 'skip') return skipStep(d, node, join.reason);
  }
  // A skipped dependency passes its own input on (join: none_failed): recorded, as the dashboard
  // cannot tell it from the outputs alone.
  const passesThrough =
    node.join === 'none_failed' && node.dependsIndex.some((i) => d.job.steps.get(i)?.status === 'skipped');
  // The merged input, computed once for the condition and the mapping.
  const merged =
    node.when || node.inputMap || node.params || passesThrough ? stepInput(d.job, node, d.graph) : undefined;
  if (node.when) {
    const when = evaluateWhen(d, node.when, merged as JsonObject);
    if (!when.ok) return failStep(d, node, when.error);
    if (!when.value)
      return skipStep(
        d,
        node,
        node.otherwise ? '"otherwise": a sibling\'s "when" held' : `"when" is false: ${node.when.source}`,
      );
  }
  const state = d.step(node.name);
  if (state.rerunInput !== undefined) {
    // A rerun's new input is what the step is given, whatever its mapping would make.
    d.updateStep(node.name, { input: state.rerunInput, rerunInput: undefined });
  } else if (state.status === 'waiting' && !(node.kind === 'fanout' && state.children)) {
    if (merged === undefined) {
      // Sent its merged input; an input recorded by an earlier run (a signal's) no longer holds.
      if (state.input !== undefined) d.updateStep(node.name, { input: undefined });
    } else {
      const input = effectiveInput(d, node, merged);
      if (!input.ok) {
        const { error } = input;
        return input.tooLarge
          ? oversized(d, error, () => failStep(d, node, error))
          : failStep(d, node, error);
      }
      const recorded = input.recorded || passesThrough;
      if (recorded || state.input !== undefined)
        d.updateStep(node.name, { input: recorded ? input.value : undefined });
    }
  }
  if (node.kind === 'worker' || node.kind === 'call') return sendAttempt(d, node);
  const started: Partial<StepState> = {
    status: 'running',
    attempts: state.attempts + 1,
    attemptStartedAt: d.now,
    startedAt: state.startedAt ?? d.now,
    error: undefined,
  };
  if (node.kind === 'signal') {
    d.updateStep(node.name, { ...started, deadline: node.timeoutMs ? d.now + node.timeoutMs : undefined });
    armAttemptTimer(d, node);
    d.effects.notes.push({
      kind: 'awaitingSignal',
      jobId: d.job.id,
      step: node.name,
      attempt: started.attempts,
    });
    return;
  }
  if (node.kind === 'pass' || node.kind === 'fail' || node.kind === 'sleep') {
    d.updateStep(node.name, started);
    return runWithoutWorker(d, node);
  }
  if (state.children) {
    // A retried fan-out keeps its children: the completed ones keep their results.
    d.updateStep(node.name, started);
    d.effects.followUps.push({ kind: 'resumeChildren', jobId: d.job.id, step: node.name });
    const { created } = state.children;
    if (created !== undefined)
      d.effects.followUps.push({ kind: 'createChildren', jobId: d.job.id, step: node.name, from: created });
    return;
  }
  fanOut(d, node, started);
}

function fanOut(d: Draft, node: StepNode, started: Partial<StepState>): void {
  const task = node.task as NonNullable<StepNode['task']>;
  const input = startedInput(d, node);
  const list = fanOutList(input, task);
  d.updateStep(node.name, started);
  if (!list.ok) return failStep(d, node, list.error);
  if (list.items.length === 0) return completeStep(d, node, emptyFanOutOutput(input, task));
  const maxFanOut = d.context.maxFanOut ?? DEFAULT_MAX_FAN_OUT;
  if (list.items.length > maxFanOut) {
    return failStep(
      d,
      node,
      `"${task.itemListKey}" has ${list.items.length} elements; a fan-out takes at most ${maxFanOut} (a setting of the manager)`,
    );
  }

  const base = childInputBase(input, task);
  const tooLarge = fanOutTooLarge(base, list.items, d.context.maxFanOutBytes ?? DEFAULT_MAX_FAN_OUT_BYTES);
  if (tooLarge) return failStep(d, node, tooLarge);

  const total = list.items.length;
  // Every child counts now, those of later slices too: the fan-out fits its tree's quota whole, or fails.
  const overQuota = countTreeJobs(d, total);
  if (overQuota) return failStep(d, node, overQuota);
  const concurrency = Math.min(total, task.concurrency);
  // A limited fan-out's slots look up each next child in the store: its children are created at once.
  const created = concurrency === total ? Math.min(total, fanOutSlice(d.context)) : total;
  d.updateStep(node.name, { children: childrenState(total, concurrency, created) });
  const counts: FanInit = { parentId: d.job.id, step: node.name, total, done: 0, failed: 0 };
  if (node.continueOnError) counts.continueOnError = true;
  d.effects.fanInits.push(counts);
  // Children started here that finish at once (an empty nested fan-out) are counted in the counters
  // set here rather than counted again when stored.
  createChildren(d, node, list.items, base, 0, created, (outcome) => {
    if (outcome.status === 'completed') counts.done++;
    else counts.failed++;
  });
  d.effects.notes.push({
    kind: 'dispatched',
    jobId: d.job.id,
    step: node.name,
    attempt: d.step(node.name).attempts,
  });
}

/** The next slice of a large fan-out's children, from child `from` on. */
export function createMoreChildren(d: Draft, node: StepNode, from: number): void {
  const children = d.step(node.name).children;
  if (children?.created !== from) return d.ignore('these children were created already');
  const task = node.task as NonNullable<StepNode['task']>;
  const input = startedInput(d, node);
  const list = fanOutList(input, task);
  // The step's input is fixed when it starts: made of settled steps' outputs, or recorded.
  if (!list.ok || list.items.length !== children.total) return d.ignore('the fan-out list is not the same');
  const to = Math.min(children.total, from + fanOutSlice(d.context));
  d.updateStep(node.name, { children: childrenState(children.total, children.concurrency, to) });
  createChildren(d, node, list.items, childInputBase(input, task), from, to);
}

const fanOutSlice = (context: EngineContext): number =>
  Math.max(1, Math.floor(context.fanOutSlice ?? DEFAULT_FAN_OUT_SLICE));

function childrenState(total: number, concurrency: number, created: number): StepState['children'] {
  return created < total ? { total, concurrency, created } : { total, concurrency };
}

/**
 * Creates the children `from` to `to` (excluded) of a fan-out step; those within its concurrency
 * start at once, and a `createChildren` follow-up asks for the next slice. `countFinished` counts a
 * child that finishes as it starts, in the counters this transition sets. A later slice has no such
 * counters to add to (the stored ones may have moved since): a child of it that would finish as it
 * starts is created waiting instead, and a `startChildren` follow-up starts it, so that its own
 * write counts it.
 */
function createChildren(
  d: Draft,
  node: StepNode,
  items: readonly Json[],
  base: JsonObject,
  from: number,
  to: number,
  countFinished?: (outcome: ChildOutcome) => void,
): void {
  const task = node.task as NonNullable<StepNode['task']>;
  const { total, concurrency } = d.step(node.name).children as NonNullable<StepState['children']>;
  const ids = childIds(d.job.id, node.name, items, d.context.takenIds, from, to, d.context.childIdSeed);
  const allAtOnce = concurrency === total ? (true as const) : undefined;
  const taskGraph = d.workflow.tasks.get(task.name);
  const stepNames = taskGraph?.steps.map((step) => step.name) ?? [];
  const startLater: string[] = [];
  for (let index = from; index < to; index++) {
    const child = newJobRecord({
      id: ids[index - from] as string,
      workflow: d.workflow.name,
      version: d.workflow.version,
      task: task.name,
      parent: allAtOnce
        ? { id: d.job.id, step: node.name, index, allAtOnce }
        : { id: d.job.id, step: node.name, index },
      root: d.job.root,
      vhost: d.job.vhost,
      input: childInput(base, task, items[index] as Json),
      stepNames,
      now: d.now,
    });
    if (taskGraph?.usesParent) child.parentInput = d.job.input;
    if (d.job.treeRoot !== undefined) child.treeRoot = d.job.treeRoot;
    if (index >= concurrency) {
      d.effects.creates.push(child);
      continue;
    }
    // Only a later slice takes back what a child that finished as it started added.
    const mark = countFinished ? undefined : effectsMark(d.effects);
    let finished = false;
    const childDraft = new Draft(child, d.workflow, d.context, d.effects, (outcome) => {
      finished = true;
      countFinished?.(outcome);
    });
    startJob(childDraft);
    // A refused command refuses with it what it started in its children.
    if (childDraft.rejected) return d.reject(childDraft.rejected.code, childDraft.rejected.message);
    if (finished && mark) {
      rollBack(d.effects, mark);
      d.effects.creates.push(child);
      startLater.push(child.id);
      continue;
    }
    d.effects.creates.push(childDraft.job);
  }
  if (to < total)
    d.effects.followUps.push({ kind: 'createChildren', jobId: d.job.id, step: node.name, from: to });
  if (startLater.length)
    d.effects.followUps.push({ kind: 'startChildren', jobId: d.job.id, step: node.name, ids: startLater });
}

type EffectsMark = { [K in keyof Effects]: number };

function effectsMark(effects: Effects): EffectsMark {
  return {
    requests: effects.requests.length,
    timers: effects.timers.length,
    creates: effects.creates.length,
    followUps: effects.followUps.length,
    fanInits: effects.fanInits.length,
    notes: effects.notes.length,
    treeCounted: effects.treeCounted.length,
  };
}

/** Takes back what was added to `effects` since `mark`. */
function rollBack(effects: Effects, mark: EffectsMark): void {
  for (const key of Object.keys(mark) as (keyof Effects)[]) effects[key].length = mark[key];
}

/** Sends the step's next attempt to its queue (or, for a `workflow:` step, starts its next job). */
export function sendAttempt(d: Draft, node: StepNode): void {
  if (d.job.status === 'paused') return holdAttempt(d, node);
  if (node.kind === 'call') {
    return startCall(d, node, (message) => failStep(d, node, message));
  }
  const state = d.step(node.name);
  const attempt = beginAttempt(d, node);
  const body = startedInput(d, node);
  const tooLarge = oversizedRequest(node.name, body, d.context.maxRequestBytes ?? DEFAULT_MAX_MESSAGE_BYTES);
  // The same input would be too large again: the step fails now, whatever its retries.
  if (tooLarge) return oversized(d, tooLarge, () => failAttempt(d, node, tooLarge, { retryable: false }));
  d.effects.requests.push({
    jobId: d.job.id,
    step: node.name,
    queue: node.queue,
    vhost: d.job.vhost,
    correlationId: correlationIdOf(d.job.id, node.name),
    attempt,
    body,
    ...(node.timeoutMs ? { deadline: d.now + node.timeoutMs } : {}),
    ...(node.secrets ? { secrets: node.secrets } : {}),
  });
  if (node.timeoutMs) armAttemptTimer(d, node);
  else if (state.retryAt !== undefined) clearStepTimer(d, node.name);
  d.effects.notes.push({ kind: 'dispatched', jobId: d.job.id, step: node.name, attempt });
}

/**
 * A request over the size limit: the step that built it fails (`fail`), or, for a command a user
 * sent (`oversizedRequests: 'refuse'`), the whole transition is refused and nothing changes.
 */
function oversized(d: Draft, message: string, fail: () => void): void {
  if (d.context.oversizedRequests === 'refuse') return d.reject('too_large', message);
  fail();
}

/**
 * A step that needs no worker, started: a pass step completes with its input (reshaped by its
 * `output:`), a `fail:` step fails with its message, a `sleep:` step waits for its timer (at once
 * when its time is past).
 */
function runWithoutWorker(d: Draft, node: StepNode): void {
  const input = startedInput(d, node);
  if (node.kind === 'pass') return completeStep(d, node, input);
  if (node.kind === 'fail') {
    const message = evaluateStepExpression(
      d,
      'fail.message',
      node.failMessage as CompiledExpression<'string'>,
      input,
    );
    return failStep(d, node, message.ok ? message.value : message.error);
  }
  const wake = wakeTime(d, node, input);
  if (!wake.ok) return failStep(d, node, wake.error);
  if (wake.at <= d.now) return completeStep(d, node, input);
  d.updateStep(node.name, { sleepUntil: wake.at, deadline: wake.at });
  armAttemptTimer(d, node);
}

/** When a `sleep:` step wakes: its duration from now, or its `until` time. */
function wakeTime(
  d: Draft,
  node: StepNode,
  input: JsonObject,
): { ok: true; at: number } | { ok: false; error: string } {
  const sleep = node.sleep as NonNullable<StepNode['sleep']>;
  if ('ms' in sleep) return { ok: true, at: d.now + sleep.ms };
  const until = evaluateStepExpression(d, 'sleep.until', sleep.until, input);
  return until.ok ? { ok: true, at: until.value } : until;
}

/**
 * A step completes with its output (reshaped by its `output:`, which a mistake in makes the step
 * fail, without retries); its dependents become ready; the job completes with its last step.
 */
export function completeStep(d: Draft, node: StepNode, produced: JsonObject): void {
  if (node.repeat) {
    const loop = repeatDecision(d, node, produced);
    if (loop.kind === 'fail') return failStep(d, node, loop.message);
    if (loop.kind === 'again') return repeatStep(d, node, produced, loop.iterations, loop.delayMs);
    d.updateStep(node.name, { iterations: loop.iterations });
  }
  let output = produced;
  if (node.outputMap) {
    const mapped = evaluateStepExpression(d, 'output', node.outputMap, startedInput(d, node), produced);
    if (!mapped.ok) return failStep(d, node, mapped.error);
    output = mapped.value;
  }
  const state = d.step(node.name);
  const seq = d.job.seq + 1;
  d.updateJob({ seq });
  d.updateStep(node.name, {
    status: 'completed',
    output,
    endedAt: d.now,
    seq,
    deadline: undefined,
    retryAt: undefined,
    sleepUntil: undefined,
  });
  if (state.deadline !== undefined || state.retryAt !== undefined) clearStepTimer(d, node.name);
  d.effects.notes.push({
    kind: 'stepCompleted',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    durationMs: d.now - (state.attemptStartedAt ?? d.now),
  });
  settle(d, node);
}

/** A `repeat:` step runs again: at once, or after its delay on a retry timer. */
function repeatStep(d: Draft, node: StepNode, output: JsonObject, iterations: number, delayMs: number): void {
  recordIteration(d, node, output, iterations);
  const state = d.step(node.name);
  d.effects.notes.push({
    kind: 'retryScheduled',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    message: `repeat: iteration ${iterations + 1}${delayMs ? ` in ${formatDuration(delayMs)}` : ''}`,
  });
  if (delayMs === 0) return sendAttempt(d, node);
  const retryAt = d.now + delayMs;
  if (state.deadline !== undefined) clearStepTimer(d, node.name);
  d.updateStep(node.name, { retryAt, deadline: undefined });
  d.effects.timers.push({
    op: 'set',
    timer: { jobId: d.job.id, step: node.name, kind: 'retry', attempt: state.attempts, at: retryAt },
  });
}

/**
 * Its dependents become ready, and the job completes with its last step to settle (not always a
 * terminal step: a `join: any_completed` step may finish before one of its dependencies).
 */
function settle(d: Draft, node: StepNode): void {
  if (node.dependents.length) dispatchDependents(d, node);
  if ((d.job.status === 'running' || d.job.status === 'paused') && d.job.seq === d.graph.steps.length)
    completeJob(d);
}

/** The step does not run: it has no output, and counts as settled for its dependents. */
function skipStep(d: Draft, node: StepNode, reason: string): void {
  const seq = d.job.seq + 1;
  d.updateJob({ seq });
  d.updateStep(node.name, { status: 'skipped', skipReason: reason, endedAt: d.now, seq, input: undefined });
  d.effects.notes.push({ kind: 'stepSkipped', jobId: d.job.id, step: node.name, message: reason });
  settle(d, node);
}

/**
 * A failed attempt is retried while `retries` allow and its `retryOn` matches the failure, after the
 * delay its retry policy gives (retry-policy.ts); then the step fails, and with it the job. A failure
 * that is not `retryable` fails the step at once.
 */
export function failAttempt(
  d: Draft,
  node: StepNode,
  message: string,
  {
    timedOut = false,
    retryable = true,
    rejected = false,
  }: { timedOut?: boolean; retryable?: boolean; rejected?: boolean } = {},
): void {
  recordAttemptEnd(d, node.name, timedOut ? 'timeout' : rejected ? 'rejected' : 'error', message);
  const state = d.step(node.name);
  d.effects.notes.push({
    kind: timedOut ? 'timedOut' : 'attemptFailed',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    message,
  });
  if (timedOut) cancelCall(d, node);
  const retriesUsed = state.attempts - state.firstAttempt;
  const retries = node.kind === 'worker' || node.kind === 'call' ? node.retries : 0;
  if (!retryable || retriesUsed >= retries) return failStep(d, node, message);
  if (!retriesFailure(node.retryPolicy, { timedOut, message }))
    return failStep(d, node, `${message} (not retried: "retryOn" does not match it)`);
  const delay = retryDelayMs(node.retryPolicy, retriesUsed, `${d.job.id}:${node.name}:${state.attempts}`);
  if (delay === 0) {
    d.updateStep(node.name, { error: message });
    d.effects.notes.push({
      kind: 'retryScheduled',
      jobId: d.job.id,
      step: node.name,
      attempt: state.attempts,
      message: 'retry at once',
    });
    return sendAttempt(d, node);
  }
  const retryAt = d.now + delay;
  d.updateStep(node.name, { error: message, retryAt, deadline: undefined });
  d.effects.timers.push({
    op: 'set',
    timer: { jobId: d.job.id, step: node.name, kind: 'retry', attempt: state.attempts, at: retryAt },
  });
  d.effects.notes.push({
    kind: 'retryScheduled',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    message: `retry in ${formatDuration(delay)}`,
  });
}

export function failStep(d: Draft, node: StepNode, message: string): void {
  const state = d.step(node.name);
  const handled = node.continueOnError;
  const seq = handled ? d.job.seq + 1 : undefined;
  if (seq !== undefined) d.updateJob({ seq });
  d.updateStep(node.name, {
    status: 'failed',
    endedAt: d.now,
    error: message,
    deadline: undefined,
    retryAt: undefined,
    sleepUntil: undefined,
    ...(handled
      ? {
          handled: true as const,
          seq,
          output: { error: { step: node.name, message, attempts: state.attempts, at: d.now } },
        }
      : {}),
  });
  if (state.deadline !== undefined || state.retryAt !== undefined) clearStepTimer(d, node.name);
  if (node.kind === 'fanout' && d.step(node.name).children) {
    d.effects.followUps.push({ kind: 'cancelChildren', jobId: d.job.id, step: node.name });
  }
  d.effects.notes.push({
    kind: 'stepFailed',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    message,
  });
  if (handled) return settle(d, node);
  failJob(d, { step: node.name, attempt: state.attempts, message, at: d.now });
}

/** The job fails: its running steps are cancelled, their children too, and nothing more is sent. */
export function failJob(d: Draft, error: JobError): void {
  stopRunningSteps(d);
  d.updateJob({ status: 'failed', error, endedAt: d.now, deadline: undefined });
  startOnFailure(d, error);
  reportToCaller(d);
  d.effects.notes.push({
    kind: 'jobFailed',
    jobId: d.job.id,
    step: error.step ?? undefined,
    message: error.message,
  });
  finishAsChild(d, 'failed');
}

/**
 * The job ends now as `aborted` (a worker's `abort`): like a failure, its running steps are
 * cancelled, its `onFailure` workflow runs, and a caller hears of it; a fan-out parent does not
 * (the abort reaches the top-level job instead).
 */
export function abortJob(d: Draft, error: JobError): void {
  stopRunningSteps(d);
  d.updateJob({ status: 'aborted', error, endedAt: d.now, deadline: undefined });
  d.effects.notes.push({
    kind: 'jobAborted',
    jobId: d.job.id,
    step: error.step ?? undefined,
    message: error.message,
  });
  startOnFailure(d, error);
  reportToCaller(d);
}

export function cancelJob(d: Draft): void {
  stopRunningSteps(d);
  d.updateJob({ status: 'cancelled', endedAt: d.now, deadline: undefined });
  d.effects.notes.push({ kind: 'jobCancelled', jobId: d.job.id });
  reportToCaller(d);
}

function stopRunningSteps(d: Draft): void {
  // A scheduled job's timer (same key as the deadline) is its start time.
  if (d.job.deadline !== undefined || d.job.status === 'scheduled') {
    d.effects.timers.push({ op: 'clear', key: { jobId: d.job.id, step: null } });
  }
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    if (state.status !== 'running' && state.status !== 'suspended') continue;
    // A running attempt ends cancelled; one that failed and waits for its retry was recorded then.
    if (state.status === 'running' && state.retryAt === undefined)
      recordAttemptEnd(d, node.name, 'cancelled');
    d.updateStep(node.name, {
      status: 'cancelled',
      endedAt: d.now,
      deadline: undefined,
      retryAt: undefined,
      sleepUntil: undefined,
    });
    if (state.deadline !== undefined || state.retryAt !== undefined) clearStepTimer(d, node.name);
    if (node.kind === 'fanout' && state.children) {
      d.effects.followUps.push({ kind: 'cancelChildren', jobId: d.job.id, step: node.name });
    }
    cancelCall(d, node);
  }
  d.dropUnsent = true;
}

function completeJob(d: Draft): void {
  if (d.job.deadline !== undefined)
    d.effects.timers.push({ op: 'clear', key: { jobId: d.job.id, step: null } });
  d.updateJob({
    status: 'completed',
    result: jobResult(d.job, d.graph),
    endedAt: d.now,
    deadline: undefined,
  });
  d.effects.notes.push({ kind: 'jobCompleted', jobId: d.job.id });
  finishAsChild(d, 'completed');
  reportToCaller(d);
}

function finishAsChild(d: Draft, status: 'completed' | 'failed'): void {
  const parent = d.job.parent;
  if (!parent) return;
  d.onFinished({ parentId: parent.id, step: parent.step, index: parent.index, status });
  d.effects.followUps.push(
    status === 'completed' && parent.allAtOnce
      ? {
          kind: 'childFinished',
          parentId: parent.id,
          step: parent.step,
          index: parent.index,
          status,
          onlyIfLast: true,
        }
      : { kind: 'childFinished', parentId: parent.id, step: parent.step, index: parent.index, status },
  );
}

/**
 * A waiting job starts: its deadline is armed and its ready steps are dispatched. Under a tree root
 * known to be paused it starts paused, dispatching nothing; under one that has ended, it is
 * cancelled (tree-quota.ts).
 */
export function startJob(d: Draft): void {
  const held = heldByRoot(d);
  if (held === 'ended') return cancelJob(d);
  d.updateJob({ status: 'running' });
  if (d.job.parent === null && d.workflow.timeoutMs) {
    const at = d.now + d.workflow.timeoutMs;
    d.updateJob({ deadline: at });
    d.effects.timers.push({ op: 'set', timer: { jobId: d.job.id, step: null, kind: 'job', attempt: 0, at } });
  }
  if (held === 'paused') {
    d.updateJob({ status: 'paused' });
    d.effects.notes.push({ kind: 'jobPaused', jobId: d.job.id });
    return;
  }
  dispatchReady(
    d,
    d.graph.steps.map((step) => step.name),
  );
  if (d.job.status === 'running' && d.job.seq === d.graph.steps.length) completeJob(d);
}

/** A failed or cancelled job runs again: its failed and cancelled steps are reset; completed ones stay. */
export function resetForRetry(d: Draft): void {
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    // A handled failure settled, and its dependents went on with its error: it stays as it is.
    if ((state.status !== 'failed' && state.status !== 'cancelled') || state.handled) continue;
    d.updateStep(node.name, {
      status: 'waiting',
      firstAttempt: state.attempts + 1,
      error: undefined,
      endedAt: undefined,
      deadline: undefined,
      retryAt: undefined,
      // A loop runs anew: its `max` counts again.
      iterations: undefined,
    });
  }
  d.updateJob({ status: 'waiting', error: undefined, endedAt: undefined, result: undefined });
}

export interface NewJobParams {
  id: string;
  workflow: string;
  version: number;
  task: string | null;
  parent: ParentLink | null;
  root: string;
  vhost: string | null;
  input: JsonObject;
  stepNames: readonly string[];
  now: number;
}

/** A job as created: waiting, every step waiting. */
export function newJobRecord(params: NewJobParams): JobRecord {
  const steps = PersistentList.taking<StepState>(
    params.stepNames.map((name) => ({ name, status: 'waiting', attempts: 0, firstAttempt: 1 })),
  );
  return {
    id: params.id,
    workflow: params.workflow,
    version: params.version,
    task: params.task,
    parent: params.parent,
    root: params.root,
    vhost: params.vhost,
    status: 'waiting',
    input: params.input,
    createdAt: params.now,
    updatedAt: params.now,
    formatVersion: JOB_FORMAT_VERSION,
    rev: 1,
    seq: 0,
    steps,
  };
}
