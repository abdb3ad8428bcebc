export interface WorkerErrorOptions {
  /**
   * `false`: the step must not be tried again (the input is bad, say). The error reply carries
   * `x-retryable: false` and the manager fails the step at once, whatever its `retries`.
   * @default true: the manager retries the step as its `retries` and `retryDelay` say
   */
  retryable?: boolean;
  cause?: unknown;
}

/**
 * Thrown by a handler to fail the attempt now: the SDK answers at once with an error reply
 * (`type: error`, body `{"error": message}`) and acknowledges the request, without handing it back
 * for another delivery. The manager then counts a failed attempt and retries the step as its
 * `retries` say; with `{ retryable: false }` it fails the step (and the job) at once instead.
 * Any other error is taken as transient: the request is handed back and delivered again, up to the
 * worker's `maxDeliveries`, and only then answered with an error reply.
 *
 * @example
 * ```ts
 * import { runWorker, WorkerError } from 'switchyard-worker';
 *
 * await runWorker<{ sku: string }>({
 *   queue: 'reserve-stock',
 *   handler: async ({ sku }) => {
 *     if (!/^[A-Z0-9-]+$/.test(sku)) throw new WorkerError(`no such SKU ${sku}`, { retryable: false }); // fails the step now
 *     if (await warehouseIsBusy()) throw new WorkerError('the warehouse is busy'); // the manager retries per `retries`
 *     return { reserved: sku };
 *   },
 * });
 * ```
 */
export class WorkerError extends Error {
  /** False when the step must not be retried (`x-retryable: false` on the error reply). */
  readonly retryable: boolean;

  constructor(message: string, options: WorkerErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'WorkerError';
    this.retryable = options.retryable ?? true;
  }
}
