import type { Channel, ChannelModel } from 'amqplib';
import { MAX_AMQP_NAME_BYTES } from '../../../engine/index.js';
import type { RabbitMqLogger } from './connection.js';

/** AMQP reply codes after which a passive check can still prove the queue is there. */
const ACCESS_REFUSED = 403;
const PRECONDITION_FAILED = 406;

/**
 * Declares `queue` durable with no arguments (unless `args` are given: the manager's quorum step
 * queues): the declaration the original workers make, so theirs and ours agree. If the queue exists
 * with other settings (a quorum queue made by an operator or by the manager, a classic one where
 * quorum was asked for) or the user may not declare queues, a passive check that it exists is enough.
 * Either failure closes `channel`; the returned channel is one that is still open.
 */
export async function declareDurableQueue(
  model: ChannelModel,
  channel: Channel,
  queue: string,
  logger: RabbitMqLogger,
  args?: Record<string, unknown>,
): Promise<Channel> {
  try {
    await channel.assertQueue(queue, args ? { durable: true, arguments: args } : { durable: true });
    return channel;
  } catch (error) {
    const code = replyCode(error);
    if (code !== ACCESS_REFUSED && code !== PRECONDITION_FAILED) throw error;
    const fresh = await openChannel(model, logger);
    // When the queue is not there either, the declaration's refusal is the reason worth reporting.
    await fresh.checkQueue(queue).catch(() => {
      throw error;
    });
    logger.info(
      `RabbitMQ: queue ${queue} exists but could not be declared durable ${args ? `with ${JSON.stringify(args)}` : 'without arguments'} (${code}); using it`,
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

/** Channel-level refusals of a declaration (access refused, not found, locked, other settings). */
const REFUSALS = new Set([ACCESS_REFUSED, 404, 405, PRECONDITION_FAILED]);

/** Longest queue name AMQP 0-9-1 carries, in bytes; amqplib cannot even encode a longer one. */

/**
 * Remembers which queues were declared on which connection, so each is declared once per connection
 * (a new connection, after a reconnect, starts from nothing). Declarations run one at a time on a
 * channel of their own, so a refused declaration never closes the channel that publishes. A refused
 * declaration is reported for its queue alone and its channel replaced; one the broker does not
 * answer in time fails the call (the caller retries).
 */
export class QueueDeclarer {
  private model: ChannelModel | undefined;
  private channel: Channel | undefined;
  private readonly declared = new Set<string>();
  private tail: Promise<void> = Promise.resolve();

  constructor(
    private readonly logger: RabbitMqLogger,
    /** @default 10000 */
    private readonly timeoutMs = 10_000,
    /** The arguments a queue is declared with; undefined: none (the original workers' declaration). */
    private readonly argumentsFor: (queue: string) => Record<string, unknown> | undefined = () => undefined,
  ) {}

  /** Declares those of `queues` not yet declared on `model`; resolves with the refused ones and why. */
  async ensure(model: ChannelModel, queues: Iterable<string>): Promise<Map<string, string>> {
    this.useModel(model);
    const missing = [...new Set(queues)].filter((queue) => !this.declared.has(queue));
    if (missing.length === 0) return new Map();
    const run = this.tail.then(() => this.declareAll(model, missing));
    this.tail = run.then(
      () => {},
      () => {},
    );
    return run;
  }

  /** Declares `queue` again before its next use (it was reported missing). */
  forget(queue: string): void {
    this.declared.delete(queue);
  }

  private async declareAll(model: ChannelModel, queues: readonly string[]): Promise<Map<string, string>> {
    const refused = new Map<string, string>();
    for (const queue of queues) {
      if (this.model !== model) throw new Error('connection lost while declaring queues');
      if (this.declared.has(queue)) continue;
      const bytes = Buffer.byteLength(queue);
      if (bytes === 0 || bytes > MAX_AMQP_NAME_BYTES) {
        // amqplib would throw while encoding and leave the channel waiting for ever for a reply.
        refused.set(queue, `a RabbitMQ queue name has 1 to ${MAX_AMQP_NAME_BYTES} bytes, this one ${bytes}`);
        continue;
      }
      const channel = this.channel ?? this.track(await openChannel(model, this.logger));
      let open: Channel;
      try {
        open = await this.withTimeout(
          declareDurableQueue(model, channel, queue, this.logger, this.argumentsFor(queue)),
          queue,
        );
      } catch (error) {
        this.discard(channel);
        const code = replyCode(error);
        if (code === undefined || !REFUSALS.has(code) || this.model !== model) throw error;
        const reason = error instanceof Error ? error.message : String(error);
        this.logger.warn(`RabbitMQ: queue ${queue} cannot be declared: ${reason}`);
        refused.set(queue, reason);
        continue;
      }
      if (open !== channel) this.track(open);
      if (this.model !== model) throw new Error('connection lost while declaring queues');
      this.declared.add(queue);
    }
    return refused;
  }

  private withTimeout<T>(work: Promise<T>, queue: string): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () =>
          reject(
            new Error(
              `RabbitMQ did not answer the declaration of queue ${queue} within ${this.timeoutMs} ms`,
            ),
          ),
        this.timeoutMs,
      );
    });
    return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
  }

  /** Stops using a channel a declaration failed on: the broker closed it, or it may be stuck. */
  private discard(channel: Channel): void {
    if (this.channel === channel) this.channel = undefined;
    channel.close().catch(() => {});
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

/** What a passive declare says of a queue: its ready messages and consumers, or that it does not exist. */
export interface QueueCheck {
  queue: string;
  exists: boolean;
  ready?: number;
  consumers?: number;
  error?: string;
}

/**
 * Looks at queues with passive declares (`checkQueue`), which never create one. A queue that does not
 * exist closes the channel (404 NOT_FOUND): the next check opens another. The channels are closed
 * at the end.
 */
export async function checkQueues(
  model: ChannelModel,
  queues: readonly string[],
  logger: RabbitMqLogger,
): Promise<QueueCheck[]> {
  const checks: QueueCheck[] = [];
  let channel: Channel | undefined;
  try {
    for (const queue of queues) {
      channel ??= await openChannel(model, logger);
      try {
        const { messageCount, consumerCount } = await channel.checkQueue(queue);
        checks.push({ queue, exists: true, ready: messageCount, consumers: consumerCount });
      } catch (error) {
        channel = undefined;
        if (replyCode(error) === 404) checks.push({ queue, exists: false });
        else checks.push({ queue, exists: false, error: (error as Error).message });
      }
    }
  } finally {
    await channel?.close().catch(() => {});
  }
  return checks;
}
