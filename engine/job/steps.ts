import type { StepNode } from '../definition/compile.js';
import { formatDuration } from '../definition/duration.js';
import type { Json, JsonObject } from '../json.js';
import { Draft } from './draft.js';
import { DEFAULT_FAN_OUT_SLICE, DEFAULT_MAX_FAN_OUT, type EngineContext } from './events.js';
import { childIds, childInput, childInputBase, emptyFanOutOutput, fanOutList } from './fan-out.js';
import { holdAttempt } from './hold.js';
import { jobResult, stepInput } from './inputs.js';
import type { ChildOutcome, Effects, FanInit } from './transition.js';
import { correlationIdOf, type JobError, type JobRecord, type ParentLink, type StepState } from './types.js';

/** Dispatches, in declaration order, the candidates that are waiting and whose ancestors all completed. */
export function dispatchReady(d: Draft, candidates: Iterable<string>): void {
  for (const name of candidates) {
    if (d.job.status !== 'running') return;
    if (d.step(name).status !== 'waiting') continue;
    const node = d.graph.byName.get(name) as StepNode;
    if (node.dependsIndex.every((index) => d.job.steps[index]?.status === 'completed')) dispatchStep(d, node);
  }
}

/**
 * A step completed: its dependents each count one dependency fewer (in their `waitingOn`, so that
 * a step with many dependencies is not checked against all of them at each one's completion), then
 * those with none left are dispatched, in declaration order. Every count is taken before the first
 * dispatch, which may stop the job: a retry then finds them right.
 */
function dispatchDependents(d: Draft, completed: StepNode): void {
  const ready: StepNode[] = [];
  for (const name of completed.dependents) {
    const node = d.graph.byName.get(name) as StepNode;
    if (node.dependsIndex.length === 1) {
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

/** Dependencies not completed (a job stored before `waitingOn` existed counts them once). */
function unfinishedDepends(d: Draft, node: StepNode): number {
  let count = 0;
  for (const index of node.dependsIndex) if (d.job.steps[index]?.status !== 'completed') count++;
  return count;
}

/** Ready steps are dispatched at once: a request to a worker, a wait for a signal, or a fan-out. */
export function dispatchStep(d: Draft, node: StepNode): void {
  if (node.kind === 'worker') return sendAttempt(d, node);
  const state = d.step(node.name);
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
    return;
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
  const input = stepInput(d.job, node, d.graph);
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

  const total = list.items.length;
  const concurrency = Math.min(total, task.concurrency);
  // A limited fan-out's slots look up each next child in the store: its children are created at once.
  const created = concurrency === total ? Math.min(total, fanOutSlice(d.context)) : total;
  d.updateStep(node.name, { children: childrenState(total, concurrency, created) });
  const counts: FanInit = { parentId: d.job.id, step: node.name, total, done: 0, failed: 0 };
  d.effects.fanInits.push(counts);
  // Children started here that finish at once (an empty nested fan-out) are counted in the counters
  // set here rather than counted again when stored.
  createChildren(d, node, list.items, childInputBase(input, task), 0, created, (outcome) => {
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
  const input = stepInput(d.job, node, d.graph);
  const list = fanOutList(input, task);
  // The step's input is made of completed steps' outputs, which cannot change while it runs.
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
  const stepNames = d.workflow.tasks.get(task.name)?.steps.map((step) => step.name) ?? [];
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
  };
}

/** Takes back what was added to `effects` since `mark`. */
function rollBack(effects: Effects, mark: EffectsMark): void {
  for (const key of Object.keys(mark) as (keyof Effects)[]) effects[key].length = mark[key];
}

/** Sends the step's next attempt to its queue. */
export function sendAttempt(d: Draft, node: StepNode): void {
  if (d.job.status === 'paused') return holdAttempt(d, node);
  const state = d.step(node.name);
  const attempt = state.attempts + 1;
  d.updateStep(node.name, {
    status: 'running',
    attempts: attempt,
    attemptStartedAt: d.now,
    startedAt: state.startedAt ?? d.now,
    retryAt: undefined,
    deadline: node.timeoutMs ? d.now + node.timeoutMs : undefined,
  });
  d.effects.requests.push({
    jobId: d.job.id,
    step: node.name,
    queue: node.queue,
    vhost: d.job.vhost,
    correlationId: correlationIdOf(d.job.id, node.name),
    attempt,
    body: stepInput(d.job, node, d.graph),
  });
  if (node.timeoutMs) armAttemptTimer(d, node);
  else if (state.retryAt !== undefined) clearStepTimer(d, node.name);
  d.effects.notes.push({ kind: 'dispatched', jobId: d.job.id, step: node.name, attempt });
}

function armAttemptTimer(d: Draft, node: StepNode): void {
  const state = d.step(node.name);
  if (state.deadline === undefined) return;
  d.effects.timers.push({
    op: 'set',
    timer: { jobId: d.job.id, step: node.name, kind: 'attempt', attempt: state.attempts, at: state.deadline },
  });
}

function clearStepTimer(d: Draft, step: string): void {
  d.effects.timers.push({ op: 'clear', key: { jobId: d.job.id, step } });
}

/** A step completes with its output; its dependents become ready; the job completes with its last step. */
export function completeStep(d: Draft, node: StepNode, output: JsonObject): void {
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
  });
  if (state.deadline !== undefined || state.retryAt !== undefined) clearStepTimer(d, node.name);
  d.effects.notes.push({
    kind: 'stepCompleted',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    durationMs: d.now - (state.attemptStartedAt ?? d.now),
  });
  if (node.dependents.length) dispatchDependents(d, node);
  else if ((d.job.status === 'running' || d.job.status === 'paused') && d.job.seq === d.graph.steps.length)
    completeJob(d);
}

/**
 * A failed attempt is retried while `retries` allow, after `retryDelay` doubling each time; then the
 * step fails, and with it the job. A failure that is not `retryable` fails the step at once.
 */
export function failAttempt(
  d: Draft,
  node: StepNode,
  message: string,
  { timedOut = false, retryable = true }: { timedOut?: boolean; retryable?: boolean } = {},
): void {
  const state = d.step(node.name);
  d.effects.notes.push({
    kind: timedOut ? 'timedOut' : 'attemptFailed',
    jobId: d.job.id,
    step: node.name,
    attempt: state.attempts,
    message,
  });
  const retriesUsed = state.attempts - state.firstAttempt;
  if (!retryable || node.kind !== 'worker' || retriesUsed >= node.retries) return failStep(d, node, message);
  const delay = node.retryDelayMs ? node.retryDelayMs * 2 ** retriesUsed : 0;
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
  d.updateStep(node.name, {
    status: 'failed',
    endedAt: d.now,
    error: message,
    deadline: undefined,
    retryAt: undefined,
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
  failJob(d, { step: node.name, attempt: state.attempts, message, at: d.now });
}

/** The job fails: its running steps are cancelled, their children too, and nothing more is sent. */
export function failJob(d: Draft, error: JobError): void {
  stopRunningSteps(d);
  d.updateJob({ status: 'failed', error, endedAt: d.now, deadline: undefined });
  d.effects.notes.push({
    kind: 'jobFailed',
    jobId: d.job.id,
    step: error.step ?? undefined,
    message: error.message,
  });
  finishAsChild(d, 'failed');
}

export function cancelJob(d: Draft): void {
  stopRunningSteps(d);
  d.updateJob({ status: 'cancelled', endedAt: d.now, deadline: undefined });
  d.effects.notes.push({ kind: 'jobCancelled', jobId: d.job.id });
}

function stopRunningSteps(d: Draft): void {
  if (d.job.deadline !== undefined) {
    d.effects.timers.push({ op: 'clear', key: { jobId: d.job.id, step: null } });
  }
  for (const node of d.graph.steps) {
    const state = d.step(node.name);
    if (state.status !== 'running') continue;
    d.updateStep(node.name, { status: 'cancelled', endedAt: d.now, deadline: undefined, retryAt: undefined });
    if (state.deadline !== undefined || state.retryAt !== undefined) clearStepTimer(d, node.name);
    if (node.kind === 'fanout' && state.children) {
      d.effects.followUps.push({ kind: 'cancelChildren', jobId: d.job.id, step: node.name });
    }
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

/** A waiting job starts: its deadline is armed and its ready steps are dispatched. */
export function startJob(d: Draft): void {
  d.updateJob({ status: 'running' });
  if (d.job.parent === null && d.workflow.timeoutMs) {
    const at = d.now + d.workflow.timeoutMs;
    d.updateJob({ deadline: at });
    d.effects.timers.push({ op: 'set', timer: { jobId: d.job.id, step: null, kind: 'job', attempt: 0, at } });
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
    if (state.status !== 'failed' && state.status !== 'cancelled') continue;
    d.updateStep(node.name, {
      status: 'waiting',
      firstAttempt: state.attempts + 1,
      error: undefined,
      endedAt: undefined,
      deadline: undefined,
      retryAt: undefined,
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
  const steps: StepState[] = params.stepNames.map((name) => ({
    name,
    status: 'waiting',
    attempts: 0,
    firstAttempt: 1,
  }));
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
    rev: 1,
    seq: 0,
    steps,
  };
}
