import { randomUUID } from 'node:crypto';
import type { Context } from 'aws-lambda';
import {
  DEFAULT_REPLY_QUEUE,
  type RepliesInHand,
  type ReplyDelivery,
  type ReplyOutcome,
} from '../../engine/index.js';
import {
  type AmazonMqRabbitEvent,
  type AmazonMqRabbitMessage,
  amazonMqReply,
} from '../aws/amazon-mq-event.js';
import { drainingInvocation, type ManagerHandlerDeps } from '../aws/draining-invocation.js';
import { fromEnvironment } from '../aws/from-env.js';
import {
  AmqpReplyParking,
  PARKED_REASON_HEADER,
  parkedQueueOf,
  type ReplyParking,
} from '../aws/mq-reply-queues.js';
import { brokerUrlOf, rabbitMqBusFactory } from '../aws/rabbitmq-bus-factory.js';
import { HandBackTries, ReplyPolicy, wholeBatchVerdict } from '../manager/reply-policy.js';

export type RepliesMqHandler = (event: AmazonMqRabbitEvent, context?: Context) => Promise<void>;

export interface RepliesMqDeps extends ManagerHandlerDeps {
  /** The store, for its journal of replies in hand. */
  store: RepliesInHand;
  /** Where replies that cannot be handled go (the parked and poison queues); without it they are handed back. */
  parking?: ReplyParking;
  /** The reply queue's name, to tell the parked queue's events from the reply queue's. */
  replyQueue?: string;
  /** @default Date.now */
  clock?: () => number;
  /** This container's name in the journal. @default a random UUID */
  holder?: string;
}

/**
 * Workers' replies on Amazon MQ for RabbitMQ, settled as the poison-reply policy says
 * (functions/manager/reply-policy.ts). Lambda runs one invocation at a time per event source mapping
 * and has no partial batch response: a thrown error sends the whole batch back, ahead of every reply
 * behind it. So a reply must never make the handler throw for ever:
 *
 * - Replies go to the manager in one call, and one by one when that fails; redelivered ones (handed
 *   back, or in hand when an invocation crashed or timed out) are noted in the journal first, and
 *   those an invocation died with go alone.
 *   The manager records a reply it cannot store as a failed attempt, and drops a malformed one.
 * - A reply that still fails while others of the batch succeed is parked (published to
 *   `<reply queue>.parked`, confirmed) and the batch acknowledged: the store works, the reply is the
 *   problem. When all fail (the store may be down) the batch is handed back (thrown), until each reply
 *   has failed `MAX_UNSTORABLE_TRIES` times over `MIN_HAND_BACK_MS` in this container, when it is
 *   parked too. The reply queue is a quorum queue with a delivery limit: the broker parks a reply
 *   handed back more often than that on its own (mq-reply-queues.ts).
 * - A poisoned reply (in hand at too many crashes: its attempt failed) is moved to
 *   `<reply queue>.poisoned`, where it stays.
 *
 * The parked queue has a mapping of its own to this handler: each parked reply is applied once more
 * (an outage may be over), and if that fails its attempt fails (`Manager.deadLettered`, as the SQS
 * dead-letter queue's requests do). One that cannot be recorded either is logged and dropped when
 * others could be, or after the same bounded tries.
 */
export function createRepliesMqHandler(deps: RepliesMqDeps): RepliesMqHandler {
  const { telemetry } = deps;
  const { logger } = telemetry;
  const clock = deps.clock ?? Date.now;
  const tries = new HandBackTries(clock);
  const parkedQueue = parkedQueueOf(deps.replyQueue ?? DEFAULT_REPLY_QUEUE);
  const policy = new ReplyPolicy({
    manager: deps.manager,
    journal: deps.store,
    holder: deps.holder ?? randomUUID(),
    logger,
    metrics: telemetry.metrics,
    clock,
  });

  /** Hands the batch back (throws) or lets its failed replies go, as `wholeBatchVerdict` says. */
  const settle = async (
    messages: readonly AmazonMqRabbitMessage[],
    deliveries: readonly ReplyDelivery[],
    outcomes: readonly ReplyOutcome[],
    letGo: (failed: readonly { message: AmazonMqRabbitMessage; error: unknown }[]) => Promise<void>,
  ): Promise<void> => {
    const failed = outcomes.flatMap((outcome, index) =>
      outcome.kind === 'retry'
        ? [{ message: messages[index] as AmazonMqRabbitMessage, error: outcome.error }]
        : [],
    );
    const verdict = wholeBatchVerdict(deliveries, outcomes, tries);
    if (verdict === 'handBack') {
      logger.error('no reply of the batch could be handled; the broker delivers it again', {
        size: messages.length,
        error: failed[0]?.error,
      });
      throw failed[0]?.error;
    }
    if (verdict === 'letGo') await letGo(failed);
  };

  /** Moves the poisoned replies to the poison queue (parked without one); throws when that fails. */
  const movePoisoned = async (
    messages: readonly AmazonMqRabbitMessage[],
    outcomes: readonly ReplyOutcome[],
  ): Promise<void> => {
    const poisoned = outcomes.flatMap((outcome, index) =>
      outcome.kind === 'poisoned'
        ? [{ message: messages[index] as AmazonMqRabbitMessage, reason: outcome.reason }]
        : [],
    );
    if (poisoned.length === 0) return;
    if (!deps.parking) throw new Error('poisoned replies, and nowhere to move them');
    if (deps.parking.poison) await deps.parking.poison(poisoned);
    else
      await deps.parking.park(
        poisoned.map((item) => item.message),
        poisoned[0]?.reason ?? '',
      );
  };

  const applyReplies = async (messages: readonly AmazonMqRabbitMessage[]): Promise<void> => {
    const deliveries = messages.map((message) => ({
      reply: amazonMqReply(message),
      redelivered: message.redelivered === true,
    }));
    const outcomes = await policy.handle(deliveries);
    await movePoisoned(messages, outcomes);
    await settle(messages, deliveries, outcomes, async (failed) => {
      if (!deps.parking) throw failed[0]?.error;
      for (const { message, error } of failed) {
        logger.error('reply parked: it could not be handled', {
          correlationId: amazonMqReply(message).correlationId,
          error,
        });
      }
      await deps.parking.park(
        failed.map((item) => item.message),
        `the reply could not be handled: ${String(failed[0]?.error)}`,
      );
    });
  };

  const drainParked = async (messages: readonly AmazonMqRabbitMessage[]): Promise<void> => {
    const deliveries = messages.map((message) => ({
      reply: amazonMqReply(message),
      redelivered: message.redelivered === true,
      lastTry: parkedReason(message) ?? '',
    }));
    const outcomes = await policy.handle(deliveries);
    await movePoisoned(messages, outcomes);
    await settle(messages, deliveries, outcomes, async (dropped) => {
      for (const { message, error } of dropped) {
        telemetry.metrics.count('replies_dropped_total');
        logger.error('parked reply dropped: neither it nor a failed attempt could be stored', {
          correlationId: amazonMqReply(message).correlationId,
          error,
        });
      }
    });
  };

  return (event, context) =>
    drainingInvocation(deps, context, async () => {
      for (const [key, messages] of Object.entries(event.rmqMessagesByQueue ?? {})) {
        const queue = key.slice(0, key.lastIndexOf('::'));
        if (queue === parkedQueue) await drainParked(messages);
        else await applyReplies(messages);
      }
    });
}

function parkedReason(message: AmazonMqRabbitMessage): string | undefined {
  const value = message.basicProperties?.headers?.[PARKED_REASON_HEADER];
  if (typeof value === 'string') return value;
  if (value && typeof value === 'object' && !Array.isArray(value) && Array.isArray(value.bytes)) {
    return Buffer.from(value.bytes as number[]).toString('utf8');
  }
  return undefined;
}

const fromEnv = fromEnvironment({ rabbitmq: rabbitMqBusFactory }, (container) => {
  const url = brokerUrlOf(container.bus);
  return createRepliesMqHandler({
    ...container,
    replyQueue: container.env.replyQueue,
    parking: url ? new AmqpReplyParking(url, container.env.replyQueue) : undefined,
  });
});

export const handler: RepliesMqHandler = async (event, context) => (await fromEnv())(event, context);
