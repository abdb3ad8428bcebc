import type { JobEvent } from './events.js';
import {
  type Actor,
  type HistoryEntry,
  type HistoryKind,
  MAX_HISTORY_ENTRIES,
  MAX_HISTORY_MESSAGE,
  MAX_WORKER_NAME,
} from './history-entry.js';
import type { TransitionNote } from './transition.js';
import type { JobRecord } from './types.js';

export * from './history-entry.js';

/** What a transition's event tells its history beyond its notes: who sent it, which worker replied. */
export interface HistoryCause {
  /** The job is being created (by `actor`, when a command did it). */
  creating: boolean;
  event?: JobEvent;
  actor?: Actor;
}

const NOTE_KINDS: Record<TransitionNote['kind'], HistoryKind> = {
  dispatched: 'step.requested',
  stepCompleted: 'step.completed',
  stepSkipped: 'step.skipped',
  attemptFailed: 'step.attempt_failed',
  retryScheduled: 'step.retry_scheduled',
  timedOut: 'step.timed_out',
  stepFailed: 'step.failed',
  jobCompleted: 'job.completed',
  jobFailed: 'job.failed',
  jobCancelled: 'job.cancelled',
  jobAborted: 'job.aborted',
  stepSuspended: 'step.suspended',
  awaitingSignal: 'step.waiting',
  signalBuffered: 'signal.kept',
  signalDelivered: 'signal.delivered',
  signalDropped: 'signal.dropped',
  jobPaused: 'job.paused',
  jobResumed: 'job.resumed',
  jobQueued: 'job.queued',
};

/** Entries a worker's reply to `step` is named in. */
const WORKER_KINDS: ReadonlySet<HistoryKind> = new Set([
  'step.completed',
  'step.attempt_failed',
  'step.failed',
  'step.suspended',
  'job.aborted',
]);

/** Entries a command's actor is named in (the command's own effect on its job). */
const COMMAND_KINDS: ReadonlySet<HistoryKind> = new Set([
  'job.created',
  'job.cancelled',
  'job.paused',
  'job.resumed',
  'job.retried',
  'job.rerun',
  'step.signalled',
]);

/** The history entries a transition adds to `job`: the command itself, then what the notes tell. */
export function historyEntriesOf(
  job: Pick<JobRecord, 'id' | 'status'>,
  notes: readonly TransitionNote[],
  cause: HistoryCause,
  at: number,
): Omit<HistoryEntry, 'seq'>[] {
  const entries: Omit<HistoryEntry, 'seq'>[] = [];
  const event = cause.event;
  if (cause.creating) entries.push({ at, kind: 'job.created' });
  if (job.status === 'scheduled' && cause.creating) entries.push({ at, kind: 'job.scheduled' });
  if (event?.type === 'signal') entries.push({ at, kind: 'step.signalled', step: event.step });
  if (event?.type === 'retry') entries.push({ at, kind: 'job.retried' });
  if (event?.type === 'rerun') entries.push({ at, kind: 'job.rerun', step: event.from });
  for (const note of notes) {
    if (note.jobId !== job.id) continue;
    const entry: Omit<HistoryEntry, 'seq'> = { at, kind: NOTE_KINDS[note.kind] };
    if (note.step !== undefined) entry.step = note.step;
    if (note.attempt !== undefined) entry.attempt = note.attempt;
    if (note.message !== undefined) entry.message = note.message.slice(0, MAX_HISTORY_MESSAGE);
    entries.push(entry);
  }
  const worker = event && 'worker' in event ? event.worker : undefined;
  const repliedStep = event && 'step' in event ? event.step : undefined;
  for (const entry of entries) {
    if (cause.actor && COMMAND_KINDS.has(entry.kind)) entry.actor = cause.actor;
    const answers = WORKER_KINDS.has(entry.kind) && (entry.step ?? repliedStep) === repliedStep;
    if (worker !== undefined && answers) entry.worker = worker;
    // A callback (POST /api/callback/{token}) answers as the worker would, sent by its caller.
    if (cause.actor && answers && event?.type !== 'signal') entry.actor = cause.actor;
  }
  return entries;
}

/** A transition's notes by the job they concern, each job's in their order. */
export function notesByJob(notes: readonly TransitionNote[]): Map<string, TransitionNote[]> {
  const byJob = new Map<string, TransitionNote[]>();
  for (const note of notes) {
    const list = byJob.get(note.jobId);
    if (list) list.push(note);
    else byJob.set(note.jobId, [note]);
  }
  return byJob;
}

/**
 * `history` with `entries` appended and numbered, kept within `MAX_HISTORY_ENTRIES` (a new array;
 * `entries`, fresh from `historyEntriesOf`, are numbered in place: a fan-out's slice numbers
 * thousands of children's at once).
 */
export function appendHistory(
  history: readonly HistoryEntry[] | undefined,
  entries: readonly Omit<HistoryEntry, 'seq'>[],
): HistoryEntry[] {
  let seq = history?.at(-1)?.seq ?? 0;
  for (const entry of entries) (entry as HistoryEntry).seq = ++seq;
  const added = entries as HistoryEntry[];
  const length = (history?.length ?? 0) + added.length;
  // One native copy per transition (the history is at most MAX_HISTORY_ENTRIES long).
  if (length <= MAX_HISTORY_ENTRIES) return history ? history.concat(added) : added.slice();
  // Full (every transition of a long job): the first entry and the latest, copied once.
  const all = history ?? [];
  const kept = new Array<HistoryEntry>(MAX_HISTORY_ENTRIES);
  kept[0] = (all[0] ?? added[0]) as HistoryEntry;
  const skip = length - MAX_HISTORY_ENTRIES + 1;
  let at = 1;
  for (let n = skip; n < all.length; n++) kept[at++] = all[n] as HistoryEntry;
  for (let n = Math.max(0, skip - all.length); n < added.length; n++) kept[at++] = added[n] as HistoryEntry;
  return kept;
}

/** A worker's name as the history keeps it: trimmed and cut, or undefined when empty. */
export function workerName(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const name = value.trim().slice(0, MAX_WORKER_NAME);
  return name === '' ? undefined : name;
}

/** The page of a job's history after entry `after` (a seq; 0 for the start), up to `limit` entries. */
export function historyPage(
  history: readonly HistoryEntry[] | undefined,
  after: number,
  limit: number,
): { entries: HistoryEntry[]; next?: number; dropped: number } {
  const all = history ?? [];
  const last = all.at(-1)?.seq ?? 0;
  const dropped = last - all.length;
  const start = all.findIndex((entry) => entry.seq > after);
  const entries = start < 0 ? [] : all.slice(start, start + limit);
  const lastShown = entries.at(-1)?.seq;
  return lastShown !== undefined && lastShown < last
    ? { entries, next: lastShown, dropped }
    : { entries, dropped };
}
