import { createHash } from 'node:crypto';
import { compileRegex } from '../expressions/regex.js';

/** What a step's retry policy may hold (workflows.md, "Retry policies"). */
export interface RetryPolicy {
  /** The first retry's delay. */
  delayMs?: number;
  /** Each next delay is the one before times this. @default 2 */
  backoffRate: number;
  /** No delay is longer than this. */
  maxDelayMs?: number;
  /** `full`: each delay is drawn between 0 and the computed one. @default none */
  jitter: 'full' | 'none';
  /** Which failures are retried; absent: every one (a timeout or an error). */
  retryOn?: readonly RetryCondition[];
}

export type RetryCondition = 'timeout' | 'error' | { errorMatches: string };

/** A delay no retry waits longer than, whatever the policy: a year. */
export const MAX_RETRY_DELAY_MS = 365 * 24 * 3_600_000;

/** What failed: an attempt that timed out, or an error (with its message). */
export interface AttemptFailure {
  timedOut: boolean;
  message: string;
}

/** Whether the policy retries this failure (`retryOn`: a timeout, any error, or an error whose text matches). */
export function retriesFailure(policy: RetryPolicy, failure: AttemptFailure): boolean {
  if (!policy.retryOn) return true;
  return policy.retryOn.some((condition) => {
    if (condition === 'timeout') return failure.timedOut;
    if (condition === 'error') return !failure.timedOut;
    if (failure.timedOut) return false;
    const compiled = compileRegex(condition.errorMatches);
    // Patterns are checked at validation: one RE2 refuses cannot reach here.
    return compiled.ok && compiled.regex.test(failure.message);
  });
}

/**
 * The delay before retry number `retriesUsed + 1`: `retryDelay × backoffRate^retriesUsed`, at most
 * `maxRetryDelay` (and a year); with full jitter, a point between 0 and that, drawn from the job, the
 * step and the attempt (so running the same transition again gives the same delay).
 */
export function retryDelayMs(policy: RetryPolicy, retriesUsed: number, draw: string): number {
  if (!policy.delayMs) return 0;
  const computed = policy.delayMs * policy.backoffRate ** retriesUsed;
  const capped = Math.min(
    Number.isFinite(computed) ? computed : MAX_RETRY_DELAY_MS,
    policy.maxDelayMs ?? MAX_RETRY_DELAY_MS,
    MAX_RETRY_DELAY_MS,
  );
  const delay = policy.jitter === 'full' ? capped * unitFraction(draw) : capped;
  return Math.round(delay);
}

/** A number in [0, 1) from the text, the same each time. */
function unitFraction(text: string): number {
  const hash = createHash('sha1').update(text).digest();
  return hash.readUInt32BE(0) / 2 ** 32;
}
