import { createHash } from 'node:crypto';
import type { Context } from 'aws-lambda';
import { DEFAULT_REPLY_QUEUE, type InboundReply } from '../../engine/index.js';
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
import { MAX_UNSTORABLE_TRIES, MIN_HAND_BACK_MS } from '../manager/isolate-replies.js';

export type RepliesMqHandler = (event: AmazonMqRabbitEvent, context?: Context) => Promise<void>;

export interface RepliesMqDeps extends ManagerHandlerDeps {
  /** Where replies that cannot be handled go (the parked queue); without it they are handed back. */
  parking?: ReplyParking;
  /** The reply queue's name, to tell the parked queue's events from the reply queue's. */
  replyQueue?: string;
  /** @default Date.now */
  clock?: () => number;
}

/** Replies whose failed tries are remembered; the oldest is forgotten first. */
const REMEMBERED = 1000;

interface Failed {
  message: AmazonMqRabbitMessage;
  reply: InboundReply;
  error: unknown;
}

/**
 * Workers' replies on Amazon MQ for RabbitMQ. Lambda runs one invocation at a time per event source
 * mapping and has no partial batch response: a thrown error sends the whole batch back, ahead of every
 * reply behind it. So a reply must never make the handler throw for ever:
 *
 * - The batch goes to the manager in one call; the manager already records a reply it cannot store as
 *   a failed attempt, and drops a malformed one (isolate-replies.ts).
 * - If the call still throws, each reply is handled alone. When some of them succeed, the store works
 *   and the others are the problem: they are parked (published to `<reply queue>.parked`, confirmed),
 *   and the batch is acknowledged.
 * - When all fail (the store may be down) the batch is handed back (thrown), until a reply has failed
 *   `MAX_UNSTORABLE_TRIES` times over `MIN_HAND_BACK_MS` in this container, when it is parked too. The
 *   reply queue is a quorum queue with a delivery limit: the broker parks a reply handed back more often
 *   than that on its own (mq-reply-queues.ts).
 *
 * The parked queue has a mapping of its own to this handler: each parked reply is applied once more
 * (an outage may be over), and if that fails its attempt fails (`Manager.deadLettered`, as the SQS
 * dead-letter queue's requests do). One that cannot be recorded either is logged and dropped when
 * others could be, or after the same bounded tries.
 */
export function createRepliesMqHandler(deps: RepliesMqDeps): RepliesMqHandler {
  const { manager, telemetry } = deps;
  const { logger } = telemetry;
  const clock = deps.clock ?? Date.now;
  const tries = new Map<string, { count: number; since: number }>();
  const parkedQueue = parkedQueueOf(deps.replyQueue ?? DEFAULT_REPLY_QUEUE);

  /** Counts one more failed try of `message`; whether it has had its share. */
  const givenUp = (message: AmazonMqRabbitMessage): boolean => {
    const key = keyOf(message);
    const now = clock();
    const earlier = tries.get(key);
    const next = { count: (earlier?.count ?? 0) + 1, since: earlier?.since ?? now };
    tries.delete(key);
    if (next.count >= MAX_UNSTORABLE_TRIES && now - next.since >= MIN_HAND_BACK_MS) return true;
    tries.set(key, next);
    if (tries.size > REMEMBERED) tries.delete(tries.keys().next().value as string);
    return false;
  };

  /**
   * The failures of a batch handled one by one: those to let go of (to `letGo`), or the error to hand
   * the batch back with. Some succeeded: the store works, so every failure is let go of.
   */
  const settle = async (
    failed: readonly Failed[],
    size: number,
    letGo: (failed: readonly Failed[]) => Promise<void>,
  ): Promise<void> => {
    if (failed.length === 0) return;
    const storeWorks = failed.length < size;
    const exhausted = failed.map((item) => givenUp(item.message));
    if (!storeWorks && exhausted.some((done) => !done)) {
      logger.error('no reply of the batch could be handled; the broker delivers it again', {
        size,
        error: failed[0]?.error,
      });
      throw failed[0]?.error;
    }
    for (const item of failed) tries.delete(keyOf(item.message));
    await letGo(failed);
  };

  const applyReplies = async (messages: readonly AmazonMqRabbitMessage[]): Promise<void> => {
    const replies = messages.map(amazonMqReply);
    let batchError: unknown;
    try {
      await manager.handleReplies(replies);
      return;
    } catch (error) {
      batchError = error;
      if (replies.length > 1) {
        logger.warn('reply batch failed; handling its replies one at a time', {
          error,
          size: replies.length,
        });
      }
    }
    const failed: Failed[] = [];
    if (replies.length === 1) {
      failed.push({
        message: messages[0] as AmazonMqRabbitMessage,
        reply: replies[0] as InboundReply,
        error: batchError,
      });
    }
    for (const [index, reply] of replies.length > 1 ? replies.entries() : []) {
      try {
        await manager.handleReplies([reply]);
      } catch (error) {
        failed.push({ message: messages[index] as AmazonMqRabbitMessage, reply, error });
      }
    }
    await settle(failed, replies.length, async (parked) => {
      if (!deps.parking) throw parked[0]?.error;
      for (const { reply, error } of parked) {
        logger.error('reply parked: it could not be handled', { correlationId: reply.correlationId, error });
      }
      await deps.parking.park(
        parked.map((item) => item.message),
        `the reply could not be handled: ${String(parked[0]?.error)}`,
      );
    });
  };

  const drainParked = async (messages: readonly AmazonMqRabbitMessage[]): Promise<void> => {
    const failed: Failed[] = [];
    for (const message of messages) {
      const reply = amazonMqReply(message);
      try {
        await manager.handleReplies([reply]);
      } catch (error) {
        if (reply.correlationId === undefined) {
          failed.push({ message, reply, error });
          continue;
        }
        const why = parkedReason(message) ?? String(error);
        try {
          await manager.deadLettered(
            reply.correlationId,
            reply.attempt,
            `the reply could not be handled and was parked (${why.slice(0, 1000)})`,
          );
        } catch (failure) {
          failed.push({ message, reply, error: failure });
        }
      }
    }
    await settle(failed, messages.length, async (dropped) => {
      for (const { reply, error } of dropped) {
        telemetry.metrics.count('replies_dropped_total');
        logger.error('parked reply dropped: neither it nor a failed attempt could be stored', {
          correlationId: reply.correlationId,
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

/** Which message it is, for counting its tries: its correlation id, type, attempt and body. */
function keyOf(message: AmazonMqRabbitMessage): string {
  const reply = amazonMqReply(message);
  return [reply.correlationId ?? '', reply.type ?? '', reply.attempt ?? '', digest(message.data ?? '')].join(
    '\u0000',
  );
}

function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url');
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
