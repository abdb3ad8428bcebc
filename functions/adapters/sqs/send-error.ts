import { RetryableSendError, UndeliverableError } from '../../../engine/index.js';

/**
 * Rejection of `SqsBus.send` when some requests were not sent. The others of the call were sent: a
 * caller drops the undeliverable requests (failing their steps with the message) and keeps the
 * retryable ones in its outbox (the outbox pump sends only those again).
 */
export class SqsSendError extends AggregateError {
  declare readonly errors: (UndeliverableError | RetryableSendError)[];

  constructor(
    errors: readonly (UndeliverableError | RetryableSendError)[],
    readonly total: number,
  ) {
    super(errors, describe(errors, total));
    this.name = 'SqsSendError';
  }

  /** Requests SQS can never take (too large, invalid queue name, rejected as the sender's fault). */
  get undeliverable(): UndeliverableError[] {
    return this.errors.filter((error) => error instanceof UndeliverableError);
  }

  /** Correlation ids of the requests worth sending again later. */
  get retryable(): string[] {
    return this.errors
      .filter((error) => error instanceof RetryableSendError)
      .map((error) => error.correlationId);
  }
}

function describe(errors: readonly (UndeliverableError | RetryableSendError)[], total: number): string {
  const shown = errors.slice(0, 5).map((error) => {
    const kind = error instanceof UndeliverableError ? 'undeliverable' : 'retryable';
    return `${error.correlationId} (${kind}): ${error.message}`;
  });
  const more = errors.length > shown.length ? `; and ${errors.length - shown.length} more` : '';
  return `${errors.length} of ${total} requests were not sent to SQS: ${shown.join('; ')}${more}`;
}
