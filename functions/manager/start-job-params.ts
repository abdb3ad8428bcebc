import type { Actor, CallLink, JsonObject, PendingSignal } from '../../engine/index.js';

/** What starting a job takes: the workflow (and version, vhost), its input, and an id if chosen. */
export interface StartJobParams {
  workflow: string;
  id?: string;
  input?: JsonObject;
  version?: number;
  vhost?: string;
  /** An `onFailure` job: the failed job that started it. */
  causedBy?: string;
  /** A job a `workflow:` step starts. */
  calledBy?: CallLink;
  /** A job a `workflow:` step starts: the root of its caller's tree, which it counts in. */
  treeRoot?: string;
  /** A job a `workflow:` step starts: the signals its caller kept for its steps (engine/job/call-path-signals.ts). */
  signals?: PendingSignal[];
  /** A delayed start (ms since the epoch): the job is `scheduled` until then. */
  startAt?: number;
  /**
   * A caller waits for the answer (the API): a first request over the size limit refuses the start
   * (`too_large`, 413) and nothing is stored, instead of a job whose first step fails.
   */
  refuseOversized?: boolean;
  /** Who starts it (a request's token or the root, a schedule): the job's history names them. */
  actor?: Actor;
}
