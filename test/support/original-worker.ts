import { type Channel, type ChannelModel, connect, type Options } from 'amqplib';
import { AMQP_URL } from './rabbitmq.js';

/**
 * A reply with AMQP properties of its own, as a worker of the original style may add to a plain reply
 * by hand (an error reply: `type: error`, and a header such as `x-retryable`).
 */
export class PlainReply {
  constructor(
    readonly body: Record<string, unknown>,
    readonly properties: Options.Publish,
  ) {}
}

export type PlainHandler = (
  input: Record<string, unknown>,
  correlationId: string,
) => Record<string, unknown> | PlainReply | undefined;

export interface PlainWorkers {
  /** Deliveries seen per correlation id (a redelivery or a re-sent request counts again). */
  deliveries: Map<string, number>;
  /** Every `x-attempt` header seen, per correlation id. */
  attempts: Map<string, number[]>;
  stop(): Promise<void>;
}

/**
 * Workers as the original workflow-manager's protocol has them, written with plain amqplib (not
 * the SDK): take a message from a durable queue, reply to `reply_to` with the same correlation id
 * and a JSON body, acknowledge. No headers, no type: exactly what workers of the original send.
 */
export async function startPlainWorkers(
  queues: Record<string, PlainHandler>,
  options: {
    prefetch?: number;
    connectionName?: string /** Work time per message. */;
    delayMs?: number;
  } = {},
): Promise<PlainWorkers> {
  const model: ChannelModel = await connect(AMQP_URL, {
    clientProperties: { connection_name: options.connectionName ?? 'switchyard-test-plain-worker' },
  });
  model.on('error', () => {});
  const channel: Channel = await model.createChannel();
  channel.on('error', () => {});
  await channel.prefetch(options.prefetch ?? 50);
  const deliveries = new Map<string, number>();
  const attempts = new Map<string, number[]>();
  for (const [queue, handle] of Object.entries(queues)) {
    await channel.assertQueue(queue, { durable: true });
    await channel.consume(queue, async (message) => {
      if (!message) return;
      if (options.delayMs) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
      const correlationId = String(message.properties.correlationId);
      deliveries.set(correlationId, (deliveries.get(correlationId) ?? 0) + 1);
      const attempt = Number(message.properties.headers?.['x-attempt']);
      attempts.set(correlationId, [...(attempts.get(correlationId) ?? []), attempt]);
      const input = JSON.parse(message.content.toString()) as Record<string, unknown>;
      const output = handle(input, correlationId);
      if (output instanceof PlainReply) {
        channel.sendToQueue(message.properties.replyTo as string, Buffer.from(JSON.stringify(output.body)), {
          ...output.properties,
          correlationId,
        });
      } else if (output !== undefined) {
        channel.sendToQueue(message.properties.replyTo as string, Buffer.from(JSON.stringify(output)), {
          correlationId,
        });
      }
      channel.ack(message);
    });
  }
  return {
    deliveries,
    attempts,
    stop: async () => {
      await model.close().catch(() => {});
    },
  };
}

/** Waits until `check` passes (it throws or returns false until then), polling; fails after `ms`. */
export async function eventually<T>(
  check: () => Promise<T> | T,
  ms = 20_000,
  every = 50,
): Promise<Exclude<T, false>> {
  const deadline = Date.now() + ms;
  let lastError: unknown;
  for (;;) {
    try {
      const result = await check();
      if (result !== false) return result as Exclude<T, false>;
      lastError = new Error('the condition stayed false');
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) throw lastError;
    await new Promise((resolve) => setTimeout(resolve, every));
  }
}
