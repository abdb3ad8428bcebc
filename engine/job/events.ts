import type { NotifyTarget } from '../definition/notify.js';
import type { JsonObject } from '../json.js';
import type { Actor } from './history-entry.js';
import type { RunningLimit } from './running-limit.js';
import type { TreeState } from './tree-quota.js';
import type { Timer } from './types.js';

/**
 * What can happen to a job. A command carries its `actor`, a worker's reply its `worker`: the job's
 * history names them (engine/job/history.ts). Each is applied by `applyEvent` to the job's current state. */
export type JobEvent =
  /** A waiting job (a new job, or a fan-out child whose turn came) starts its ready steps. */
  | { type: 'start' }
  /** A queued top-level job whose turn came takes a slot of its workflow's `maxRunning`, and starts. */
  | { type: 'promote' }
  /** A worker's reply; a success from any attempt completes the step. */
  | {
      type: 'reply';
      step: string;
      output: JsonObject;
      attempt?: number;
      /**
       * Only `attempt` may complete the step (a callback on that attempt's token): a reply of an
       * attempt that ended, or of one that failed and waits for its retry, is ignored. A worker's
       * reply without it completes the step whichever attempt sent it (the first result wins).
       */
      exactAttempt?: true;
      /** Who answered (`x-worker`, AMQP `app_id`), for the job's history. */
      worker?: string;
      /** Who sent it through `POST /api/callback/{token}`, for the job's history. */
      actor?: Actor;
    }
  /**
   * The attempt failed: an error reply, a malformed reply, or a request that was dead-lettered.
   * `retryable: false` (an error reply with `x-retryable: false`) fails the step at once, whatever its `retries`.
   */
  | {
      type: 'failure';
      step: string;
      message: string;
      attempt?: number;
      retryable?: false;
      /** The request was dead-lettered: the worker kept rejecting it. */
      rejected?: true;
      /** The worker that replied (`x-worker`, AMQP `app_id`), when it named itself. */
      worker?: string;
      /** Who sent it through `POST /api/callback/{token}`. */
      actor?: Actor;
    }
  /** The worker is still busy: the attempt's deadline moves to now + timeout. */
  | { type: 'heartbeat'; step: string; attempt?: number; actor?: Actor }
  /** A deadline came: an attempt's reply deadline, a retry delay, or the job's own timeout. */
  | { type: 'timer'; timer: Timer }
  /** `POST /api/job/{id}/signal/{step}`: `output` is the signal's body, laid over the step's input. */
  | { type: 'signal'; step: string; output: JsonObject; actor?: Actor }
  /** `POST /api/job/{id}/rerun`: an ended job runs again from `from` (engine/job/rerun.ts). */
  | { type: 'rerun'; from: string; input?: JsonObject; actor?: Actor }
  | { type: 'cancel'; actor?: Actor }
  /** `POST /api/job/{id}/pause`: nothing new is dispatched until `resume` (engine/job/pause.ts). */
  | { type: 'pause'; actor?: Actor }
  /** `POST /api/job/{id}/resume`: what became ready while paused is dispatched. */
  | { type: 'resume'; actor?: Actor }
  /**
   * A worker's `abort` reply (with the step and attempt it answers), or a fan-out child's abort
   * reaching its top-level job (without): the whole job ends as `aborted`.
   */
  | { type: 'abort'; reason: string; step?: string; attempt?: number; worker?: string }
  /**
   * A worker's `suspend` reply: the step waits, with no timeout, for a signal that sends it again.
   * `note`: what it waits for, in the worker's words (the reply's `reason`).
   */
  | { type: 'suspend'; step: string; attempt?: number; note?: string; worker?: string; actor?: Actor }
  /**
   * Run a failed or cancelled job again. `hold` leaves it waiting for a `start` (a fan-out child
   * whose turn has not come yet).
   */
  | { type: 'retry'; hold?: boolean; actor?: Actor }
  /** A child of a fan-out step failed (after its own retries). */
  | { type: 'childFailed'; step: string; index: number; childId: string; message: string }
  /** Every child of a fan-out step completed; `output` is what `gatherChildren` made of their results. */
  | { type: 'fanIn'; step: string; output: JsonObject }
  /** The job a `workflow:` step's attempt started ended (`result` when completed). */
  | {
      type: 'callFinished';
      step: string;
      attempt: number;
      childId: string;
      status: 'completed' | 'failed' | 'cancelled';
      result?: JsonObject;
      message?: string;
    }
  /** The next slice of a large fan-out's children, from child `from` on (a `createChildren` follow-up). */
  | { type: 'createChildren'; step: string; from: number };

/** What a transition needs from outside: the time, and ids that fan-out children must not take. */
export interface EngineContext {
  /** Milliseconds since the epoch. */
  now: number;
  /** Ids of existing jobs that fan-out children may not take (an element's `id` or a derived id). */
  takenIds?: ReadonlySet<string>;
  /** Random: a child whose derived id is in `takenIds` gets one derived with this instead. */
  childIdSeed?: string;
  /** The longest list a fan-out step accepts; a longer one fails the step. @default 100000 */
  maxFanOut?: number;
  /**
   * Children a fan-out creates in one transition; a longer list creates the rest in further
   * transitions of the parent, one slice each, so that no transition holds them all. @default 10000
   */
  fanOutSlice?: number;
  /**
   * The largest request a step may send, in bytes (the same limit as replies); an `input:` value is
   * copied out of CEL only up to it. @default 1 MiB
   */
  maxRequestBytes?: number;
  /**
   * What a request over `maxRequestBytes` does. `failStep`: the step that built it fails, naming
   * itself and the limit (a reply or a timer made it ready: its sender is not to blame). `refuse`:
   * the transition is refused whole with a `too_large` rejection and nothing changes, for a command
   * a user sent (start, signal, resume, retry), which the API answers with 413. @default 'failStep'
   */
  oversizedRequests?: 'failStep' | 'refuse';
  /**
   * The most bytes of input a fan-out step may hand its children, all together: a large input
   * copied to every child multiplies what is stored and sent. @default 256 MiB
   */
  maxFanOutBytes?: number;
  /**
   * The job's workflow's `maxRunning` and counters, read for a top-level job that may start (a new
   * job, `promote`, `retry`); absent: the workflow has no limit.
   */
  runningLimit?: RunningLimit;
  /** The most jobs a tree may hold under its root (tree-quota.ts). @default 1000000 */
  maxTreeJobs?: number;
  /**
   * The job's tree as last committed: read after a commit that grew it was refused. Absent (not
   * read): taken as empty and open, which the store's condition checks.
   */
  tree?: TreeState;
  /**
   * The host's webhook targets (`serve --notify-url`, deployed `NOTIFY_URL`) for workflows without a
   * `notify:` of their own (engine/job/notifications.ts).
   */
  defaultNotify?: readonly NotifyTarget[];
}

export const DEFAULT_MAX_FAN_OUT_BYTES = 256 * 1024 * 1024;

export const DEFAULT_MAX_FAN_OUT = 100_000;
export const DEFAULT_FAN_OUT_SLICE = 10_000;
