import type { CompiledWorkflow, StepNode } from '../definition/compile.js';
import { graphOf } from '../definition/compile.js';
import { formatDuration } from '../definition/duration.js';
import { unhandled } from '../exhaustive.js';
import type { JsonObject } from '../json.js';
import { admitJob, promoteJob, settleSlot } from './admission.js';
import { abortFromWorker, suspendStep } from './control-replies.js';
import { Draft } from './draft.js';
import { MAX_BUFFERED_SIGNALS } from './early-signals.js';
import type { EngineContext, JobEvent } from './events.js';
import { followRoot } from './follow-root.js';
import {
  type Actor,
  appendHistory,
  type HistoryCause,
  type HistoryEntry,
  historyEntriesOf,
  notesByJob,
} from './history.js';
import { settleWaits } from './listed-status.js';
import { deliveriesOf } from './notifications.js';
import { pauseJob, resumeJob } from './pause.js';
import { rerunFrom } from './rerun.js';
import { searchAttributesOf } from './search-attributes.js';
import { deliverKeptSignals, signal } from './signals.js';
import { startedInput } from './step-input.js';
import {
  abortJob,
  cancelJob,
  completeStep,
  createMoreChildren,
  failAttempt,
  failJob,
  failStep,
  newJobRecord,
  resetForRetry,
  sendAttempt,
  startJob,
} from './steps.js';
import {
  type ChildOutcome,
  type Effects,
  emptyEffects,
  type JobPatch,
  type Transition,
  type TransitionNote,
  treeCountOf,
} from './transition.js';
import { contextOf } from './tree-growth.js';
import { DEFAULT_MAX_TREE_JOBS, rootStateOf, treeChangeOf } from './tree-quota.js';
import { type CallLink, isFinished, type JobRecord, type PendingSignal, type Timer } from './types.js';

export interface CreateJobParams {
  id: string;
  input: JsonObject;
  vhost?: string | null;
  /** An `onFailure` job: the failed job that started it. */
  causedBy?: string;
  /** A job a `workflow:` step started. */
  calledBy?: CallLink;
  /** A called job: the root of its caller's tree, which it counts in (tree-quota.ts). */
  treeRoot?: string;
  /** A delayed start: later than now, the job is `scheduled` until then (a `start` timer). */
  startAt?: number;
  /** Who started it (its history's first entry names them). */
  actor?: Actor;
  /** A called job: the signals its caller kept for its steps (engine/job/call-path-signals.ts). */
  signals?: PendingSignal[];
}

/** Starts a new top-level job: its record, and the requests for the steps that start with it. */
export function createJob(
  workflow: CompiledWorkflow,
  params: CreateJobParams,
  context: EngineContext,
): Transition {
  const record = newJobRecord({
    id: params.id,
    workflow: workflow.name,
    version: workflow.version,
    task: null,
    parent: null,
    root: params.id,
    vhost: params.vhost ?? workflow.vhosts[0] ?? null,
    input: params.input,
    stepNames: workflow.main.steps.map((step) => step.name),
    now: context.now,
  });
  if (params.causedBy) record.causedBy = params.causedBy;
  if (params.calledBy) record.calledBy = params.calledBy;
  if (params.treeRoot !== undefined && params.treeRoot !== params.id) record.treeRoot = params.treeRoot;
  if (params.signals?.length) record.pendingSignals = params.signals.slice(0, MAX_BUFFERED_SIGNALS);
  const attributes = searchAttributesOf(workflow, record);
  if (attributes) record.attributes = attributes;
  const startAt = params.startAt;
  const cause: HistoryCause = { creating: true, ...(params.actor ? { actor: params.actor } : {}) };
  if (startAt !== undefined && startAt > context.now) {
    return run(workflow, record, context, cause, (d) => scheduleStart(d, startAt));
  }
  return run(workflow, record, context, cause, (d) => admitJob(d));
}

/** Applies one event to a job: the pure heart of the manager. */
export function applyEvent(
  workflow: CompiledWorkflow,
  job: JobRecord,
  event: JobEvent,
  context: EngineContext,
): Transition {
  const actor = 'actor' in event ? event.actor : undefined;
  return run(workflow, job, context, { creating: false, event, ...(actor ? { actor } : {}) }, (d) => {
    switch (event.type) {
      case 'start':
        if (d.job.status !== 'waiting') return d.ignore(`job is ${d.job.status}`);
        return startJob(d);
      case 'promote':
        return promoteJob(d);
      case 'reply': {
        // A loop's iterations are its attempts: a late or re-sent reply of an earlier one (or one
        // that comes while the loop waits out its delay) must not count as the next iteration's.
        const node =
          event.exactAttempt || d.graph.byName.get(event.step)?.repeat
            ? currentAttemptOf(d, event.step, event.attempt)
            : awaitingStep(d, event.step, 'worker');
        if (node) completeStep(d, node, event.output);
        return;
      }
      case 'failure': {
        const node = awaitingStep(d, event.step, 'worker');
        if (!node) return;
        const state = d.step(node.name);
        if (event.attempt !== undefined && event.attempt !== state.attempts) {
          return d.ignore(`attempt ${event.attempt} is not the current attempt (${state.attempts})`);
        }
        if (state.retryAt !== undefined)
          return d.ignore('the attempt already failed and waits for its retry');
        return failAttempt(d, node, event.message, {
          retryable: event.retryable !== false,
          rejected: event.rejected === true,
        });
      }
      case 'heartbeat': {
        const node = currentAttemptOf(d, event.step, event.attempt);
        if (!node) return;
        const state = d.step(node.name);
        if (!node.timeoutMs) return d.ignore('the step has no timeout to extend');
        const deadline = d.now + node.timeoutMs;
        d.updateStep(node.name, { deadline });
        d.effects.timers.push({
          op: 'set',
          timer: { jobId: d.job.id, step: node.name, kind: 'attempt', attempt: state.attempts, at: deadline },
        });
        return;
      }
      case 'timer':
        return onTimer(d, event.timer);
      case 'signal':
        return signal(d, event.step, event.output);
      case 'cancel':
        if (isFinished(d.job.status)) return d.reject('conflict', `the job is already ${d.job.status}`);
        return cancelJob(d);
      case 'abort': {
        if (event.step === undefined) {
          if (isFinished(d.job.status)) return d.ignore(`job is ${d.job.status}`);
          return abortJob(d, { step: null, attempt: 0, message: `aborted: ${event.reason}`, at: d.now });
        }
        const node = currentAttemptOf(d, event.step, event.attempt);
        if (node) abortFromWorker(d, node, event.reason);
        return;
      }
      case 'suspend': {
        const node = currentAttemptOf(d, event.step, event.attempt);
        if (node) suspendStep(d, node, event.note);
        return;
      }
      case 'pause':
        return pauseJob(d);
      case 'resume':
        return resumeJob(d);
      case 'retry':
        if (d.job.status !== 'failed' && d.job.status !== 'cancelled' && d.job.status !== 'aborted') {
          return d.reject(
            'conflict',
            `only a failed, cancelled or aborted job can be retried; this one is ${d.job.status}`,
          );
        }
        resetForRetry(d);
        if (event.hold) return;
        // A top-level job starts again as a new one would: under its workflow's `maxRunning`.
        return d.job.parent === null ? admitJob(d) : startJob(d);
      case 'rerun':
        rerunFrom(d, event.from, event.input);
        if (d.rejected) return;
        // As a retry: a top-level job starts again under its workflow's `maxRunning`.
        return admitJob(d);
      case 'childFailed': {
        const node = awaitingStep(d, event.step, 'fanout');
        if (node) failStep(d, node, `child ${event.index} (${event.childId}) failed: ${event.message}`);
        return;
      }
      case 'fanIn': {
        const node = awaitingStep(d, event.step, 'fanout');
        if (node) completeStep(d, node, event.output);
        return;
      }
      case 'callFinished': {
        const node = awaitingStep(d, event.step, 'call');
        if (!node) return;
        const state = d.step(node.name);
        if (state.attempts !== event.attempt || state.job !== event.childId || state.retryAt !== undefined)
          return d.ignore(`job ${event.childId} is not the step's current call`);
        if (event.status === 'completed') return completeStep(d, node, event.result ?? {});
        const message =
          event.status === 'cancelled'
            ? `the called job ${event.childId} was cancelled`
            : `the called job ${event.childId} failed: ${event.message ?? 'no reason given'}`;
        return failAttempt(d, node, message);
      }
      case 'createChildren': {
        // Resume asks for the slice again (engine/job/pause.ts): the step keeps `children.created`.
        if (d.job.status === 'paused')
          return d.ignore('the job is paused: its children are created at resume');
        const node = awaitingStep(d, event.step, 'fanout');
        if (node) createMoreChildren(d, node, event.from);
        return;
      }
      default:
        return unhandled(event, 'job event');
    }
  });
}

/**
 * The worker step a control reply names, when the reply answers its current attempt and that
 * attempt has not failed already; else the reason is noted.
 */
function currentAttemptOf(d: Draft, step: string, attempt: number | undefined): StepNode | undefined {
  const node = awaitingStep(d, step, 'worker');
  if (!node) return undefined;
  const state = d.step(node.name);
  if (attempt !== undefined && attempt !== state.attempts) {
    return void d.ignore(`attempt ${attempt} is not the current attempt (${state.attempts})`);
  }
  if (state.retryAt !== undefined)
    return void d.ignore('the attempt already ended (it waits for a retry or the next iteration)');
  return node;
}

/**
 * The step named by a reply, when it is running and awaits one of this kind; else the reason is noted.
 * A paused job takes replies as a running one does: nothing already sent is lost.
 */
function awaitingStep(d: Draft, step: string, kind: StepNode['kind']): StepNode | undefined {
  if (!isActive(d.job.status)) return void d.ignore(`job is ${d.job.status}`);
  const node = d.graph.byName.get(step);
  if (!node) return void d.ignore(`job has no step "${step}"`);
  if (node.kind !== kind) return void d.ignore(`step "${step}" is a ${node.kind} step`);
  const status = d.step(step).status;
  if (status === 'completed') return void d.ignore('duplicate: the step already completed');
  if (status !== 'running') return void d.ignore(`step is ${status}`);
  return node;
}

/** Running or paused: a paused job's timers run on (its timeouts and deadline fail as they would). */
/** A job that takes replies, signals and timers: running, or paused (which only holds dispatches). */
function isActive(status: JobRecord['status']): boolean {
  return status === 'running' || status === 'paused';
}

/** `POST /api/workflow/{name}?at=`: the job waits as `scheduled`, and its `start` timer starts it. */
function scheduleStart(d: Draft, at: number): void {
  d.updateJob({ status: 'scheduled', startAt: at });
  d.effects.timers.push({ op: 'set', timer: { jobId: d.job.id, step: null, kind: 'start', attempt: 0, at } });
}

function onTimer(d: Draft, timer: Timer): void {
  if (timer.kind === 'start') {
    if (d.job.status !== 'scheduled') return d.ignore(`job is ${d.job.status}, not scheduled`);
    if (d.job.startAt === undefined || d.job.startAt > d.now) return d.ignore('stale start timer');
    // It starts as a job submitted now would: under its workflow's `maxRunning` (queued when full).
    return admitJob(d);
  }
  if (!isActive(d.job.status)) return d.ignore(`job is ${d.job.status}`);
  if (timer.kind === 'job') {
    if (d.job.deadline === undefined || d.job.deadline > d.now) return d.ignore('stale job timer');
    const timeout = d.workflow.timeoutMs ?? 0;
    return failJob(d, {
      step: null,
      attempt: 0,
      message: `the job did not finish within ${formatDuration(timeout)}`,
      at: d.now,
    });
  }
  const node = timer.step === null ? undefined : d.graph.byName.get(timer.step);
  if (!node) return d.ignore('timer for an unknown step');
  const state = d.step(node.name);
  if (state.status !== 'running' || state.attempts !== timer.attempt) return d.ignore('stale step timer');
  if (timer.kind === 'retry') {
    if (state.retryAt === undefined || state.retryAt > d.now) return d.ignore('stale retry timer');
    // The retry stays due (`retryAt` is past): resume sends it.
    if (d.job.status === 'paused') return d.ignore('the job is paused: the retry is sent at resume');
    return sendAttempt(d, node);
  }
  if (state.retryAt !== undefined || state.deadline === undefined || state.deadline > d.now) {
    return d.ignore('stale attempt timer');
  }
  if (node.kind === 'sleep') return completeStep(d, node, startedInput(d, node));
  const waited = formatDuration(node.timeoutMs ?? 0);
  const message =
    node.kind === 'signal'
      ? `no signal within ${waited}`
      : `no reply within ${waited} (attempt ${state.attempts})`;
  failAttempt(d, node, message, { timedOut: true });
}

function run(
  workflow: CompiledWorkflow,
  job: JobRecord,
  context: EngineContext,
  cause: HistoryCause,
  body: (d: Draft) => void,
): Transition {
  const creating = cause.creating;
  const effects = emptyEffects();
  let childOutcome: ChildOutcome | undefined;
  const d = new Draft(job, workflow, contextOf(context, job), effects, (outcome) => {
    childOutcome = outcome;
  });
  followRoot(d, creating);
  if (!d.rejected) body(d);
  if (!d.rejected && d.job.pendingSignals?.length) deliverKeptSignals(d);
  if (d.rejected) return unchanged(job, effects, d);
  if (creating || d.changed) recordHistory(d, effects, cause);
  const limit = settleSlot(d, creating ? undefined : job);
  settleWaits(d);
  const transition = finish(d, creating ? undefined : job, effects, childOutcome);
  if (limit && transition.changed) transition.limit = limit;
  // Most transitions neither make jobs nor follow their root: they carry no tree change.
  const grows = creating || effects.treeCounted.length > 0 || effects.creates.length > 0;
  const tree =
    transition.changed && (grows || d.followedRoot)
      ? treeChangeOf({
          job: d.job,
          created: creating,
          add: treeCountOf(effects),
          createsJobs: effects.creates.length > 0,
          followedRoot: d.followedRoot,
          rootState: context.tree ? rootStateOf(context.tree.rootStatus) : 'open',
          max: context.maxTreeJobs ?? DEFAULT_MAX_TREE_JOBS,
        })
      : undefined;
  if (tree) transition.tree = tree;
  return transition;
}

/** The job's history, and that of the children it created, take what the transition did. */
function recordHistory(d: Draft, effects: Effects, cause: HistoryCause): void {
  // A fan-out's slice creates thousands of children, each with notes of its own: grouped once, so
  // that each job reads only its own.
  const entries = historyEntriesOf(d.job, ownNotes(d.job.id, effects), cause, d.now);
  if (entries.length) {
    d.updateJob({ history: appendHistory(d.job.history, entries) });
    const targets = d.workflow.notify ?? d.context.defaultNotify ?? [];
    // appendHistory numbered the entries in place.
    const deliveries = deliveriesOf(d.job, entries as HistoryEntry[], targets);
    if (deliveries.length) d.effects.followUps.push({ kind: 'notify', jobId: d.job.id, deliveries });
  }
  if (effects.creates.length === 0) return;
  const notesOf = notesByJob(effects.notes);
  for (const child of effects.creates) {
    const childEntries = historyEntriesOf(child, notesOf.get(child.id) ?? [], { creating: true }, d.now);
    child.history = appendHistory(child.history, childEntries);
  }
}

/** The job's own notes: all of them, unless the transition made jobs of its own (which note too). */
function ownNotes(jobId: string, effects: Effects): readonly TransitionNote[] {
  if (effects.creates.length === 0) return effects.notes;
  return effects.notes.filter((note) => note.jobId === jobId);
}

function unchanged(job: JobRecord, effects: Effects, d: Draft): Transition {
  return {
    job,
    changed: false,
    expectedRev: job.rev,
    patch: { fields: {}, steps: {} },
    requests: [],
    timers: [],
    creates: [],
    followUps: [],
    fanInits: [],
    notes: effects.notes,
    dropUnsent: false,
    ignored: d.ignored,
    rejected: d.rejected,
  };
}

function finish(
  d: Draft,
  before: JobRecord | undefined,
  effects: Effects,
  childOutcome?: ChildOutcome,
): Transition {
  const job = d.job;
  const changed = before === undefined || d.changed;
  if (before && d.changed) {
    job.rev = before.rev + 1;
    job.updatedAt = d.now;
  }
  if (changed && (job.status === 'failed' || job.status === 'cancelled' || job.status === 'aborted')) {
    // Nothing more is sent for a stopped job, not even what this transition dispatched before it stopped.
    effects.requests = [];
    effects.timers = effects.timers.filter((change) => change.op === 'clear');
  }
  // A map without a prototype is a dictionary from the start: built as `{}`, each set of step
  // names would get V8 hidden classes of its own, and workflows of 1,000 steps made the stores
  // into it slow for every job run after them.
  const patch: JobPatch = { fields: {}, steps: Object.create(null) as JobPatch['steps'] };
  if (changed) {
    const fields = patch.fields as Record<string, unknown>;
    if (before) {
      // Every change to the job's own fields goes through Draft.updateJob, which records its keys.
      for (const key of d.changedFields) if (before[key] !== job[key]) fields[key] = job[key];
      if (d.changed) {
        fields.rev = job.rev;
        fields.updatedAt = job.updatedAt;
      }
      for (const name of d.changedSteps) patch.steps[name] = d.step(name);
    } else {
      for (const key of Object.keys(job) as (keyof JobRecord)[]) if (key !== 'steps') fields[key] = job[key];
      for (const state of job.steps) patch.steps[state.name] = state;
    }
  }
  return {
    job: changed ? job : (before as JobRecord),
    changed,
    expectedRev: before ? before.rev : 0,
    patch,
    requests: effects.requests,
    timers: effects.timers,
    creates: effects.creates,
    followUps: effects.followUps,
    fanInits: effects.fanInits,
    notes: effects.notes,
    childOutcome,
    dropUnsent: changed && d.dropUnsent,
    ignored: changed ? undefined : d.ignored,
  };
}

export { graphOf };
