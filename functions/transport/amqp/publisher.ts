import type { ChannelModel, ConfirmChannel, Message, Options } from 'amqplib';
import type { RabbitMqLogger } from './connection.js';

/** A message for the default exchange: its routing key is the queue it goes to. */
export interface OutgoingMessage {
  queue: string;
  content: Buffer;
  options: Options.Publish;
}

/** A `mandatory` message the broker could not route: its queue does not exist (any more). */
export class UnroutableError extends Error {
  constructor(readonly queue: string) {
    super(`RabbitMQ returned a message for queue ${queue}: the queue does not exist`);
    this.name = 'UnroutableError';
  }
}

/**
 * Publishes on a confirm channel of a connection. A batch is written in one go (waiting only when
 * the socket pushes back) and its confirms are awaited together: no round trip per message.
 */
export class ConfirmPublisher {
  private model: ChannelModel | undefined;
  private channel: ConfirmChannel | undefined;
  private opening: Promise<ConfirmChannel> | undefined;
  /** Messages the broker returned (mandatory, unroutable), by key, until their confirm arrives. */
  private returned = new Map<string, number>();

  constructor(
    private readonly logger: RabbitMqLogger,
    /** @default 30000 */
    private readonly confirmTimeoutMs = 30_000,
  ) {}

  /**
   * Resolves once the broker confirmed every message; rejects on the first nack, unroutable
   * mandatory message, closed channel or connection, or when confirms take too long.
   */
  async publish(model: ChannelModel, messages: readonly OutgoingMessage[]): Promise<void> {
    if (messages.length === 0) return;
    const channel = await this.channelOn(model);
    await new Promise<void>((resolve, reject) => {
      let unconfirmed = messages.length;
      let settled = false;
      const finish = (error?: Error): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (error) reject(error);
        else resolve();
      };
      const timer = setTimeout(
        () =>
          finish(
            new Error(
              `RabbitMQ confirmed ${messages.length - unconfirmed} of ${messages.length} messages within ${this.confirmTimeoutMs} ms`,
            ),
          ),
        this.confirmTimeoutMs,
      );
      const confirmationOf =
        (message: OutgoingMessage) =>
        (error: unknown): void => {
          if (error) finish(error instanceof Error ? error : new Error(String(error)));
          else if (this.takeReturned(returnKey(message.queue, message.options))) {
            finish(new UnroutableError(message.queue));
          } else if (--unconfirmed === 0) finish();
        };
      writeAll(channel, messages, confirmationOf, () => settled).catch((error: unknown) =>
        finish(error instanceof Error ? error : new Error(String(error))),
      );
    });
  }

  private channelOn(model: ChannelModel): Promise<ConfirmChannel> {
    if (this.model !== model) {
      this.model = model;
      this.channel = undefined;
      this.opening = undefined;
    }
    if (this.channel) return Promise.resolve(this.channel);
    if (!this.opening) {
      const opening = this.open(model);
      this.opening = opening;
      const forget = (): void => {
        if (this.opening === opening) this.opening = undefined;
      };
      opening.then(forget, forget);
    }
    return this.opening;
  }

  private async open(model: ChannelModel): Promise<ConfirmChannel> {
    const channel = await model.createConfirmChannel();
    channel.on('error', (error: Error) =>
      this.logger.info(`RabbitMQ: publishing channel closed: ${error.message}`),
    );
    channel.on('close', () => {
      if (this.channel === channel) this.channel = undefined;
    });
    channel.on('return', (message: Message) => {
      const key = returnKey(message.fields.routingKey, message.properties);
      this.returned.set(key, (this.returned.get(key) ?? 0) + 1);
    });
    if (this.model === model) {
      this.channel = channel;
      this.returned = new Map();
    }
    return channel;
  }

  private takeReturned(key: string): boolean {
    const count = this.returned.get(key);
    if (count === undefined) return false;
    if (count <= 1) this.returned.delete(key);
    else this.returned.set(key, count - 1);
    return true;
  }
}

async function writeAll(
  channel: ConfirmChannel,
  messages: readonly OutgoingMessage[],
  confirmationOf: (message: OutgoingMessage) => (error: unknown) => void,
  stopped: () => boolean,
): Promise<void> {
  for (const message of messages) {
    if (stopped()) return;
    const writable = channel.publish(
      '',
      message.queue,
      message.content,
      message.options,
      confirmationOf(message),
    );
    if (!writable) await drained(channel);
  }
}

/** One wait per channel, shared by every batch the socket pushed back (no listener per batch). */
const drains = new WeakMap<ConfirmChannel, Promise<void>>();

/** Resolves when the channel can take more, rejects if it closes first. */
function drained(channel: ConfirmChannel): Promise<void> {
  let waiting = drains.get(channel);
  if (!waiting) {
    waiting = new Promise<void>((resolve, reject) => {
      const onDrain = (): void => {
        channel.off('close', onClose);
        drains.delete(channel);
        resolve();
      };
      const onClose = (): void => {
        channel.off('drain', onDrain);
        drains.delete(channel);
        reject(new Error('channel closed'));
      };
      channel.once('drain', onDrain);
      channel.once('close', onClose);
    });
    drains.set(channel, waiting);
  }
  return waiting;
}

/** The broker returns a message with its routing key and properties: enough to tell which one it was. */
function returnKey(queue: string, properties: { correlationId?: unknown; headers?: unknown }): string {
  const headers = properties.headers as Record<string, unknown> | undefined;
  return `${queue}\n${String(properties.correlationId ?? '')}\n${String(headers?.['x-attempt'] ?? '')}`;
}
