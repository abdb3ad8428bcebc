import { type Channel, type ChannelModel, type ConfirmChannel, connect } from 'amqplib';
import { POISONED_REASON_HEADER, poisonQueueOf } from '../adapters/rabbitmq/poison-queue.js';
import type { Logger } from '../telemetry/telemetry.js';
import type { AmazonMqRabbitMessage } from './amazon-mq-event.js';
import { headerScalar } from './amazon-mq-event.js';
import { parkedQueueOf } from './parked-queue.js';

// Its name has a module of its own, without amqplib: the timers function measures it on both buses' bundles.
export { parkedQueueOf };

/**
 * Deliveries of a reply before the broker dead-letters it to the parked queue: the same bound SQS
 * gives the reply queue (infra/constructs/sqs-bus.ts, REPLY_MAX_RECEIVE_COUNT).
 */
export const REPLY_MAX_DELIVERIES = 10;
/** Deliveries of a parked reply before the broker drops it (the drain hands a batch back only in an outage). */
export const PARKED_MAX_DELIVERIES = 100;
/** The header a parked reply carries: why it was parked. */
export const PARKED_REASON_HEADER = 'x-parked-reason';

/**
 * The reply queue as a quorum queue: the broker counts deliveries (Lambda requeues a batch whose
 * invocation fails) and, after `REPLY_MAX_DELIVERIES`, dead-letters the reply through the default
 * exchange to the parked queue (`mainQueue`'s: a shard's parked replies go where the first queue's do).
 * A quorum queue also survives the loss of a cluster node.
 */
export function replyQueueArguments(replyQueue: string, mainQueue = replyQueue): Record<string, unknown> {
  return {
    'x-queue-type': 'quorum',
    // The broker counts redeliveries: the first delivery and this many more.
    'x-delivery-limit': REPLY_MAX_DELIVERIES - 1,
    'x-dead-letter-exchange': '',
    'x-dead-letter-routing-key': parkedQueueOf(mainQueue),
  };
}

export function parkedQueueArguments(): Record<string, unknown> {
  return { 'x-queue-type': 'quorum', 'x-delivery-limit': PARKED_MAX_DELIVERIES - 1 };
}

/** The poison queue (`<reply queue>.poisoned`, nothing consumes it) is a quorum queue too. */
export function poisonQueueArguments(): Record<string, unknown> {
  return { 'x-queue-type': 'quorum' };
}

/** AMQP 406: the queue exists with other arguments (a classic reply queue from an earlier deploy). */
const PRECONDITION_FAILED = 406;

/**
 * Declares the poison queue and the parked queue (of `mainQueue`, the first reply queue, which a
 * shard shares), then the reply queue with `replyQueueArguments`. A reply queue that
 * already exists with other arguments (declared classic by an earlier version) is used as it is, with
 * a warning: it has no delivery limit until it is deleted and declared again (docs/deploying.md).
 */
export async function declareReplyQueues(
  model: ChannelModel,
  replyQueue: string,
  logger: Logger,
  mainQueue = replyQueue,
): Promise<void> {
  const open = async (): Promise<Channel> => {
    const channel = await model.createChannel();
    channel.on('error', () => {});
    return channel;
  };
  let channel = await open();
  try {
    await channel.assertQueue(poisonQueueOf(mainQueue), {
      durable: true,
      arguments: poisonQueueArguments(),
    });
    await channel.assertQueue(parkedQueueOf(mainQueue), {
      durable: true,
      arguments: parkedQueueArguments(),
    });
    try {
      await channel.assertQueue(replyQueue, {
        durable: true,
        arguments: replyQueueArguments(replyQueue, mainQueue),
      });
    } catch (error) {
      if ((error as { code?: unknown }).code !== PRECONDITION_FAILED) throw error;
      channel = await open();
      await channel.checkQueue(replyQueue);
      logger.warn(
        'the reply queue exists without a delivery limit; replies failing for ever are not parked',
        {
          queue: replyQueue,
          error,
        },
      );
    }
  } finally {
    await channel.close().catch(() => {});
  }
}

/**
 * Moves replies out of a batch that Amazon MQ's mapping can only acknowledge or hand back whole:
 * those that could not be handled to the parked queue, where the manager drains them; poisoned ones
 * to the poison queue, where they stay.
 */
export interface ReplyParking {
  park(messages: readonly AmazonMqRabbitMessage[], reason: string): Promise<void>;
  /** Without it, poisoned replies are parked (the drain then finds their attempts failed already). */
  poison?(messages: readonly { message: AmazonMqRabbitMessage; reason: string }[]): Promise<void>;
  close(): Promise<void>;
}

/**
 * Parks over a connection of its own, opened on first use and kept for the container's life (Lambda
 * runs one invocation per mapping: parking is rare, so is the connection). Each message is published
 * persistent to the parked (or poison) queue through the default exchange and confirmed by the broker
 * before `park` resolves: only then may the invocation succeed and the batch be acknowledged.
 */
export class AmqpReplyParking implements ReplyParking {
  private channel: Promise<{ model: ChannelModel; channel: ConfirmChannel }> | undefined;

  constructor(
    private readonly url: string,
    private readonly replyQueue: string,
  ) {}

  park(messages: readonly AmazonMqRabbitMessage[], reason: string): Promise<void> {
    const queue = parkedQueueOf(this.replyQueue);
    return this.publish(
      messages.map((message) => ({ message, queue, header: PARKED_REASON_HEADER, reason })),
    );
  }

  poison(messages: readonly { message: AmazonMqRabbitMessage; reason: string }[]): Promise<void> {
    const queue = poisonQueueOf(this.replyQueue);
    return this.publish(messages.map((item) => ({ ...item, queue, header: POISONED_REASON_HEADER })));
  }

  private async publish(
    copies: readonly { message: AmazonMqRabbitMessage; queue: string; header: string; reason: string }[],
  ): Promise<void> {
    if (copies.length === 0) return;
    const { channel } = await this.open();
    try {
      for (const { message, queue, header, reason } of copies) {
        channel.sendToQueue(queue, Buffer.from(message.data ?? '', 'base64'), {
          persistent: true,
          ...amqpProperties(message),
          headers: { ...amqpHeaders(message), [header]: reason.slice(0, 1000) },
        });
      }
      await channel.waitForConfirms();
    } catch (error) {
      await this.close();
      throw error;
    }
  }

  async close(): Promise<void> {
    const opened = this.channel;
    this.channel = undefined;
    if (opened) await opened.then(({ model }) => model.close()).catch(() => {});
  }

  private open(): Promise<{ model: ChannelModel; channel: ConfirmChannel }> {
    this.channel ??= (async () => {
      const model = await connect(this.url, {
        clientProperties: { connection_name: 'switchyard-lambda:park' },
      });
      model.on('error', () => {});
      model.on('close', () => {
        this.channel = undefined;
      });
      const channel = await model.createConfirmChannel();
      channel.on('error', () => {});
      return { model, channel };
    })();
    const opening = this.channel;
    opening.catch(() => {
      if (this.channel === opening) this.channel = undefined;
    });
    return opening;
  }
}

/** The properties protocol.md gives a reply, back from the event's `basicProperties`. */
function amqpProperties(message: AmazonMqRabbitMessage): {
  correlationId?: string;
  type?: string;
  contentType?: string;
} {
  const { correlationId, type, contentType } = message.basicProperties ?? {};
  return {
    ...(correlationId ? { correlationId } : {}),
    ...(type ? { type } : {}),
    ...(contentType ? { contentType } : {}),
  };
}

/** Scalar headers (the event writes long strings as bytes); tables and lists are left out. */
function amqpHeaders(message: AmazonMqRabbitMessage): Record<string, unknown> {
  const headers: Record<string, unknown> = {};
  for (const [name, value] of Object.entries(message.basicProperties?.headers ?? {})) {
    if (typeof value === 'boolean') headers[name] = value;
    else {
      const scalar = headerScalar(value);
      if (scalar !== undefined) headers[name] = scalar;
    }
  }
  return headers;
}
