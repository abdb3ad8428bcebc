import {
  type AttemptOutcome,
  type FanCounts,
  isSettled,
  type JobReader,
  type JobRecord,
  type Json,
  type JsonObject,
  type ListedStatus,
  listedStatusOf,
  type StepState,
  signalWaits,
  splitQualifiedName,
} from '../../engine/index.js';

/** Child ids listed inline in a running fan-out step (`tasks`); page through the rest. */
export const INLINE_CHILDREN = 1_000;
/** A queued job's position is looked for among this many of its queue's first places. */
const QUEUE_POSITIONS = 1_000;

const iso = (ms: number | undefined): string | undefined =>
  ms === undefined ? undefined : new Date(ms).toISOString();
/** The original's `elapsed` is in nanoseconds (Go's time.Duration). */
const nanoseconds = (ms: number): number => Math.round(ms * 1_000_000);

/** One attempt of a step, as the job document lists it (api.md: the attempts list). */
export interface AttemptView {
  attempt: number;
  sentAt: string;
  /** Absent while the attempt is in flight. */
  endedAt?: string;
  outcome?: AttemptOutcome;
  error?: string;
  /** A `repeat:` iteration's output, when small. */
  output?: JsonObject;
}

export interface StepView {
  status: StepState['status'];
  /** The current (latest) attempt's number; 0 before the first. */
  attempt: number;
  /** Every attempt, oldest first: how each ended (the audit trail). */
  attempts: AttemptView[];
  startedAt?: string;
  endedAt?: string;
  retryAt?: string;
  deadline?: string;
  error?: string;
  /** What the step was sent, when `input:` or `params` made it differ from the merged input. */
  input?: JsonObject;
  /** Failed with `continueOnError`: its dependents went on with `{"error": …}`. */
  handled?: true;
  /** Why a skipped step did not run. */
  skipReason?: string;
  /** A suspended step: what it waits for, in its worker's words. */
  suspendNote?: string;
  /** A `sleep:` step asleep: when it wakes. */
  sleepingUntil?: string;
  /** A `repeat:` step: the iterations that ended so far. */
  iterations?: number;
  /** A `workflow:` step: the job its latest attempt runs. */
  job?: string;
  /** A running `workflow:` step: the status of the job it waits for (`paused`: someone must resume it). */
  calledStatus?: ListedStatus;
  children?: number;
  childrenDone?: number;
  childrenFailed?: number;
}

/**
 * A step that waits for someone: a signal step, a step its worker suspended (both unblocked by
 * `POST /api/job/{id}/signal/{step}`), or a `workflow:` step whose called job is paused (unblocked by
 * resuming that job). Derived from the steps each time: not a status of the job, which stays running.
 */
export interface WaitView {
  step: string;
  kind: 'signal' | 'suspended' | 'paused-call';
  since: string;
  /** A suspended step's note from its worker. */
  note?: string;
  /** `paused-call`: the paused job. */
  job?: string;
}

/** A signal the job keeps until its step waits for it (engine/job/early-signals.ts). */
export interface PendingSignalView {
  step: string;
  /** When it came. */
  at: string;
  body: JsonObject;
}

/** What a job is, over its steps, beside its status: what people look for in lists. */
interface DerivedFacts {
  /** When its first step was sent (the run's start: after a delayed start or a wait in the queue). */
  startedAt?: string;
  /** While paused: since when. */
  pausedAt?: string;
  /** Steps waiting for someone (absent when none). */
  waitingFor?: WaitView[];
  /** Attempts sent again after one failed, over all its steps (absent when none). */
  retries?: number;
}

/** The job document of api.md, in the original's shape plus the per-step view. */
export interface JobDocument extends DerivedFacts {
  uuid: string;
  /** The workflow's name in its namespace. */
  workflow: string;
  /** Its namespace (a server before namespaces sent none: `default`). */
  namespace?: string;
  version: number;
  parent: string | null;
  index: number | null;
  /** The task a fan-out child runs (null for a top-level job). */
  task: string | null;
  /** The listed status (engine/job/listed-status.ts): `waiting` for someone, `pending` not started. */
  status: ListedStatus;
  input: JsonObject;
  result?: JsonObject;
  error?: { step: string | null; attempt: number; message: string; at: string };
  createdAt: string;
  updatedAt: string;
  endedAt?: string;
  /** A queued job's place in its workflow's `maxRunning` queue (1 starts next); absent past the first 1,000. */
  queuePosition?: number;
  /** A delayed start (`?at=`): when the job starts (or started). */
  startAt?: string;
  /** The `onFailure` job this job's latest failure started. */
  followUp?: string;
  /** For an `onFailure` job: the failed job that started it. */
  causedBy?: string;
  /** For a job a `workflow:` step started: that job, step and attempt. */
  calledBy?: { id: string; step: string; attempt: number };
  /** Signals kept for steps that do not wait for them yet, oldest first (absent when none). */
  pendingSignals?: PendingSignalView[];
  steps: Record<string, StepView>;
  running: { name: string; startTime: string; attempt: number; tasks?: string[] }[];
  completed: { name: string; startTime: string; elapsed?: number; message: Json }[];
}

/** What the job document needs beside the job and the store. */
export interface DocumentContext {
  /** The job's `type: signal` steps (`signalStepsOf` its definition): those running wait for a signal. */
  signalSteps?: ReadonlySet<string>;
}

/**
 * Builds the job document: reads each running fan-out step's counters and first children, and the
 * job each running `workflow:` step waits for.
 */
export async function jobDocument(
  store: JobReader,
  job: JobRecord,
  context: DocumentContext = {},
): Promise<JobDocument> {
  const steps: Record<string, StepView> = {};
  const running: JobDocument['running'] = [];
  const called = await calledJobs(store, job);
  for (const state of job.steps) {
    const view: StepView = { status: state.status, attempt: state.attempts, attempts: attemptsOf(state) };
    assignDefined(view, {
      startedAt: iso(state.startedAt),
      endedAt: iso(state.endedAt),
      retryAt: iso(state.retryAt),
      deadline: iso(state.deadline),
      error: state.error,
      input: state.input,
      handled: state.handled,
      skipReason: state.skipReason,
      suspendNote: state.status === 'suspended' ? state.suspendNote : undefined,
      sleepingUntil: state.status === 'running' ? iso(state.sleepUntil) : undefined,
      iterations: state.iterations,
      job: state.job,
      calledStatus: calledStatusOf(state.job === undefined ? undefined : called.get(state.job)),
    });
    if (state.children) {
      const counts = await fanCounts(store, job, state);
      view.children = state.children.total;
      view.childrenDone = counts.done;
      if (counts.failed) view.childrenFailed = counts.failed;
    }
    steps[state.name] = view;
    if (state.status === 'running') {
      const entry: JobDocument['running'][number] = {
        name: state.name,
        startTime: iso(state.attemptStartedAt ?? state.startedAt ?? job.createdAt) as string,
        attempt: state.attempts,
      };
      if (state.children) {
        const page = await store.listChildren(job.id, state.name, { limit: INLINE_CHILDREN });
        entry.tasks = page.children.map((child) => child.id);
      }
      running.push(entry);
    }
  }

  const completed: JobDocument['completed'] = [
    { name: '__start__', startTime: iso(job.createdAt) as string, message: job.input },
  ];
  const done = job.steps
    .toArray()
    .filter((state) => state.status === 'completed')
    .sort((a, b) => (a.seq ?? 0) - (b.seq ?? 0));
  for (const state of done) {
    const started = state.attemptStartedAt ?? state.startedAt ?? job.createdAt;
    completed.push({
      name: state.name,
      startTime: iso(started) as string,
      elapsed: nanoseconds((state.endedAt ?? started) - started),
      message: state.output ?? {},
    });
  }
  if (job.status === 'completed') {
    completed.push({
      name: '__end__',
      startTime: iso(job.endedAt ?? job.updatedAt) as string,
      message: job.result ?? {},
    });
  }

  const document: JobDocument = {
    uuid: job.id,
    ...workflowShown(job.workflow),
    version: job.version,
    parent: job.parent?.id ?? null,
    index: job.parent?.index ?? null,
    task: job.task,
    status: listedStatusOf(job),
    input: job.input,
    createdAt: iso(job.createdAt) as string,
    updatedAt: iso(job.updatedAt) as string,
    steps,
    running,
    completed,
  };
  assignDefined(document, derivedFacts(job, called, context));
  assignDefined(document, {
    result: job.result,
    endedAt: iso(job.endedAt),
    startAt: iso(job.startAt),
    followUp: job.followUp,
    causedBy: job.causedBy,
    calledBy: job.calledBy && { id: job.calledBy.id, step: job.calledBy.step, attempt: job.calledBy.attempt },
    pendingSignals: job.pendingSignals?.length
      ? job.pendingSignals.map(({ step, at, body }) => ({ step, at: iso(at) as string, body }))
      : undefined,
  });
  if (job.error) document.error = { ...job.error, at: iso(job.error.at) as string };
  if (job.status === 'queued') {
    const place = (await store.listQueued(job.workflow, QUEUE_POSITIONS)).findIndex(
      (q) => q.jobId === job.id,
    );
    if (place >= 0) document.queuePosition = place + 1;
  }
  return document;
}

/**
 * The jobs the job's running `workflow:` steps wait for (one read each), by id: what a caller shows
 * of its call (a paused called job holds it up until someone resumes it).
 */
async function calledJobs(store: JobReader, job: JobRecord): Promise<Map<string, JobRecord>> {
  const ids = job.steps
    .toArray()
    .filter((state) => state.status === 'running' && state.job !== undefined)
    .map((state) => state.job as string);
  return ids.length ? store.getJobs(ids) : new Map();
}

function derivedFacts(
  job: JobRecord,
  called: ReadonlyMap<string, JobRecord>,
  context: DocumentContext,
): DerivedFacts {
  let started: number | undefined;
  let retries = 0;
  for (const state of job.steps) {
    if (state.startedAt !== undefined && (started === undefined || state.startedAt < started))
      started = state.startedAt;
    retries += retriesOf(state);
  }
  const waits: WaitView[] = signalWaits(job, context.signalSteps ?? new Set()).map((wait) => {
    const view: WaitView = { step: wait.step, kind: wait.kind, since: iso(wait.since) as string };
    if (wait.note !== undefined) view.note = wait.note;
    return view;
  });
  // A paused caller paused its calls itself: resuming it resumes them.
  if (job.status !== 'paused') {
    for (const state of job.steps) {
      const callee =
        state.status === 'running' && state.job !== undefined ? called.get(state.job) : undefined;
      if (callee?.status !== 'paused') continue;
      const since = iso(callee.pausedAt ?? callee.updatedAt) as string;
      waits.push({ step: state.name, kind: 'paused-call', since, job: callee.id });
    }
  }
  return {
    startedAt: iso(started),
    pausedAt: job.status === 'paused' ? iso(job.pausedAt ?? job.updatedAt) : undefined,
    waitingFor: waits.length ? waits : undefined,
    retries: retries || undefined,
  };
}

/** Attempts of the step that failed and were followed by another (its retries, and the job's). */
function retriesOf(state: StepState): number {
  let count = 0;
  for (const record of state.pastAttempts ?? []) {
    const failed =
      record.outcome === 'error' || record.outcome === 'timeout' || record.outcome === 'rejected';
    if (failed && record.attempt < state.attempts) count++;
  }
  return count;
}

/** The step's ended attempts, then its current one when no record describes it. */
function attemptsOf(state: StepState): AttemptView[] {
  const views: AttemptView[] = (state.pastAttempts ?? []).map((record) => {
    const view: AttemptView = {
      attempt: record.attempt,
      sentAt: iso(record.sentAt) as string,
      endedAt: iso(record.endedAt),
      outcome: record.outcome,
    };
    if (record.error !== undefined) view.error = record.error;
    if (record.output !== undefined) view.output = record.output;
    return view;
  });
  const recorded = views.at(-1)?.attempt ?? 0;
  if (state.attempts > recorded && state.attemptStartedAt !== undefined) {
    const current: AttemptView = { attempt: state.attempts, sentAt: iso(state.attemptStartedAt) as string };
    if (state.status === 'completed')
      assignDefined(current, { outcome: 'completed', endedAt: iso(state.endedAt) });
    else if (state.status === 'failed' || state.status === 'cancelled') {
      assignDefined(current, {
        outcome: state.status === 'failed' ? 'error' : 'cancelled',
        endedAt: iso(state.endedAt),
        error: state.error,
      });
    }
    views.push(current);
  }
  return views;
}

async function fanCounts(store: JobReader, job: JobRecord, state: StepState): Promise<FanCounts> {
  if (state.status === 'completed')
    return { total: state.children?.total ?? 0, done: state.children?.total ?? 0, failed: 0 };
  return (
    (await store.getFanCounts(job.id, state.name)) ?? {
      total: state.children?.total ?? 0,
      done: 0,
      failed: 0,
    }
  );
}

/**
 * The job's version as a weak entity tag (`ETag`): its revision and its fan-outs' finished children,
 * which count in their own counters without changing the job's revision. Two documents with the same
 * tag may still differ in what no reply changed (a child that started, say): hence weak.
 */
export async function jobVersion(store: JobReader, job: JobRecord): Promise<string> {
  let done = 0;
  let failed = 0;
  for (const state of job.steps) {
    if (!state.children) continue;
    const counts = await fanCounts(store, job, state);
    done += counts.done;
    failed += counts.failed;
  }
  // The jobs its running calls wait for: one paused or resumed changes what the document says.
  const calls = [...(await calledJobs(store, job)).values()].map((callee) => `.${callee.rev}`).join('');
  return `W/"${job.rev}.${done}.${failed}${calls}"`;
}

/** Progress for summaries and `watch`: steps and children done out of total. */
export interface Progress {
  steps: number;
  stepsDone: number;
  children: number;
  childrenDone: number;
}

async function jobProgress(store: JobReader, job: JobRecord): Promise<Progress> {
  const progress: Progress = { steps: job.steps.length, stepsDone: 0, children: 0, childrenDone: 0 };
  for (const state of job.steps) {
    // Done as far as the job goes: completed, skipped, or failed with continueOnError.
    if (isSettled(state)) progress.stepsDone++;
    if (state.children) {
      progress.children += state.children.total;
      progress.childrenDone += (await fanCounts(store, job, state)).done;
    }
  }
  return progress;
}

export interface JobSummary extends DerivedFacts {
  uuid: string;
  /** The workflow's name in its namespace. */
  workflow: string;
  /** Its namespace (a server before namespaces sent none: `default`). */
  namespace?: string;
  version: number;
  status: ListedStatus;
  createdAt: string;
  updatedAt: string;
  /** When it ended (completed, failed, cancelled or aborted). */
  endedAt?: string;
  /** A delayed start (`?at=`): when the job starts (or started). */
  startAt?: string;
  progress: Progress;
  /** A failed job's error: its step and message, the message cut to SUMMARY_ERROR_CHARS. */
  error?: { step: string | null; message: string };
}

/** A summary's error message is cut to this many characters: lists stay small; the job has it whole. */
export const SUMMARY_ERROR_CHARS = 300;

export async function jobSummary(
  store: JobReader,
  job: JobRecord,
  context: DocumentContext = {},
): Promise<JobSummary> {
  const summary: JobSummary = {
    uuid: job.id,
    ...workflowShown(job.workflow),
    version: job.version,
    status: listedStatusOf(job),
    createdAt: iso(job.createdAt) as string,
    updatedAt: iso(job.updatedAt) as string,
    progress: await jobProgress(store, job),
  };
  assignDefined(summary, { endedAt: iso(job.endedAt), startAt: iso(job.startAt) });
  assignDefined(summary, derivedFacts(job, await calledJobs(store, job), context));
  if (job.error) {
    const { message } = job.error;
    summary.error = {
      step: job.error.step,
      message:
        message.length > SUMMARY_ERROR_CHARS ? `${message.slice(0, SUMMARY_ERROR_CHARS - 1)}…` : message,
    };
  }
  return summary;
}

function assignDefined<T extends object>(target: T, values: Partial<T>): void {
  for (const [key, value] of Object.entries(values)) {
    if (value !== undefined) (target as Record<string, unknown>)[key] = value;
  }
}

/** A job's stored (qualified) workflow name as its namespace shows it: the plain name, and the namespace. */
function workflowShown(qualified: string): { workflow: string; namespace: string } {
  const { namespace, name } = splitQualifiedName(qualified);
  return { workflow: name, namespace };
}

function calledStatusOf(callee: JobRecord | undefined): ListedStatus | undefined {
  return callee === undefined ? undefined : listedStatusOf(callee);
}
