import type { ChannelModel, Message } from 'amqplib';
import type { RabbitMqLogger } from '../../transport/amqp/connection.js';
import { attemptOf, stringProperty } from '../../transport/amqp/message.js';
import { readToken, TOKEN_HEADER } from '../../transport/request-token.js';

/**
 * The exchange step queues dead-letter to: through the operator's policy (protocol.md) on queues the
 * original's workers declare, or the `x-dead-letter-exchange` argument of the manager's quorum step
 * queues. A headers exchange: each manager's dead-letter queue is bound to it by the request header
 * below, so a manager gets the dead letters of its own requests only.
 */
export const DEAD_LETTER_EXCHANGE = 'switchyard.dead-letters';

/** The request header naming the manager's reply queue, by which dead letters are routed back to it. */
export const REPLY_QUEUE_HEADER = 'x-reply-to';

/** The queue a manager takes its dead letters from: `<reply queue>.dead-letters`. */
export function deadLetterQueueOf(replyQueue: string): string {
  return `${replyQueue}.dead-letters`;
}

/** Why the broker dead-lettered a request, from its `x-death` header. */
export type DeadLetterReason = 'expired' | 'delivery_limit' | 'rejected' | 'maxlen' | string;

/** A request the broker dead-lettered, as the manager reads it. */
export interface DeadLetter {
  correlationId?: string;
  attempt?: number;
  /** The request's `reply_to`. */
  replyTo?: string;
  reason: DeadLetterReason;
  /** The step queue it died in. */
  queue?: string;
  /** The request's token (`x-switchyard-token`): only the manager that sent it can have made it. */
  token?: string;
}

/** Reads the first (latest) `x-death` entry of a dead-lettered request. */
export function toDeadLetter(message: Message): DeadLetter {
  const headers = message.properties.headers ?? {};
  const deaths = headers['x-death'];
  const latest = Array.isArray(deaths) ? (deaths[0] as Record<string, unknown> | undefined) : undefined;
  const reason =
    stringProperty(latest?.reason) ?? stringProperty(headers['x-first-death-reason']) ?? 'unknown';
  const letter: DeadLetter = { reason };
  const correlationId = stringProperty(message.properties.correlationId);
  if (correlationId !== undefined) letter.correlationId = correlationId;
  const attempt = attemptOf(headers);
  if (attempt !== undefined) letter.attempt = attempt;
  const replyTo = stringProperty(message.properties.replyTo);
  if (replyTo !== undefined) letter.replyTo = replyTo;
  const queue = stringProperty(latest?.queue) ?? stringProperty(headers['x-first-death-queue']);
  if (queue !== undefined) letter.queue = queue;
  const token = readToken(headers[TOKEN_HEADER]);
  if (token !== undefined) letter.token = token;
  return letter;
}

/**
 * Declares the dead-letter exchange and `replyQueue`'s dead-letter queue, bound by the reply-queue
 * header, on a channel of its own. Dead letters sent before they exist would be dropped by the
 * broker, so both the publisher (before its first request) and the consumer declare them.
 */
export async function declareDeadLetters(
  model: ChannelModel,
  replyQueue: string,
  logger: RabbitMqLogger,
): Promise<void> {
  const channel = await model.createChannel();
  channel.on('error', (error: Error) => logger.info(`RabbitMQ: channel closed: ${error.message}`));
  try {
    await channel.assertExchange(DEAD_LETTER_EXCHANGE, 'headers', { durable: true });
    const queue = deadLetterQueueOf(replyQueue);
    await channel.assertQueue(queue, { durable: true });
    await channel.bindQueue(queue, DEAD_LETTER_EXCHANGE, '', {
      'x-match': 'all',
      [REPLY_QUEUE_HEADER]: replyQueue,
    });
  } finally {
    await channel.close().catch(() => {});
  }
}

/**
 * What a dead-lettered request's attempt failed with (an expired one is not a failure: the manager
 * sends it again if still awaited). `maxDeliveries`: the limit the manager gave its quorum queues.
 */
export function deadLetterFailure(letter: DeadLetter, maxDeliveries: number | undefined): string {
  const where = letter.queue ? ` in queue ${letter.queue}` : '';
  switch (letter.reason) {
    case 'delivery_limit':
      return maxDeliveries === undefined
        ? `rejected by the worker too many times${where} (the queue's delivery limit)`
        : `rejected by the worker ${maxDeliveries} times${where}`;
    case 'rejected':
      return `rejected by the worker${where} (reject or nack without requeue)`;
    case 'maxlen':
      return `dropped by the full queue${letter.queue ? ` ${letter.queue}` : ''} (x-max-length)`;
    default:
      return `dead-lettered by RabbitMQ${where} (${letter.reason})`;
  }
}
