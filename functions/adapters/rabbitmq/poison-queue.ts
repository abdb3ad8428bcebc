import type { ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import type { RabbitMqLogger } from '../../transport/amqp/connection.js';
import { poisonQueueOf } from '../../transport/amqp/poison-queue-name.js';
import { declareDurableQueue } from '../../transport/amqp/queues.js';

/** The header a poisoned reply carries in the poison queue: why the manager gave up on it. */
export const POISONED_REASON_HEADER = 'x-poisoned-reason';

export { poisonQueueOf };

/** A confirm channel on the consumer's connection, with the poison queue declared. */
export async function openPoisonChannel(
  model: ChannelModel,
  replyQueue: string,
  logger: RabbitMqLogger,
): Promise<ConfirmChannel> {
  const channel = await model.createConfirmChannel();
  channel.on('error', (error: Error) => logger.info(`RabbitMQ: poison channel closed: ${error.message}`));
  await declareDurableQueue(model, channel, poisonQueueOf(replyQueue), logger);
  return channel;
}

/**
 * Copies each message (body, properties, headers) to the poison queue, persistent, with the reason
 * in `x-poisoned-reason`; resolves once the broker confirmed every copy, so that only then may the
 * originals be acknowledged.
 */
export async function publishPoisoned(
  channel: ConfirmChannel,
  replyQueue: string,
  messages: readonly { message: ConsumeMessage; reason: string }[],
): Promise<void> {
  for (const { message, reason } of messages) {
    channel.sendToQueue(poisonQueueOf(replyQueue), message.content, {
      ...keptProperties(message),
      persistent: true,
      headers: { ...message.properties.headers, [POISONED_REASON_HEADER]: reason.slice(0, 1000) },
    });
  }
  await channel.waitForConfirms();
}

/**
 * The properties a copy keeps: not `expiration` (it must stay), nor `userId` (the broker refuses one
 * that is not the publishing connection's user); amqplib lists unset ones as undefined.
 */
function keptProperties(message: ConsumeMessage): Record<string, unknown> {
  const { contentType, contentEncoding, correlationId, replyTo, messageId, timestamp, type, appId } =
    message.properties;
  const kept = { contentType, contentEncoding, correlationId, replyTo, messageId, timestamp, type, appId };
  return Object.fromEntries(Object.entries(kept).filter(([, value]) => value !== undefined));
}
