import { UndeliverableError } from '../../../engine/ports/bus.js';

/**
 * The one rejection of a send made of several parts (vhosts, refused queues). A failure worth
 * retrying wins: the caller sends the whole batch again (at-least-once). Otherwise the parts that
 * settled went out, and the rejection lists every undeliverable request, as the outbox expects.
 */
export function throwSendOutcome(
  results: readonly PromiseSettledResult<unknown>[],
  undeliverable: readonly UndeliverableError[],
): void {
  const found = [...undeliverable];
  for (const result of results) {
    if (result.status === 'fulfilled') continue;
    const errors = result.reason instanceof AggregateError ? result.reason.errors : [result.reason];
    if (!errors.every((error) => error instanceof UndeliverableError)) throw result.reason;
    found.push(...errors);
  }
  if (found.length === 1) throw found[0];
  if (found.length > 1) throw new AggregateError(found, `${found.length} requests cannot be delivered`);
}
