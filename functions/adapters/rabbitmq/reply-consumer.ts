import type { Channel, ChannelModel, ConfirmChannel, ConsumeMessage } from 'amqplib';
import {
  DEFAULT_REPLY_QUEUE,
  type ReplyDelivery,
  type ReplyHandler,
  type ReplyOutcome,
} from '../../../engine/index.js';
import { consoleWarnings, RabbitMqConnection, type RabbitMqLogger } from '../../transport/amqp/connection.js';
import { FatalRefusalError } from '../../transport/amqp/fatal-refusal.js';
import { declareDurableQueue, openChannel } from '../../transport/amqp/queues.js';
import { toInboundReply } from './inbound-reply.js';
import { openPoisonChannel, publishPoisoned } from './poison-queue.js';

export interface ReplyConsumerOptions {
  url: string;
  /** @default 'workflow-manager' */
  queue?: string;
  /** `null` or absent: the URL's own vhost. */
  vhost?: string | null;
  /** Unacknowledged replies the broker may hand over at once. @default 1000 */
  prefetch?: number;
  /** Most replies in one `onBatch` call. @default 500 */
  maxBatch?: number;
  /** The first wait before a failed batch is handed back; doubles while failures repeat, up to 5 s. @default 200 */
  retryDelayMs?: number;
  connectionName?: string;
  logger?: RabbitMqLogger;
  /**
   * Give up for good (the start rejects, or the consumer stops) when the broker refuses the login
   * or the vhost, rather than trying again for ever. @default false
   */
  stopWhenRefused?: boolean;
  /**
   * Called when the consumer stops for good: a refusal (see `stopWhenRefused`), or the reply queue
   * found consumed by another manager, at the start or after a reconnect.
   */
  onFatal?: (error: Error) => void;
}

export interface ReplyConsumer {
  /** Cancels the consumer, lets the batch in hand finish, closes the connection. */
  stop(): Promise<void>;
}

/**
 * Consumes a reply queue (durable, manual acknowledgement) as its only consumer: the queue's
 * replies belong to one manager's database, and a second manager on it would take replies for jobs
 * it does not have. While another connection consumes it, the start fails with a
 * `FatalRefusalError`; the broker releases an exclusive consumer when its connection dies, so a
 * manager that was killed takes its queue again at once. Consumes and hands the replies
 * to `handle` in batches: whatever arrived while the previous batch was being handled, up to
 * `maxBatch`, so a quiet queue gets one reply at a time with no added wait and a busy one gets
 * large batches. Each reply is settled as `handle` says (the port's `ReplyOutcome`), only once it
 * resolved (the manager resolves once its state is stored): `done` acknowledged, `retry` handed back
 * to the queue after a short backoff (all of the batch when `handle` throws), `poisoned` copied to
 * the poison queue `<queue>.poisoned` (confirmed) and then acknowledged. After a reconnect the
 * consumer starts again by itself. Resolves once it is consuming.
 */
export async function startReplyConsumer(
  options: ReplyConsumerOptions,
  handle: ReplyHandler,
): Promise<ReplyConsumer> {
  const consumer = createReplyConsumer(options, handle);
  await consumer.start();
  return consumer;
}

/**
 * `startReplyConsumer` in two steps, for an owner that must be able to stop the consumer while it
 * is still waiting for the broker (`start` then rejects).
 */
export function createReplyConsumer(
  options: ReplyConsumerOptions,
  handle: ReplyHandler,
): ReplyConsumer & { start(): Promise<void> } {
  return new BatchingReplyConsumer<ReplyDelivery>(options, handle, toReplyDelivery, undefined, true);
}

/**
 * The same consumer for another of the manager's queues (its dead-letter queue): each message read
 * with `read`, the batch acknowledged when `onBatch` resolves and handed back when it throws;
 * `prepare` runs on each connection before the queue is declared and consumed.
 */
export function createQueueConsumer<T>(
  options: ReplyConsumerOptions & { queue: string },
  onBatch: (items: T[]) => Promise<void>,
  read: (message: ConsumeMessage) => T,
  prepare?: (model: ChannelModel) => Promise<void>,
): ReplyConsumer & { start(): Promise<void> } {
  const handle = async (items: T[]): Promise<undefined> => {
    await onBatch(items);
  };
  return new BatchingReplyConsumer(options, handle, read, prepare);
}

function toReplyDelivery(message: ConsumeMessage): ReplyDelivery {
  return { reply: toInboundReply(message), redelivered: message.fields.redelivered };
}

const DONE: ReplyOutcome = { kind: 'done' };
const UNSETTLED: ReplyOutcome = { kind: 'retry', error: new Error('the handler gave no outcome for it') };

interface Delivery {
  channel: ChannelState;
  message: ConsumeMessage;
}

/** Per channel: which deliveries are settled, to acknowledge a batch with one `multiple` ack. */
interface ChannelState {
  channel: Channel;
  closed: boolean;
  /** Every delivery tag up to this one is acked or nacked. */
  settledUpTo: number;
  /** Settled tags above `settledUpTo` (only after individual acks). */
  settledAbove: Set<number>;
}

class BatchingReplyConsumer<T> implements ReplyConsumer {
  private readonly connection: RabbitMqConnection;
  private readonly logger: RabbitMqLogger;
  private readonly queue: string;
  private current: { state: ChannelState; consumerTag: string } | undefined;
  /** The current connection, and the channel poisoned replies are copied over, opened on first use. */
  private model: ChannelModel | undefined;
  private poisonChannel: Promise<ConfirmChannel> | undefined;
  private buffer: Delivery[] = [];
  private draining: Promise<void> | undefined;
  private scheduled = false;
  private failures = 0;
  private stopping: Promise<void> | undefined;
  private unregister: (() => void) | undefined;

  constructor(
    private readonly options: ReplyConsumerOptions,
    /** The outcome of each item; undefined: all of them done. */
    private readonly onBatch: (items: T[]) => Promise<readonly ReplyOutcome[] | undefined>,
    private readonly read: (message: ConsumeMessage) => T,
    private readonly prepare?: (model: ChannelModel) => Promise<void>,
    /** Its queue has a poison queue, declared beside it, for `poisoned` outcomes. */
    private readonly poisons = false,
  ) {
    this.logger = options.logger ?? consoleWarnings;
    this.queue = options.queue ?? DEFAULT_REPLY_QUEUE;
    this.connection = new RabbitMqConnection({
      url: options.url,
      vhost: options.vhost ?? null,
      logger: this.logger,
      stopWhenVhostRefused: options.stopWhenRefused || (options.vhost ?? null) !== null,
      stopWhenLoginRefused: options.stopWhenRefused ?? false,
      ...(options.onFatal ? { onFatal: options.onFatal } : {}),
      ...(options.connectionName ? { connectionName: options.connectionName } : {}),
    });
  }

  async start(): Promise<void> {
    try {
      this.unregister = await this.connection.addSetup((model) => this.consume(model));
    } catch (error) {
      await this.connection.close();
      throw error;
    }
  }

  stop(): Promise<void> {
    this.stopping ??= this.shutDown();
    return this.stopping;
  }

  private async shutDown(): Promise<void> {
    this.unregister?.();
    const current = this.current;
    if (current && !current.state.closed) {
      await current.state.channel.cancel(current.consumerTag).catch(() => {});
    }
    // Deliveries not yet in a batch stay unacknowledged; closing the connection hands them back.
    this.buffer = [];
    await this.draining;
    // Closing the channel first makes the broker read the acknowledgements still queued on it:
    // frames of different channels may reach the socket out of order.
    if (current && !current.state.closed) await current.state.channel.close().catch(() => {});
    await this.connection.close();
  }

  private async consume(model: ChannelModel): Promise<void> {
    if (this.stopping) return;
    await this.prepare?.(model);
    const channel = await declareDurableQueue(
      model,
      await openChannel(model, this.logger),
      this.queue,
      this.logger,
    );
    this.model = model;
    this.poisonChannel = undefined;
    const state: ChannelState = { channel, closed: false, settledUpTo: 0, settledAbove: new Set() };
    channel.on('close', () => {
      state.closed = true;
      // Their channel is gone, so the broker delivers them again; acknowledging them now would fail.
      this.buffer = this.buffer.filter((delivery) => delivery.channel !== state);
    });
    await channel.prefetch(this.options.prefetch ?? 1000);
    const { consumerTag } = await channel
      .consume(this.queue, (message) => this.receive(state, message), { noAck: false, exclusive: true })
      .catch((error: unknown) => {
        if ((error as { code?: number }).code !== 403) throw error;
        throw new FatalRefusalError(
          `the reply queue "${this.queue}" at ${this.connection.safeUrl} is consumed by another manager ` +
            '(another serve with its own database?): give each serve its own --reply-queue',
        );
      });
    this.current = { state, consumerTag };
  }

  private receive(state: ChannelState, message: ConsumeMessage | null): void {
    if (message === null) {
      if (!this.stopping) this.connection.reconnect(`the broker cancelled the consumer of ${this.queue}`);
      return;
    }
    this.buffer.push({ channel: state, message });
    this.scheduleDrain();
  }

  /** Waits for the rest of this I/O turn, so that replies that arrived together form one batch. */
  private scheduleDrain(): void {
    if (this.draining || this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      const draining = this.drain().finally(() => {
        this.draining = undefined;
        if (this.buffer.length > 0 && !this.stopping) this.scheduleDrain();
      });
      this.draining = draining;
    });
  }

  private async drain(): Promise<void> {
    const maxBatch = this.options.maxBatch ?? 500;
    while (this.buffer.length > 0 && !this.stopping) {
      const batch = this.buffer.splice(0, maxBatch);
      await this.handle(batch);
    }
  }

  private async handle(batch: Delivery[]): Promise<void> {
    let outcomes: readonly ReplyOutcome[] | undefined;
    try {
      outcomes = await this.onBatch(batch.map((delivery) => this.read(delivery.message)));
    } catch (error) {
      outcomes = batch.map(() => ({ kind: 'retry', error }));
    }
    // Undefined: all done (the dead-letter queue's handler). A reply the handler says nothing of comes again.
    const settled = batch.map((_, index) => (outcomes ? (outcomes[index] ?? UNSETTLED) : DONE));
    const poisoned = await this.poison(batch, settled);
    const isDone = (index: number) => settled[index]?.kind === 'done' || poisoned.has(index);
    const handedBack = batch.filter((_, index) => !isDone(index));
    settle(
      batch.filter((_, index) => isDone(index)),
      'ack',
    );
    if (handedBack.length === 0) {
      this.failures = 0;
      return;
    }
    this.failures++;
    const delay = Math.min(5_000, (this.options.retryDelayMs ?? 200) * 2 ** (this.failures - 1));
    const first = settled.find((outcome) => outcome.kind === 'retry');
    const error = first?.kind === 'retry' ? first.error : undefined;
    const reason = error instanceof Error ? error.message : String(error ?? 'the poison queue refused them');
    this.logger.error(
      `handling ${handedBack.length} replies from ${this.queue} failed: ${reason}; handing them back in ${delay} ms`,
    );
    await new Promise((resolve) => setTimeout(resolve, delay));
    settle(handedBack, 'nack');
  }

  /** The poison queue is declared when a first reply goes there: most reply queues never need one. */
  private openPoisonChannel(): Promise<ConfirmChannel> {
    const model = this.model;
    if (!this.poisons || !model) return Promise.reject(new Error(`${this.queue} has no poison queue`));
    this.poisonChannel ??= openPoisonChannel(model, this.queue, this.logger);
    return this.poisonChannel;
  }

  /** Copies the batch's poisoned replies to the poison queue; the indexes of those it holds now. */
  private async poison(batch: readonly Delivery[], outcomes: readonly ReplyOutcome[]): Promise<Set<number>> {
    const indexes = outcomes.flatMap((outcome, index) => (outcome.kind === 'poisoned' ? [index] : []));
    if (indexes.length === 0) return new Set();
    try {
      await publishPoisoned(
        await this.openPoisonChannel(),
        this.queue,
        indexes.map((index) => ({
          message: (batch[index] as Delivery).message,
          reason: (outcomes[index] as { reason: string }).reason,
        })),
      );
      return new Set(indexes);
    } catch (error) {
      this.poisonChannel = undefined;
      // Handed back: their attempts have failed, so if they kill the process again they are found
      // out as they were, within the same bound.
      this.logger.error(
        `the poison queue of ${this.queue} did not take ${indexes.length} replies: ${String(error)}`,
      );
      return new Set();
    }
  }
}

/**
 * Acks (or nacks with requeue) a batch: with one `multiple` frame per channel when the batch is
 * exactly the run of deliveries that follows everything already settled, one by one otherwise.
 * Deliveries of a closed channel are skipped: the broker has already taken them back.
 */
function settle(batch: readonly Delivery[], outcome: 'ack' | 'nack'): void {
  const byChannel = new Map<ChannelState, ConsumeMessage[]>();
  for (const { channel, message } of batch) {
    const messages = byChannel.get(channel);
    if (messages) messages.push(message);
    else byChannel.set(channel, [message]);
  }
  for (const [state, messages] of byChannel) {
    if (state.closed) continue;
    try {
      settleOnChannel(state, messages, outcome);
    } catch {
      // The channel closed under us: the broker redelivers these.
    }
  }
}

function settleOnChannel(state: ChannelState, messages: ConsumeMessage[], outcome: 'ack' | 'nack'): void {
  const tags = messages.map((message) => message.fields.deliveryTag);
  const contiguous = tags.every((tag, index) => tag === state.settledUpTo + 1 + index);
  const last = messages[messages.length - 1];
  if (contiguous && last) {
    if (outcome === 'ack') state.channel.ack(last, true);
    else state.channel.nack(last, true, true);
    state.settledUpTo = last.fields.deliveryTag;
  } else {
    for (const message of messages) {
      if (outcome === 'ack') state.channel.ack(message);
      else state.channel.nack(message, false, true);
      state.settledAbove.add(message.fields.deliveryTag);
    }
  }
  while (state.settledAbove.delete(state.settledUpTo + 1)) state.settledUpTo++;
}
