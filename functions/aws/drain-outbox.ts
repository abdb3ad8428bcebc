import type { Context } from 'aws-lambda';
import type { Manager } from '../manager/manager.js';
import type { Logger } from '../telemetry/telemetry.js';

/** Time kept back from the invocation's deadline for answering and writing metrics. */
export const DEADLINE_MARGIN_MS = 3_000;
/** Without a Lambda context (tests, scripts): how long draining may take. */
const DEFAULT_DRAIN_MS = 20_000;

/**
 * Sends what the invocation's transitions stored in the outbox before Lambda freezes the container.
 * Everything is already stored, so running out of time loses nothing: the entries stay in the store
 * and the timers function's sweep sends them a minute later (or this container, when it thaws).
 * @param maxMs waits at most this long, even when the invocation has more time
 * @returns false when the time ran out first
 */
export async function drainOutbox(
  manager: Manager,
  logger: Logger,
  context?: Context,
  maxMs = Number.POSITIVE_INFINITY,
): Promise<boolean> {
  const remaining = context
    ? Math.max(0, context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS)
    : DEFAULT_DRAIN_MS;
  const budget = Math.min(remaining, maxMs);
  let timer: NodeJS.Timeout | undefined;
  const timedOut = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), budget);
  });
  try {
    const drained = await Promise.race([manager.drain().then(() => true as const), timedOut]);
    if (!drained) {
      logger.warn('outbox not drained before the deadline; the sweep sends the rest', {
        pending: manager.outboxPending,
        durationMs: budget,
      });
    }
    return drained;
  } finally {
    clearTimeout(timer);
  }
}
