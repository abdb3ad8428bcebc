/**
 * Who sent a command: the root (`--token`, the stack's API key or IAM, or no credentials on an open
 * serve), a scoped token (its id and description), or a cron schedule. An entry without an actor was
 * the engine's own doing (a reply, a timer, a parent's or caller's follow-up).
 */
export type Actor =
  | { kind: 'root' }
  | { kind: 'token'; id: string; description?: string }
  | { kind: 'schedule'; name: string };

/** What a history entry tells. */
export const HISTORY_KINDS = [
  'job.created',
  'job.scheduled',
  'job.queued',
  'step.requested',
  'step.completed',
  'step.skipped',
  'step.attempt_failed',
  'step.timed_out',
  'step.retry_scheduled',
  'step.failed',
  'step.waiting',
  'step.suspended',
  'step.signalled',
  'signal.kept',
  'signal.delivered',
  'signal.dropped',
  'job.paused',
  'job.resumed',
  'job.retried',
  'job.rerun',
  'job.completed',
  'job.failed',
  'job.cancelled',
  'job.aborted',
] as const;
export type HistoryKind = (typeof HISTORY_KINDS)[number];

/** One thing that happened to a job. `seq` numbers a job's entries from 1, and never goes back. */
export interface HistoryEntry {
  seq: number;
  /** Milliseconds since the epoch. */
  at: number;
  kind: HistoryKind;
  step?: string;
  attempt?: number;
  /** An error, a retry's delay, a skip's reason (cut to `MAX_HISTORY_MESSAGE` characters). */
  message?: string;
  /** Who sent the command that did it (absent: the engine did it). */
  actor?: Actor;
  /** The worker whose reply did it (`x-worker`, AMQP `app_id`), when it named itself. */
  worker?: string;
}

/**
 * A job keeps its first entry (its creation, and who created it) and its latest
 * `MAX_HISTORY_ENTRIES - 1`: a job of 10,000 steps would otherwise carry a history larger than its
 * state in every write. The seq of the entries kept tells how many were left out between them.
 */
export const MAX_HISTORY_ENTRIES = 200;
export const MAX_HISTORY_MESSAGE = 300;
/** A worker's name is its own text: cut to this many characters. */
export const MAX_WORKER_NAME = 200;
