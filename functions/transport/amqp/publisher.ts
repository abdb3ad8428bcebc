import type { ChannelModel, ConfirmChannel, Message, Options } from 'amqplib';
import type { RabbitMqLogger } from './connection.js';

/** A message for the default exchange: its routing key is the queue it goes to. */
export interface OutgoingMessage {
  queue: string;
  content: Buffer;
  options: Options.Publish;
}

/** A `mandatory` message the broker could not route: its queue does not exist (any more). */
class UnroutableError extends Error {
  constructor(readonly queue: string) {
    super(`RabbitMQ returned a message for queue ${queue}: the queue does not exist`);
    this.name = 'UnroutableError';
  }
}

/** A message the broker did not confirm, and why. */
export interface PublishFailure {
  message: OutgoingMessage;
  /** `nacked`: the broker refused it (a full queue); `returned`: no such queue; `unconfirmed`: no answer. */
  reason: 'nacked' | 'returned' | 'unconfirmed';
  error: Error;
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
    const [failure] = await this.publishEach(model, messages);
    if (failure) throw failure.error;
  }

  /**
   * Publishes every message and waits for each one's fate: resolves with the messages the broker did
   * not confirm (nacked, e.g. by a full queue with `reject-publish`; returned as unroutable; left
   * unconfirmed when the channel closed or the confirm timeout passed), in the order given. Every
   * message not listed is confirmed. Rejects only when no channel could be opened: nothing was sent.
   */
  async publishEach(
    model: ChannelModel,
    messages: readonly OutgoingMessage[],
    onConfirmed?: (message: OutgoingMessage) => void,
  ): Promise<PublishFailure[]> {
    if (messages.length === 0) return [];
    const channel = await this.channelOn(model);
    const failures = new Map<number, PublishFailure>();
    const settled = new Set<number>();
    await new Promise<void>((resolve) => {
      let unsettled = messages.length;
      let finished = false;
      const finish = (): void => {
        if (finished) return;
        finished = true;
        clearTimeout(timer);
        resolve();
      };
      const fail = (index: number, failure: PublishFailure): void => {
        if (!failures.has(index)) failures.set(index, failure);
      };
      const timer = setTimeout(() => {
        const error = new Error(
          `RabbitMQ settled ${messages.length - unsettled} of ${messages.length} messages within ${this.confirmTimeoutMs} ms`,
        );
        messages.forEach((message, index) => {
          if (!settled.has(index)) fail(index, { message, reason: 'unconfirmed', error });
        });
        finish();
      }, this.confirmTimeoutMs);
      const confirmationOf =
        (message: OutgoingMessage, index: number) =>
        (error: unknown): void => {
          if (finished || settled.has(index)) return;
          settled.add(index);
          if (error) fail(index, { message, ...describeRefusal(error) });
          else if (this.takeReturned(returnKey(message.queue, message.options))) {
            fail(index, { message, reason: 'returned', error: new UnroutableError(message.queue) });
          } else onConfirmed?.(message);
          if (--unsettled === 0) finish();
        };
      writeAll(channel, messages, confirmationOf, () => finished).catch((error: unknown) => {
        const cause = error instanceof Error ? error : new Error(String(error));
        // A write that failed leaves the rest unwritten: none of them will be confirmed.
        messages.forEach((message, index) => {
          if (!settled.has(index)) fail(index, { message, reason: 'unconfirmed', error: cause });
        });
        finish();
      });
    });
    return [...failures].sort(([a], [b]) => a - b).map(([, failure]) => failure);
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

/** amqplib calls a confirm callback with this message on a nack, and another when the channel closes. */
function describeRefusal(error: unknown): Pick<PublishFailure, 'reason' | 'error'> {
  const cause = error instanceof Error ? error : new Error(String(error));
  return { reason: cause.message === 'message nacked' ? 'nacked' : 'unconfirmed', error: cause };
}

async function writeAll(
  channel: ConfirmChannel,
  messages: readonly OutgoingMessage[],
  confirmationOf: (message: OutgoingMessage, index: number) => (error: unknown) => void,
  stopped: () => boolean,
): Promise<void> {
  for (const [index, message] of messages.entries()) {
    if (stopped()) return;
    const writable = channel.publish(
      '',
      message.queue,
      message.content,
      message.options,
      confirmationOf(message, index),
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
