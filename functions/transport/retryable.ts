/** The AMQP header (RabbitMQ, Amazon MQ) and SQS message attribute that marks an error reply not retryable. */
export const RETRYABLE_HEADER = 'x-retryable';

/**
 * `x-retryable` as protocol.md spells it: boolean `false` or `true`, or the text `false` or `true`
 * in any letter case, spaces around ignored (Python's `str(False)` is `False`). Anything else is
 * undefined: the error is retried as usual.
 */
export function readRetryable(value: unknown): boolean | undefined {
  if (typeof value === 'boolean') return value;
  if (typeof value !== 'string') return undefined;
  const text = value.trim().toLowerCase();
  return text === 'false' ? false : text === 'true' ? true : undefined;
}
