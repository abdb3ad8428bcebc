import type { LimitChange } from './running-limit.js';
import type { TreeChange } from './tree-quota.js';
import type { FanCounts, FollowUp, JobRecord, StepRequest, StepState, TimerChange } from './types.js';

/** Why a transition was refused (the API turns these into 409, 400 and 413). */
export interface Rejection {
  /** `too_large`: a step would send a request over the size limit (`oversizedRequests: 'refuse'`). */
  code: 'conflict' | 'invalid' | 'too_large';
  message: string;
}

/** Something worth logging or counting that a transition did. */
export interface TransitionNote {
  kind:
    | 'dispatched'
    | 'stepCompleted'
    | 'stepSkipped'
    | 'attemptFailed'
    | 'retryScheduled'
    | 'timedOut'
    | 'stepFailed'
    | 'jobCompleted'
    | 'jobFailed'
    | 'jobCancelled'
    | 'jobAborted'
    | 'stepSuspended'
    /** A signal came before its step waited: the job keeps it (engine/job/early-signals.ts). */
    | 'signalBuffered'
    /** A kept signal was handed to its step. */
    | 'signalDelivered'
    /** A kept signal was dropped: its step ended without waiting for it, or the job ended (`message`). */
    | 'signalDropped'
    /** A signal step became ready: it waits for its signal. */
    | 'awaitingSignal'
    | 'jobPaused'
    | 'jobResumed'
    | 'jobQueued';
  jobId: string;
  step?: string;
  attempt?: number;
  message?: string;
  /** Milliseconds from the attempt's start to its end (completed steps). */
  durationMs?: number;
}

/** The changed parts of a job: what a store must write. */
export interface JobPatch {
  fields: Partial<Omit<JobRecord, 'steps'>>;
  steps: Record<string, StepState>;
}

/** A fresh fan-out's counters, and what a store needs besides them to tell when the step fans in. */
export interface FanInit extends FanCounts {
  parentId: string;
  step: string;
  /** The step lets failed children count as finished (`readyToFanIn`, engine/job/fan-in.ts). */
  continueOnError?: true;
}

/** A child's final state, counted exactly once with the write that records it. */
export interface ChildOutcome {
  parentId: string;
  step: string;
  index: number;
  status: 'completed' | 'failed';
}

/**
 * What one event did to one job: the new state and its delta, the store condition, and the
 * messages, timers, new child jobs and follow-up work that must be stored with it.
 */
export interface Transition {
  job: JobRecord;
  changed: boolean;
  /** The job's revision the store must still hold (0: the job must not exist yet). */
  expectedRev: number;
  patch: JobPatch;
  requests: StepRequest[];
  timers: TimerChange[];
  /** New jobs (fan-out children), created only if absent: their ids are deterministic. */
  creates: JobRecord[];
  followUps: FollowUp[];
  /** Set fan-out counters (a fresh fan-out). */
  fanInits: FanInit[];
  /** This job is a child that just completed or failed. */
  childOutcome?: ChildOutcome;
  /** The job stopped: requests of it not yet sent must not be sent. */
  dropUnsent: boolean;
  /** The change to its workflow's `maxRunning` counters, written with the job (running-limit.ts). */
  limit?: LimitChange;
  /** What it adds to its job's tree, and the root's state it rests on (tree-quota.ts). */
  tree?: TreeChange;
  notes: TransitionNote[];
  /** Why nothing changed, for a reply that was not awaited (duplicate, late, unknown step). */
  ignored?: string;
  rejected?: Rejection;
}

/** Everything a transition produces besides the job's own state; shared with children started in it. */
export interface Effects {
  requests: StepRequest[];
  timers: TimerChange[];
  creates: JobRecord[];
  followUps: FollowUp[];
  fanInits: FanInit[];
  notes: TransitionNote[];
  /**
   * The jobs counted against the tree so far, after each fan-out started or call made (tree-quota.ts):
   * a running total, the last the whole (an array, so that a rolled-back child takes its count back).
   */
  treeCounted: number[];
}

export function emptyEffects(): Effects {
  return { requests: [], timers: [], creates: [], followUps: [], fanInits: [], notes: [], treeCounted: [] };
}

/** The jobs a transition counted against its tree. */
export function treeCountOf(effects: Effects): number {
  return effects.treeCounted.at(-1) ?? 0;
}
