import type { Channel, ChannelModel } from 'amqplib';
import type { RabbitMqLogger } from './connection.js';

/** AMQP reply codes after which a passive check can still prove the queue is there. */
const ACCESS_REFUSED = 403;
const PRECONDITION_FAILED = 406;

/**
 * Declares `queue` durable with no arguments: the declaration the original workers make, so
 * theirs and ours agree. If the queue exists with other settings (a quorum queue made by an
 * operator, say) or the user may not declare queues, a passive check that it exists is enough.
 * Either failure closes `channel`; the returned channel is one that is still open.
 */
export async function declareDurableQueue(
  model: ChannelModel,
  channel: Channel,
  queue: string,
  logger: RabbitMqLogger,
): Promise<Channel> {
  try {
    await channel.assertQueue(queue, { durable: true });
    return channel;
  } catch (error) {
    const code = replyCode(error);
    if (code !== ACCESS_REFUSED && code !== PRECONDITION_FAILED) throw error;
    const fresh = await openChannel(model, logger);
    await fresh.checkQueue(queue);
    logger.info(
      `RabbitMQ: queue ${queue} exists but could not be declared durable without arguments (${code}); using it`,
    );
    return fresh;
  }
}

/** A plain channel with the listener that keeps a channel error from crashing the process. */
export async function openChannel(model: ChannelModel, logger: RabbitMqLogger): Promise<Channel> {
  const channel = await model.createChannel();
  channel.on('error', (error: Error) => logger.info(`RabbitMQ: channel closed: ${error.message}`));
  return channel;
}

/**
 * Remembers which queues were declared on which connection, so each is declared once per connection
 * (a new connection, after a reconnect, starts from nothing). Declarations run one at a time on a
 * channel of their own, so a refused declaration never closes the channel that publishes.
 */
export class QueueDeclarer {
  private model: ChannelModel | undefined;
  private channel: Channel | undefined;
  private readonly declared = new Set<string>();
  private tail: Promise<void> = Promise.resolve();

  constructor(private readonly logger: RabbitMqLogger) {}

  /** Declares those of `queues` not yet declared on `model`. */
  async ensure(model: ChannelModel, queues: Iterable<string>): Promise<void> {
    this.useModel(model);
    const missing = [...new Set(queues)].filter((queue) => !this.declared.has(queue));
    if (missing.length === 0) return;
    const run = this.tail.then(() => this.declareAll(model, missing));
    this.tail = run.catch(() => {});
    await run;
  }

  /** Declares `queue` again before its next use (it was reported missing). */
  forget(queue: string): void {
    this.declared.delete(queue);
  }

  private async declareAll(model: ChannelModel, queues: readonly string[]): Promise<void> {
    for (const queue of queues) {
      if (this.model !== model) throw new Error('connection lost while declaring queues');
      if (this.declared.has(queue)) continue;
      const channel = this.channel ?? this.track(await openChannel(model, this.logger));
      const open = await declareDurableQueue(model, channel, queue, this.logger);
      if (open !== channel) this.track(open);
      if (this.model !== model) throw new Error('connection lost while declaring queues');
      this.declared.add(queue);
    }
  }

  private track(channel: Channel): Channel {
    this.channel = channel;
    channel.once('close', () => {
      if (this.channel === channel) this.channel = undefined;
    });
    return channel;
  }

  private useModel(model: ChannelModel): void {
    if (this.model === model) return;
    this.model = model;
    this.channel = undefined;
    this.declared.clear();
  }
}

/** The AMQP reply code amqplib puts on the error of a channel the broker closed. */
function replyCode(error: unknown): number | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === 'number' ? code : undefined;
}
