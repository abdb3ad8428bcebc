/**
 * Thrown by a handler to end the whole job now: the SDK answers `type: abort` with body
 * `{"reason": reason}`. The job ends as `aborted` whatever its retries, its other steps and
 * children are cancelled, and its workflow's `onFailure` runs.
 */
export class AbortJob extends Error {
  constructor(readonly reason: string) {
    super(reason);
    this.name = 'AbortJob';
  }
}

/**
 * Thrown by a handler when the step must wait for an outside event: the SDK answers
 * `type: suspend`. The step waits, with no timeout, until `POST /api/job/{id}/signal/{step}`; then
 * the request comes again, as a new attempt, with the signal's body under `signal` in its input.
 */
export class SuspendStep extends Error {
  constructor(readonly why = 'waiting for a signal') {
    super(why);
    this.name = 'SuspendStep';
  }
}
