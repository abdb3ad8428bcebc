/**
 * Retrying DynamoDB calls that failed for reasons that pass (throttling, a transaction in the way, a
 * server error), with exponential backoff and full jitter, a bounded number of times. A failed
 * condition is never retried here: it is an answer (someone else wrote first), not a failure.
 */
import { StoreUnavailableError } from '../../../engine/index.js';

export interface RetryPolicy {
  /** Attempts in all, the first one included. @default 10 */
  maxAttempts: number;
  /** The first retry waits up to this long; each later one up to twice the one before. @default 25 */
  baseDelayMs: number;
  /** No single wait is longer. @default 5000 */
  maxDelayMs: number;
  /** @default setTimeout */
  sleep?: (ms: number) => Promise<void>;
  /** @default Math.random */
  random?: () => number;
}

/**
 * About 11 s of waiting at most (6 s on average) before giving up: long enough for an on-demand
 * table to grow past a burst (a fresh one takes about 4,000 writes a second at first).
 */
export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 10, baseDelayMs: 25, maxDelayMs: 5_000 };

/** Errors DynamoDB documents as safe to retry (the request did nothing, or did it idempotently). */
const RETRYABLE_NAMES = new Set([
  'ProvisionedThroughputExceededException',
  'ThrottlingException',
  'RequestLimitExceeded',
  'InternalServerError',
  'ServiceUnavailable',
  'TransactionConflictException',
  'TransactionInProgressException',
]);

/** Cancellation reasons of a transaction that another attempt may not meet. */
const RETRYABLE_REASONS = new Set([
  'None',
  'TransactionConflict',
  'ThrottlingError',
  'ProvisionedThroughputExceeded',
  'RequestLimitExceeded',
]);

export interface CancellationReasonLike {
  Code?: string | undefined;
}

export function errorName(error: unknown): string {
  return error instanceof Error ? error.name : typeof error;
}

export function cancellationReasons(error: unknown): CancellationReasonLike[] | undefined {
  if (errorName(error) !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: CancellationReasonLike[] }).CancellationReasons;
  return reasons ?? [];
}

export function isConditionFailure(error: unknown): boolean {
  if (errorName(error) === 'ConditionalCheckFailedException') return true;
  return cancellationReasons(error)?.some((reason) => reason.Code === 'ConditionalCheckFailed') ?? false;
}

/** Throttling, server errors, and transactions cancelled only by conflicts or throttling. */
export function isRetryable(error: unknown): boolean {
  if (RETRYABLE_NAMES.has(errorName(error))) return true;
  const reasons = cancellationReasons(error);
  return (
    reasons !== undefined &&
    reasons.length > 0 &&
    reasons.every((reason) => RETRYABLE_REASONS.has(reason.Code ?? 'None')) &&
    reasons.some((reason) => reason.Code !== 'None')
  );
}

/**
 * Thrown when a call kept failing with retryable errors: the last one is its `cause`. Only throttling
 * and server errors are retried, so this is the store being unavailable (the API answers 503).
 */
export class DynamoDbRetriesExhaustedError extends StoreUnavailableError {
  constructor(
    readonly operation: string,
    readonly attempts: number,
    cause: unknown,
  ) {
    const detail = cause instanceof Error ? `${cause.name}: ${cause.message}` : String(cause);
    super(`DynamoDB ${operation} still failed after ${attempts} attempts (${detail})`, { cause });
    this.name = 'DynamoDbRetriesExhaustedError';
  }
}

/** Full jitter: a random wait between 0 and min(max, base * 2^retry). */
export function backoffDelay(retry: number, policy: RetryPolicy): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  return Math.floor((policy.random ?? Math.random)() * ceiling);
}

const sleepFor = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Runs `operation`, retrying what `retryable` accepts; any other error is thrown at once. */
export async function withRetries<T>(
  operation: string,
  run: () => Promise<T>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
  retryable: (error: unknown) => boolean = isRetryable,
): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await run();
    } catch (error) {
      if (!retryable(error)) throw error;
      if (attempt >= policy.maxAttempts) throw new DynamoDbRetriesExhaustedError(operation, attempt, error);
      await (policy.sleep ?? sleepFor)(backoffDelay(attempt - 1, policy));
    }
  }
}

/**
 * Repeats `step` on what is left over (unprocessed items of a batch call) until nothing is, waiting
 * with backoff between rounds; throws when items are still left after the last attempt.
 */
export async function untilProcessed<T>(
  operation: string,
  items: readonly T[],
  step: (items: readonly T[]) => Promise<readonly T[]>,
  policy: RetryPolicy = DEFAULT_RETRY_POLICY,
): Promise<void> {
  let left = items;
  for (let attempt = 1; left.length; attempt++) {
    left = await withRetries(operation, () => step(left), policy);
    if (!left.length) return;
    if (attempt >= policy.maxAttempts) {
      throw new DynamoDbRetriesExhaustedError(
        operation,
        attempt,
        new Error(`${left.length} item(s) still unprocessed (throttled)`),
      );
    }
    await (policy.sleep ?? sleepFor)(backoffDelay(attempt - 1, policy));
  }
}
