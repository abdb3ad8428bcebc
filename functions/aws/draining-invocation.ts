import type { Context } from 'aws-lambda';
import type { Manager } from '../manager/manager.js';
import { DEADLINE_MARGIN_MS, drainOutbox } from './drain-outbox.js';
import { invocation } from './invocation.js';
import type { LambdaTelemetry } from './lambda-telemetry.js';

/** What a handler that changes jobs is built from. */
export interface ManagerHandlerDeps {
  manager: Manager;
  telemetry: LambdaTelemetry;
}

/**
 * One invocation of a handler that changes jobs: `run`, then the requests its transitions stored are
 * sent (drainOutbox) before it answers, as Lambda freezes the container once it returns. When `run`
 * throws, the invocation fails at once: what it stored is sent by the sweep or the next invocation.
 * The manager is told the invocation's deadline first, so that a fan-out creates only the children
 * that fit before it, and leaves the rest to the next invocation (or the sweep).
 * @param drainMaxMs sends for at most this long, even when the invocation has more time
 */
export function drainingInvocation<T>(
  deps: ManagerHandlerDeps,
  context: Context | undefined,
  run: () => Promise<T>,
  drainMaxMs?: number,
): Promise<T> {
  return invocation(deps.telemetry, context, async () => {
    deps.manager.setDeadline(
      context ? Date.now() + context.getRemainingTimeInMillis() - DEADLINE_MARGIN_MS : undefined,
    );
    const result = await run();
    await drainOutbox(deps.manager, deps.telemetry.logger, context, drainMaxMs);
    return result;
  });
}
