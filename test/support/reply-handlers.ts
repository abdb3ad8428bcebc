import type { InboundReply, ReplyHandler } from '../../engine/index.js';

/**
 * A reply handler for a test of an intake: hands `onReplies` the replies of each batch and settles
 * every one of them as done once it resolves (as retried, by the intake, when it throws).
 */
export function handlingReplies(onReplies: (replies: InboundReply[]) => Promise<void>): ReplyHandler {
  return async (deliveries) => {
    await onReplies(deliveries.map((delivery) => delivery.reply));
    return deliveries.map(() => ({ kind: 'done' }));
  };
}
