/**
 * What a handler returns to answer with a control reply instead of a result: `abort()`, `suspend()`;
 * or `awaitCallback()`, to send no reply at all.
 */
export class ControlReply {
  private constructor(
    readonly type: 'abort' | 'suspend' | 'callback',
    readonly reason: string,
  ) {}

  /** @internal */
  static of(type: 'abort' | 'suspend' | 'callback', reason: string): ControlReply {
    return new ControlReply(type, reason);
  }
}

/**
 * Returned by a handler to end the whole job now (as throwing `AbortJob` does):
 *
 * ```ts
 * handler: async (input) => (ORDERS[input.orderId] ? { ...ORDERS[input.orderId] } : abort('no such order')),
 * ```
 */
export function abort(reason: string): ControlReply {
  return ControlReply.of('abort', reason);
}

/**
 * Returned by a handler when the step must wait for a signal (as throwing `SuspendStep` does); the
 * request comes again with the signal's body under `signal`:
 *
 * ```ts
 * handler: async (input) => (input.signal ? { approved: input.signal.approved } : suspend('waiting for approval')),
 * ```
 */
export function suspend(note = 'waiting for a signal'): ControlReply {
  return ControlReply.of('suspend', note);
}

/**
 * Returned by a handler that handed its attempt's callback token (`context.callbackToken`) to
 * another system, which answers the attempt with `POST /api/callback/{token}`: the SDK acknowledges
 * the request and sends no reply. The attempt goes on (its `timeout`, if any, runs) until that
 * callback comes:
 *
 * ```ts
 * handler: async (input, context) => {
 *   await partner.start({ order: input.orderId, callbackToken: context.callbackToken });
 *   return awaitCallback('waiting for the partner');
 * },
 * ```
 */
export function awaitCallback(note = 'waiting for a callback'): ControlReply {
  return ControlReply.of('callback', note);
}

/**
 * Thrown by a handler to end the whole job now: the SDK answers `type: abort` with body
 * `{"reason": reason}`. The job ends as `aborted` whatever its retries, its other steps and
 * children are cancelled, and its workflow's `onFailure` runs.
 *
 * @example
 * ```ts
 * import { AbortJob, runWorker } from 'switchyard-worker';
 *
 * await runWorker({
 *   queue: 'load-order',
 *   handler: async (input) => {
 *     const order = await findOrder(String(input.orderId));
 *     if (!order) throw new AbortJob(`there is no order ${input.orderId}`); // nothing downstream can help
 *     return order;
 *   },
 * });
 * ```
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
 *
 * @example
 * ```ts
 * import { runWorker, SuspendStep } from 'switchyard-worker';
 *
 * await runWorker({
 *   queue: 'approve-refund',
 *   handler: (input) => {
 *     // First time: wait for `switchyard signal JOB approve-refund --input '{"approved":true}'`.
 *     if (input.signal === undefined) throw new SuspendStep('waiting for a manager');
 *     return { approved: (input.signal as { approved?: boolean }).approved === true };
 *   },
 * });
 * ```
 */
export class SuspendStep extends Error {
  constructor(readonly why = 'waiting for a signal') {
    super(why);
    this.name = 'SuspendStep';
  }
}
