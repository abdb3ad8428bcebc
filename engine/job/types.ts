import type { SecretRef } from '../definition/secrets.js';
import type { JsonObject } from '../json.js';
import type { HistoryEntry, HistoryKind } from './history-entry.js';
import type { DependencyStatus } from './join.js';
import { PersistentList } from './persistent-list.js';

/**
 * `scheduled`: a delayed start (`?at=`) waiting for its time; a `start` timer starts it.
 * `paused`: nothing new is dispatched for the job (or its children) until it is resumed; replies to
 * requests already sent are still stored, and its timers still run (engine/job/pause.ts).
 * `queued`: a top-level job of a workflow with `maxRunning`, waiting for a slot (engine/job/running-limit.ts).
 */
export type JobStatus =
  | 'scheduled'
  | 'waiting'
  | 'queued'
  | 'running'
  | 'paused'
  | 'completed'
  | 'failed'
  | 'cancelled'
  | 'aborted';
/**
 * Every state a step can be in. `suspended`: its worker answered `suspend` and it waits, with no
 * timeout, for a signal (engine/job/control-replies.ts). A new state goes here: the dashboard's style
 * test reads this list, so a state without its colours fails it.
 */
export const STEP_STATUSES = [
  'waiting',
  'running',
  'suspended',
  'completed',
  'skipped',
  'failed',
  'cancelled',
] as const;
export type StepStatus = (typeof STEP_STATUSES)[number];

export const FINISHED_JOB_STATUSES: readonly JobStatus[] = ['completed', 'failed', 'cancelled', 'aborted'];
/** Jobs that have not ended (a scheduled, queued or paused job is one of them: it counts among active jobs everywhere). */
export const ACTIVE_JOB_STATUSES: readonly JobStatus[] = [
  'scheduled',
  'waiting',
  'queued',
  'running',
  'paused',
];
export const JOB_STATUSES: readonly JobStatus[] = [...ACTIVE_JOB_STATUSES, ...FINISHED_JOB_STATUSES];

export type FinishedJobStatus = 'completed' | 'failed' | 'cancelled' | 'aborted';

export function isFinished(status: JobStatus): status is FinishedJobStatus {
  return status === 'completed' || status === 'failed' || status === 'cancelled' || status === 'aborted';
}

/** A count of 0 for every job status: what a store's `countJobs` starts from. */
export function zeroJobCounts(): Record<JobStatus, number> {
  return Object.fromEntries(JOB_STATUSES.map((status) => [status, 0])) as Record<JobStatus, number>;
}

/** The state of one step of one job. Times are milliseconds since the epoch. */
export interface StepState {
  name: string;
  status: StepStatus;
  /** Attempts started so far, over every run of the job (also the `x-attempt` of the latest). */
  attempts: number;
  /** The attempt this run of the step began with; retries allowed count from here. */
  firstAttempt: number;
  startedAt?: number;
  /** When the current attempt was sent. */
  attemptStartedAt?: number;
  endedAt?: number;
  /** The current attempt's reply deadline (steps with a `timeout`). */
  deadline?: number;
  /** Set while a failed attempt waits for its retry. */
  retryAt?: number;
  output?: JsonObject;
  /**
   * What the step was given when `input:` or `params` made it differ from the merged input: the
   * request body a worker was sent. Fixed when the step starts, so that its retries send the same.
   */
  input?: JsonObject;
  /**
   * Set by a rerun with a new input (engine/job/rerun.ts): what the step is sent (or, a signal step,
   * starts from) when it is dispatched, in place of its merged input; then it becomes `input`.
   */
  rerunInput?: JsonObject;
  /** The last error of this step. */
  error?: string;
  /** A `continueOnError` step that failed: its `output` is `{"error": …}` and the job went on. */
  handled?: true;
  /** Why a `skipped` step was skipped. */
  skipReason?: string;
  /**
   * While `suspended`: the note its worker's `suspend` reply gave (what the step waits for), cut to
   * `MAX_SUSPEND_NOTE` characters. Cleared when a signal sends the step again.
   */
  suspendNote?: string;
  /** A `repeat:` step: the iterations that ended so far. */
  iterations?: number;
  /** A running `sleep:` step: when it wakes (ms since the epoch). */
  sleepUntil?: number;
  /** A `workflow:` step: the job its current attempt runs. */
  job?: string;
  /** Attempts that ended without completing the step, oldest first (at most 100 are kept). */
  pastAttempts?: AttemptRecord[];
  /**
   * Fan-out steps: how many children, and how many may run at once. `created`: while a large
   * fan-out's children are still being created, slice by slice, how many exist (absent once all do).
   */
  children?: { total: number; concurrency: number; created?: number };
  /** Completion order within the job (1, 2, …). */
  seq?: number;
  /**
   * Steps with several `depends`: how many of them have not completed. Absent until the first of
   * them completes (and in jobs stored before it existed): then counted from their states.
   */
  waitingOn?: number;
}

export interface ParentLink {
  id: string;
  step: string;
  index: number;
  /**
   * The fan-out started every child at once (no concurrency limit), so a child that completes
   * matters to its parent only as the last one to finish. Absent on children of limited fan-outs.
   */
  allAtOnce?: true;
}

/**
 * Whether `stored`, found under a created child's id, is another job rather than that same child
 * written again (same parent, step and index): then the create must not be dropped as done. Only
 * children are checked; the engine creates no top-level jobs.
 */
export function isOtherJob(
  stored: { parent: ParentLink | null },
  created: { parent: ParentLink | null },
): boolean {
  const want = created.parent;
  if (!want) return false;
  const have = stored.parent;
  return have?.id !== want.id || have.step !== want.step || have.index !== want.index;
}

/**
 * Of the children a commit creates, the ids a stored job holds that is not that same child:
 * `storedOf` reads the stored job (its parent link is enough) by id, undefined where there is none.
 */
export function heldByOtherJobs(
  creates: readonly { id: string; parent: ParentLink | null }[],
  storedOf: (id: string) => { parent: ParentLink | null } | undefined,
): string[] {
  const held: string[] = [];
  for (const child of creates) {
    const stored = storedOf(child.id);
    if (stored !== undefined && isOtherJob(stored, child)) held.push(child.id);
  }
  return held;
}

/** How an attempt ended. `completed` is never recorded: the step's own fields say it. */
export type AttemptOutcome =
  | 'completed'
  | 'error'
  | 'timeout'
  | 'rejected'
  | 'cancelled'
  | 'suspended'
  /** An iteration of a `repeat:` step whose `until` did not hold: the step ran again. */
  | 'repeated';

/** One ended attempt of a step (times in ms since the epoch). */
export interface AttemptRecord {
  attempt: number;
  sentAt: number;
  endedAt: number;
  outcome: AttemptOutcome;
  error?: string;
  /** A `repeated` iteration's output, when small (engine/job/repeat.ts). */
  output?: JsonObject;
}

/** The `workflow:` step that started a job, and the workflows of the calls that led to it. */
export interface CallLink {
  id: string;
  step: string;
  attempt: number;
  /** The workflows from the top-level job down to the caller: its length is the job's depth. */
  chain: string[];
}

export interface JobError {
  /** The step that failed, or null when the job as a whole timed out. */
  step: string | null;
  attempt: number;
  message: string;
  at: number;
}

/** A signal kept for a step that did not wait for it yet. */
export interface PendingSignal {
  step: string;
  body: JsonObject;
  /** When it came (ms since the epoch). */
  at: number;
  /** Its body's size as JSON: what counts against the job's limit. */
  bytes: number;
}

/** One job: a top-level job, or a fan-out child (a job of its own running a task's steps). */
export interface JobRecord {
  id: string;
  workflow: string;
  version: number;
  /** The task a child runs; null for a top-level job. */
  task: string | null;
  parent: ParentLink | null;
  /** The top-level job this job belongs to (itself for a top-level job). */
  root: string;
  /**
   * The root of the tree this job counts in, when it is not `root`: set on a job a `workflow:` step
   * called, and on its descendants (engine/job/tree-quota.ts).
   */
  treeRoot?: string;
  vhost: string | null;
  status: JobStatus;
  input: JsonObject;
  result?: JsonObject;
  error?: JobError;
  createdAt: number;
  updatedAt: number;
  endedAt?: number;
  /** Whole-job deadline (workflow `timeout`). */
  deadline?: number;
  /** A delayed start (`?at=`): when the `scheduled` job starts. */
  startAt?: number;
  /** While `paused`: when it was paused (the job's own pause, or its caller's or parent's). */
  pausedAt?: number;
  /** A fan-out child whose task's expressions read `parent`: its parent job's input. */
  parentInput?: JsonObject;
  /** How many times the job failed (times out and aborts included): numbers `onFailure` jobs. */
  failures?: number;
  /** The `onFailure` job the latest failure started. */
  followUp?: string;
  /** This is an `onFailure` job: the job whose failure started it. */
  causedBy?: string;
  /** A job a `workflow:` step started: that step's job and attempt. */
  calledBy?: CallLink;
  /** The job holds one of its workflow's `maxRunning` slots (given back when it ends). */
  holdsSlot?: true;
  /**
   * A step waits for someone (a signal step for its signal, or a suspended step): kept by the
   * engine after each transition (listed-status.ts), so that stores can list the job as `waiting`
   * without its definition.
   */
  waitsForSomeone?: true;
  /**
   * The workflow's `searchAttributes:` evaluated over the input at the start of a top-level job
   * (those that gave no value are left out): stores index them for `GET /api/jobs?attr.NAME=`.
   */
  attributes?: Record<string, string>;
  /** While `queued`: its place in its workflow's queue (places only grow; lower goes first). */
  queueSeq?: number;
  /**
   * Signals that came before their step waited for them, oldest first, at most one per step
   * (engine/job/early-signals.ts): each is handed to its step when the step waits, or dropped when
   * the step ends without waiting or the job ends. Absent when there are none.
   */
  pendingSignals?: PendingSignal[];
  /**
   * The format the record is stored in (`JOB_FORMAT_VERSION` when written by this code); absent in
   * records written before formats were numbered, which are format 1. `jobFromJson` migrates.
   */
  formatVersion?: number;
  /**
   * What happened to the job, oldest first, and who did it (engine/job/history.ts): its first entry
   * and its latest, at most `MAX_HISTORY_ENTRIES` in all. Absent in jobs stored before it existed.
   */
  history?: HistoryEntry[];
  /** Incremented by every change: stores write conditionally on it. */
  rev: number;
  /** Completion counter that numbers steps as they complete. */
  seq: number;
  /**
   * One per step, in the order the workflow (or task) declares them. Persistent, so that a
   * transition shares the states it leaves alone; stored as a JSON array (`JobJson`).
   */
  steps: PersistentList<StepState>;
}

/** A job as JSON stores it: the record with its steps as an array (JSON.stringify of a record). */
export type JobJson = Omit<JobRecord, 'steps'> & { steps: StepState[] };

/**
 * The format of the job records this code writes. A change to the stored JSON that older code would
 * misread raises it and adds the step from the previous format to `MIGRATIONS`: while a deploy runs
 * old and new code side by side, each reads what the other wrote (old code refuses a newer record,
 * and the message that brought it is retried until new code takes it).
 */
export const JOB_FORMAT_VERSION = 1;

/** Format `n` to `n + 1`, by `n` (none yet: format 1 is the first). */
const MIGRATIONS: Record<number, (job: JobJson) => JobJson> = {};

/** A stored job written in a format this code does not know (by newer code). */
export class JobFormatError extends Error {
  constructor(
    readonly jobId: string,
    readonly formatVersion: number,
  ) {
    super(
      `job ${jobId} is stored in format ${formatVersion}, newer than this code's ${JOB_FORMAT_VERSION}: ` +
        'it was written by a newer Switchyard (a deploy in progress); retry once the deploy is done',
    );
    this.name = 'JobFormatError';
  }
}

/**
 * A stored job back as a record, migrated to `JOB_FORMAT_VERSION` (a record without a format is
 * format 1, as every record before formats were numbered, and is read as it is), then its step
 * list built. `stored` (just parsed) becomes the record. A record of a newer format throws
 * `JobFormatError`.
 */
export function jobFromJson(stored: JobJson): JobRecord {
  let json = stored;
  let format = stored.formatVersion ?? 1;
  if (format > JOB_FORMAT_VERSION) throw new JobFormatError(stored.id, format);
  for (; format < JOB_FORMAT_VERSION; format++) {
    const migrate = MIGRATIONS[format];
    if (!migrate) throw new Error(`no migration of job records from format ${format}`);
    json = { ...migrate(json), formatVersion: format + 1 };
  }
  const job = json as unknown as JobRecord;
  job.steps = PersistentList.taking(json.steps);
  return job;
}

/**
 * A step that let its dependents go on: completed, skipped, or failed with `continueOnError`
 * (then its output is `{"error": …}`).
 */
export function isSettled(state: StepState | undefined): boolean {
  if (state === undefined) return false;
  return state.status === 'completed' || state.status === 'skipped' || state.handled === true;
}

/** A dependency's status as a join sees it (join.ts): a handled failure is `failed`, settled. */
export function dependencyStatus(state: StepState | undefined): DependencyStatus {
  if (state === undefined) return 'pending';
  if (state.status === 'completed' || state.status === 'skipped') return state.status;
  return state.handled === true ? 'failed' : 'pending';
}

/** A step's state by name (a linear search: for code outside the engine's hot path). */
export function findStep(job: JobRecord, name: string): StepState | undefined {
  return job.steps.find((step) => step.name === name);
}

/** A request for a worker: a step's input sent to its queue. */
export interface StepRequest {
  jobId: string;
  step: string;
  queue: string;
  vhost: string | null;
  /** `<job uuid>:<step name>` */
  correlationId: string;
  attempt: number;
  body: JsonObject;
  /**
   * The attempt's reply deadline, for a step with a `timeout`: the request is of no use after it (the
   * step has failed or moved on to a new attempt), so a bus may let it expire then.
   */
  deadline?: number;
  /**
   * The secrets its step's `params` name: `body` holds each as `{ secret: NAME }`, replaced by its
   * value only as the request is sent (functions/manager/secret-bus.ts), so no store keeps it.
   */
  secrets?: readonly SecretRef[];
}

/** `start`: a scheduled job's start time (its step is null, as for the job's own deadline). */
export type TimerKind = 'attempt' | 'retry' | 'job' | 'start';

/** A deadline: one per job step (reply deadline or retry delay) and one per job (its timeout). */
export interface Timer {
  jobId: string;
  /** null for the job's own deadline. */
  step: string | null;
  kind: TimerKind;
  attempt: number;
  at: number;
}

export interface TimerKey {
  jobId: string;
  step: string | null;
}

export type TimerChange = { op: 'set'; timer: Timer } | { op: 'clear'; key: TimerKey };

export function timerId(key: TimerKey): string {
  return `${key.jobId}:${key.step ?? ''}`;
}

/** What each delivery posts (docs/notifications.md documents it field by field). */
export interface NotificationBody {
  /** The delivery's id, also in the `Switchyard-Delivery` header: receivers dedupe on it. */
  id: string;
  type: HistoryKind;
  /** When it happened, ISO 8601. */
  time: string;
  namespace: string;
  jobId: string;
  /** The workflow's name within its namespace. */
  workflow: string;
  version: number;
  /** The job's status after the transition that caused the event. */
  status: JobStatus;
  step?: string;
  attempt?: number;
  /** The history entry's message: an error, a retry's delay, a reason. */
  message?: string;
  /** job.completed: the job's result, when it is at most `MAX_NOTIFIED_RESULT_BYTES` (notifications.ts) of JSON. */
  result?: JsonObject;
  /** job.completed with a larger result: read it from `GET /api/job/{id}`. */
  resultOmitted?: true;
  /** job.failed, job.aborted: the job's error. */
  error?: { step: string | null; message: string };
}

/** One webhook call to make: recorded with the transition, delivered by the hosts' delivery pump. */
export interface NewDelivery {
  id: string;
  jobId: string;
  namespace: string;
  url: string;
  /** The name of the secret that signs it (never its value). */
  secret: string;
  body: NotificationBody;
}

/** Work the manager does after a transition is stored; stored with it so that a crash cannot lose it. */
export type FollowUp =
  /** A child reached completed or failed: count it, fan in, fail the step, or start the next child. */
  | {
      kind: 'childFinished';
      parentId: string;
      step: string;
      index: number;
      status: 'completed' | 'failed';
      /**
       * Only the child that finishes its fan-out needs this follow-up: a store that counts the child
       * in the same write may leave it out when the counters show others still running.
       */
      onlyIfLast?: true;
    }
  /** Cancel the children of a fan-out step that stopped (cancelled job, failed job). */
  | { kind: 'cancelChildren'; jobId: string; step: string }
  /** A paused job's running fan-out step: pause its running children (and theirs, in turn). */
  | { kind: 'pauseChildren'; jobId: string; step: string }
  /**
   * A resumed job's running fan-out step: resume its paused children, and start the children whose
   * turn came while it was paused.
   */
  | { kind: 'unpauseChildren'; jobId: string; step: string }
  /** A retried fan-out step: rerun its unfinished children, keep the completed ones. */
  | { kind: 'resumeChildren'; jobId: string; step: string }
  /** A large fan-out creates its children slice by slice: the next slice starts at child `from`. */
  | { kind: 'createChildren'; jobId: string; step: string; from: number }
  /**
   * Children of a later slice that would finish as they start (a nested fan-out over an empty
   * list) were created waiting: start them, so that each is counted by its own write.
   */
  | { kind: 'startChildren'; jobId: string; step: string; ids: string[] }
  /**
   * Start a top-level job of another workflow (an `onFailure` job), with a derived id: a start
   * carried out twice finds the job it started.
   */
  | {
      kind: 'startJob';
      jobId: string;
      workflow: string;
      version?: number;
      id: string;
      input: JsonObject;
      causedBy?: string;
      calledBy?: CallLink;
      /** A called job: the root of its caller's tree, which it counts in (tree-quota.ts). */
      treeRoot?: string;
      /** A called job: the signals its caller kept for it (call-path-signals.ts), which it keeps in turn. */
      signals?: PendingSignal[];
    }
  /** A job a `workflow:` step started ended: its caller's step completes or fails with it. */
  | { kind: 'callFinished'; jobId: string; callerId: string; step: string; attempt: number }
  /** Cancel a job (a called job whose step stopped). */
  | { kind: 'cancelJob'; jobId: string }
  /** Record webhook deliveries in the delivery log (engine/job/notifications.ts); the hosts post them. */
  | { kind: 'notify'; jobId: string; deliveries: NewDelivery[] }
  /** Pause or resume a job (a called job whose caller was paused or resumed). */
  | { kind: 'pauseJob'; jobId: string }
  | { kind: 'resumeJob'; jobId: string }
  /**
   * A job of `workflow` gave its `maxRunning` slot back: start the queued jobs whose turn came
   * (engine/job/running-limit.ts).
   */
  | { kind: 'promoteQueued'; jobId: string; workflow: string }
  /** A worker of a fan-out child aborted: the whole job (its root) ends as aborted. */
  | { kind: 'abortJob'; jobId: string; root: string; reason: string };

/** Fan-out counters a store keeps beside the parent job (O(1) writes per child). */
export interface FanCounts {
  total: number;
  done: number;
  failed: number;
}

export function correlationIdOf(jobId: string, step: string): string {
  return `${jobId}:${step}`;
}

/** Splits `<job uuid>:<step>`; undefined when it is not of that form. */
export function parseCorrelationId(correlationId: string): { jobId: string; step: string } | undefined {
  const colon = correlationId.indexOf(':');
  if (colon <= 0) return undefined;
  const jobId = correlationId.slice(0, colon).toLowerCase();
  const step = correlationId.slice(colon + 1);
  if (!isUuid(jobId) || step === '') return undefined;
  return { jobId, step };
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID.test(value);
}
