import type { ChannelModel } from 'amqplib';
import {
  type Bus,
  DEFAULT_REPLY_QUEUE,
  type DeadLetterHandlers,
  type DeadLetterIntake,
  type QueueHealth,
  type ReplyConsumption,
  type ReplyHandler,
  type ReplyIntake,
  type ReplyIntakeOptions,
  RetryableSendError,
  type SendOptions,
  type StepRequest,
  UndeliverableError,
} from '../../../engine/index.js';
import { consoleWarnings, RabbitMqConnection, type RabbitMqLogger } from '../../transport/amqp/connection.js';
import {
  ConfirmPublisher,
  type OutgoingMessage,
  type PublishFailure,
} from '../../transport/amqp/publisher.js';
import { checkQueues, QueueDeclarer } from '../../transport/amqp/queues.js';
import { replyQueueFor, replyQueuesOf } from '../../transport/amqp/reply-shards.js';
import { urlForVhost } from '../../transport/amqp/url.js';
import { VhostRefusedError } from '../../transport/amqp/vhost-refusal.js';
import {
  DEAD_LETTER_EXCHANGE,
  type DeadLetter,
  deadLetterFailure,
  deadLetterQueueOf,
  declareDeadLetters,
  toDeadLetter,
} from './dead-letters.js';
import {
  createQueueConsumer,
  createReplyConsumer,
  type ReplyConsumer,
  type ReplyConsumerOptions,
} from './reply-consumer.js';
import { type RequestMessageOptions, requestMessage } from './request-message.js';

export interface RabbitMqBusOptions {
  /** `amqp://user:pass@host:5672/vhost` or `amqps://…:5671` (Amazon MQ). */
  url: string;
  /** The `reply_to` of every request. @default 'workflow-manager' */
  replyQueue?: string;
  /**
   * Reply queues, each job's requests naming one of them by its id (transport/amqp/reply-shards.ts):
   * deployed on Amazon MQ, one event source mapping each. Only the first is consumed by
   * `consumeReplies` (serve keeps one). @default 1
   */
  replyShards?: number;
  /** Prefix of the `connection_name` client property of this bus's connections. @default 'switchyard' */
  connectionName?: string;
  logger?: RabbitMqLogger;
  /** How long `send` and `ping` wait for a connection before they fail. @default 10000 */
  connectTimeoutMs?: number;
  /** How long `send` waits for the broker's confirms. @default 30000 */
  confirmTimeoutMs?: number;
  /** Bodies above this many bytes are undeliverable (RabbitMQ's `max_message_size`). @default 134217728 */
  maxMessageBytes?: number;
  /**
   * The longest a request may wait in (or circle through) its queue: its `expiration`. A request for
   * a step with a `timeout` expires at the attempt's deadline if that comes first. Undefined: only
   * the deadline bounds it (a step without `timeout` then waits in its queue for ever).
   */
  requestTtlMs?: number;
  /**
   * Declare the step queues the manager creates as quorum queues that deliver a request at most
   * `maxDeliveries` times, then dead-letter it to the manager. Off by default: a worker of the
   * original declaring such a queue with no arguments is refused (PRECONDITION_FAILED).
   */
  quorumQueues?: boolean;
  /** With `quorumQueues`: deliveries of a request before it is dead-lettered. @default 5 */
  maxDeliveries?: number;
  /** @default Date.now */
  clock?: () => number;
}

/** Deliveries of a request a quorum step queue allows by default. */
export const DEFAULT_MAX_DELIVERIES = 5;

/** Longest queue name AMQP 0-9-1 allows, in bytes. */

/** How long requests to a vhost the broker refused fail without asking the broker again. */
const REFUSED_VHOST_RETRY_MS = 30_000;

/** How the reply consumer batches and backs off (reply-consumer.ts), beside the port's options. */
export type ReplyConsumerTuning = Pick<ReplyConsumerOptions, 'prefetch' | 'maxBatch' | 'retryDelayMs'>;

/**
 * The Bus port on RabbitMQ (and Amazon MQ for RabbitMQ): requests go out on the default exchange
 * with protocol.md's properties, over one connection per vhost, each step queue declared before
 * the first request to it, every batch confirmed by the broker before `send` resolves. For serve it
 * is also the reply intake (each vhost's reply queue) and hands back dead-lettered requests.
 */
export class RabbitMqBus implements Bus, ReplyIntake, DeadLetterIntake {
  private readonly replyQueue: string;
  private readonly replyShards: number;
  /** The reply queue and its shards. */
  private readonly replyQueues: readonly string[];
  private readonly logger: RabbitMqLogger;
  private readonly vhosts = new Map<string | null, VhostPublisher>();
  private readonly consumers = new Set<ReplyConsumer>();
  private closed = false;

  constructor(private readonly options: RabbitMqBusOptions) {
    this.replyQueue = options.replyQueue ?? DEFAULT_REPLY_QUEUE;
    this.replyShards = Math.max(1, Math.floor(options.replyShards ?? 1));
    this.replyQueues = replyQueuesOf(this.replyQueue, this.replyShards);
    this.logger = options.logger ?? consoleWarnings;
    // Fails now, with the password redacted, on a URL that is not amqp(s)://.
    urlForVhost(options.url, null);
  }

  /**
   * Publishes the requests and resolves once the broker confirmed all of them. Otherwise rejects,
   * once every request's fate is known, with an `AggregateError` listing only the requests not
   * sent: `UndeliverableError` for one that can never be sent (never published), and
   * `RetryableSendError` for one nacked (a full queue with `reject-publish`), returned (its queue
   * was deleted), or unconfirmed (the connection dropped, or confirms took too long; it may arrive
   * twice when sent again). The requests it does not list were confirmed. A vhost the broker refuses
   * makes its requests undeliverable; one that cannot be reached at all rejects with a plain error.
   */
  async send(requests: readonly StepRequest[], options: SendOptions = {}): Promise<void> {
    if (requests.length === 0) return;
    const { onSent } = options;
    const requestOf = onSent ? new Map<OutgoingMessage, StepRequest>() : undefined;
    const onConfirmed =
      onSent &&
      ((message: OutgoingMessage) => {
        const request = requestOf?.get(message);
        if (request) onSent(request);
      });
    const messageOptions: RequestMessageOptions = {
      replyQueue: this.replyQueue,
      maxBytes: this.options.maxMessageBytes ?? 128 * 1024 * 1024,
      requestTtlMs: this.options.requestTtlMs,
      now: (this.options.clock ?? Date.now)(),
      tokenOf: options.tokenOf,
    };
    const failures: Error[] = [];
    const byVhost = new Map<string | null, OutgoingMessage[]>();
    const optionsByShard = new Map<string, RequestMessageOptions>();
    const optionsFor = (request: StepRequest): RequestMessageOptions => {
      if (this.replyShards === 1) return messageOptions;
      const replyQueue = replyQueueFor(this.replyQueue, this.replyShards, request.jobId);
      const known = optionsByShard.get(replyQueue);
      if (known) return known;
      const shardOptions = { ...messageOptions, replyQueue };
      optionsByShard.set(replyQueue, shardOptions);
      return shardOptions;
    };
    for (const request of requests) {
      let message: OutgoingMessage;
      try {
        message = requestMessage(request, optionsFor(request));
      } catch (error) {
        if (!(error instanceof UndeliverableError)) throw error;
        failures.push(error);
        continue;
      }
      requestOf?.set(message, request);
      const group = byVhost.get(request.vhost);
      if (group) group.push(message);
      else byVhost.set(request.vhost, [message]);
    }
    const results = await Promise.allSettled(
      [...byVhost].map(([vhost, messages]) => this.sendToVhost(vhost, messages, onConfirmed)),
    );
    for (const result of results) {
      if (result.status === 'fulfilled') {
        failures.push(...result.value);
        continue;
      }
      // A vhost the broker refuses makes its requests undeliverable; any other failure to reach a
      // vhost is an outage, and the whole call is tried again (its reachable vhosts' requests may
      // then go twice).
      const errors = result.reason instanceof AggregateError ? result.reason.errors : [result.reason];
      if (!errors.every((error) => error instanceof UndeliverableError)) throw result.reason;
      failures.push(...errors);
    }
    if (failures.length > 0) throw new AggregateError(failures, describeFailures(failures, requests.length));
  }

  /** Publishes one vhost's requests; returns one error per request not confirmed or not deliverable. */
  private async sendToVhost(
    vhost: string | null,
    messages: readonly OutgoingMessage[],
    onConfirmed?: (message: OutgoingMessage) => void,
  ): Promise<Error[]> {
    const { refused, undeliverable } = await this.publisherFor(vhost).send(messages, onConfirmed);
    const retryable = refused.map(({ message, reason, error }) => {
      const correlationId = correlationOf(message);
      const why =
        reason === 'nacked'
          ? `refused by queue ${message.queue} (nack: the queue may be full, x-overflow reject-publish)`
          : reason === 'returned'
            ? `returned by RabbitMQ: queue ${message.queue} does not exist`
            : `not confirmed by RabbitMQ: ${error.message}`;
      return new RetryableSendError(`the request ${correlationId} was ${why}`, correlationId, reason);
    });
    return [...undeliverable, ...retryable];
  }

  async ensureQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<void> {
    const byVhost = new Map<string | null, string[]>();
    for (const { queue, vhost } of queues) {
      const group = byVhost.get(vhost);
      if (group) group.push(queue);
      else byVhost.set(vhost, [queue]);
    }
    await Promise.all([...byVhost].map(([vhost, names]) => this.publisherFor(vhost).ensure(names)));
  }

  async ping(): Promise<void> {
    // Fails at once while the broker is unreachable: /healthz answers now, not after the timeout.
    await this.publisherFor(null).connection.whenReady(this.options.connectTimeoutMs ?? 10_000, {
      failFast: true,
    });
  }

  /**
   * Each queue's ready messages and consumers, through passive declares on a channel of their own
   * (a queue that does not exist is reported so, not created). A vhost that cannot be reached
   * reports its queues with the reason.
   */
  async inspectQueues(queues: readonly { queue: string; vhost: string | null }[]): Promise<QueueHealth[]> {
    const byVhost = new Map<string | null, string[]>();
    for (const { queue, vhost } of queues) {
      const group = byVhost.get(vhost);
      if (group) group.push(queue);
      else byVhost.set(vhost, [queue]);
    }
    const answers = await Promise.all(
      [...byVhost].map(async ([vhost, names]): Promise<QueueHealth[]> => {
        try {
          const model = await this.publisherFor(vhost).connection.whenReady(
            this.options.connectTimeoutMs ?? 10_000,
            { failFast: true },
          );
          const checks = await checkQueues(model, names, this.logger);
          return checks.map((check) => ({ ...check, vhost }));
        } catch (error) {
          const reason = (error as Error).message;
          return names.map((queue) => ({ queue, vhost, exists: false, error: reason }));
        }
      }),
    );
    return answers.flat();
  }

  /**
   * The reply intake: consumes the reply queue of one vhost (one consumer per vhost), hands its
   * replies to `handle` in batches and settles each as it says, poisoned ones by way of
   * `<reply queue>.poisoned`; see `startReplyConsumer`. Stopped by the returned handle or by `close()`.
   */
  async consumeReplies(
    handle: ReplyHandler,
    options: ReplyIntakeOptions & ReplyConsumerTuning = {},
  ): Promise<ReplyConsumption> {
    this.assertOpen();
    const consumer = createReplyConsumer(
      {
        url: this.options.url,
        logger: this.logger,
        connectionName: `${this.connectionName}:replies:${options.vhost ?? ''}`,
        ...options,
        queue: this.replyQueue,
      },
      handle,
    );
    return this.run(consumer);
  }

  /**
   * Consumes the vhost's dead-letter queue (`<reply queue>.dead-letters`, bound to the
   * `switchyard.dead-letters` exchange by the `x-reply-to` header of this manager's requests): the
   * requests the broker expired, or dropped after too many deliveries (quorum step queues), or that
   * a worker rejected without requeue, where a policy or the queue's arguments dead-letter them.
   * Expired ones go to `handlers.expired`, the others to `handlers.rejected` with why; letters that
   * name no request of this manager are dropped.
   */
  async consumeDeadLetters(
    handlers: DeadLetterHandlers,
    options: ReplyIntakeOptions = {},
  ): Promise<ReplyConsumption> {
    this.assertOpen();
    const onLetters = async (letters: DeadLetter[]): Promise<void> => {
      for (const letter of letters) {
        const { correlationId, attempt, replyTo, token } = letter;
        if (!correlationId || (replyTo !== undefined && !this.replyQueues.includes(replyTo))) continue;
        if (letter.reason === 'expired') await handlers.expired(correlationId, attempt, token);
        else
          await handlers.rejected(
            correlationId,
            attempt,
            deadLetterFailure(letter, this.maxDeliveries),
            token,
          );
      }
    };
    const consumer = createQueueConsumer(
      {
        url: this.options.url,
        logger: this.logger,
        connectionName: `${this.connectionName}:dead-letters:${options.vhost ?? ''}`,
        ...options,
        queue: deadLetterQueueOf(this.replyQueue),
      },
      onLetters,
      toDeadLetter,
      (model) => declareDeadLetters(model, this.replyQueue, this.logger),
    );
    return this.run(consumer);
  }

  /** The request's deliveries a quorum step queue allows, when the manager makes them so. */
  private get maxDeliveries(): number | undefined {
    return this.options.quorumQueues ? (this.options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES) : undefined;
  }

  private async run(
    consumer: ReplyConsumer & { start(): Promise<void> },
  ): Promise<{ stop(): Promise<void> }> {
    // Added before it starts: closing the bus while the broker is down must stop it too.
    this.consumers.add(consumer);
    try {
      await consumer.start();
    } catch (error) {
      this.consumers.delete(consumer);
      throw error;
    }
    return {
      stop: async () => {
        this.consumers.delete(consumer);
        await consumer.stop();
      },
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all([...this.consumers].map((consumer) => consumer.stop()));
    await Promise.all([...this.vhosts.values()].map((publisher) => publisher.connection.close()));
  }

  private get connectionName(): string {
    return this.options.connectionName ?? 'switchyard';
  }

  private publisherFor(vhost: string | null): VhostPublisher {
    this.assertOpen();
    let publisher = this.vhosts.get(vhost);
    const refusal = publisher?.connection.refusal;
    if (refusal && Date.now() - refusal.at > REFUSED_VHOST_RETRY_MS) publisher = undefined;
    if (!publisher) {
      const connection = new RabbitMqConnection({
        url: this.options.url,
        vhost,
        connectionName: `${this.connectionName}:publish:${vhost ?? ''}`,
        logger: this.logger,
        // The URL's own vhost is the operator's to fix: keep trying. One a workflow names fails its jobs.
        stopWhenVhostRefused: vhost !== null,
      });
      const stepQueueArguments = this.options.quorumQueues
        ? {
            'x-queue-type': 'quorum',
            // The broker counts redeliveries: the first delivery and this many more.
            'x-delivery-limit': (this.options.maxDeliveries ?? DEFAULT_MAX_DELIVERIES) - 1,
            'x-dead-letter-exchange': DEAD_LETTER_EXCHANGE,
          }
        : undefined;
      const replyQueues = this.replyQueues;
      publisher = new VhostPublisher(
        connection,
        new QueueDeclarer(this.logger, undefined, (queue) =>
          replyQueues.includes(queue) ? undefined : stepQueueArguments,
        ),
        new ConfirmPublisher(this.logger, this.options.confirmTimeoutMs),
        this.options.connectTimeoutMs ?? 10_000,
        replyQueues,
        this.logger,
      );
      this.vhosts.set(vhost, publisher);
    }
    return publisher;
  }

  private assertOpen(): void {
    if (this.closed) throw new Error('the RabbitMQ bus is closed');
  }
}

/**
 * Everything one vhost needs to send: its connection, what it declared there, its confirm channel.
 * The reply queue is declared with the step queues: a reply to a queue that does not exist yet
 * (requests sent during recovery, before the reply consumer is up) would be dropped by the broker.
 */
class VhostPublisher {
  constructor(
    readonly connection: RabbitMqConnection,
    private readonly declarer: QueueDeclarer,
    private readonly publisher: ConfirmPublisher,
    private readonly connectTimeoutMs: number,
    /** The reply queue first, then its shards. */
    private readonly replyQueues: readonly string[],
    private readonly logger: RabbitMqLogger,
  ) {}

  private get replyQueue(): string {
    return this.replyQueues[0] as string;
  }

  /** The connection the dead-letter exchange and queue were last declared on. */
  private deadLettersOn: ChannelModel | undefined;

  /** Declares them once per connection; a failure is logged and tried again on the next send. */
  private async declareDeadLetters(model: ChannelModel): Promise<void> {
    if (this.deadLettersOn === model) return;
    try {
      await declareDeadLetters(model, this.replyQueue, this.logger);
      this.deadLettersOn = model;
    } catch (error) {
      this.logger.warn(
        `RabbitMQ: the dead-letter exchange and queue cannot be declared: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  /** Fails at once while the broker is unreachable: each queue is declared again before its first request. */
  async ensure(queues: readonly string[]): Promise<void> {
    const model = await this.connection.whenReady(this.connectTimeoutMs, { failFast: true });
    await this.declareDeadLetters(model);
    const refused = await this.declarer.ensure(model, [...this.replyQueues, ...queues]);
    if (refused.size) {
      throw new Error(
        [...refused].map(([queue, reason]) => `queue ${queue} cannot be declared: ${reason}`).join('; '),
      );
    }
  }

  /**
   * Sends to the queues that could be declared. Returns the messages the broker did not confirm,
   * and an `UndeliverableError` for each one to a queue it refused to declare; throws when the vhost
   * cannot be reached (an `AggregateError` of undeliverable requests when the broker refuses it).
   */
  async send(
    messages: readonly OutgoingMessage[],
    onConfirmed?: (message: OutgoingMessage) => void,
  ): Promise<{ refused: PublishFailure[]; undeliverable: UndeliverableError[] }> {
    const model = await this.connection.whenReady(this.connectTimeoutMs).catch((error: unknown) => {
      if (!(error instanceof VhostRefusedError)) throw error;
      throw new AggregateError(
        messages.map(
          (message) =>
            new UndeliverableError(
              `cannot send to queue "${message.queue}": ${error.message}`,
              correlationOf(message),
            ),
        ),
        error.message,
      );
    });
    await this.declareDeadLetters(model);
    const declined = await this.declarer.ensure(model, [
      ...this.replyQueues,
      ...messages.map((message) => message.queue),
    ]);
    for (const replyQueue of this.replyQueues) {
      const replyRefusal = declined.get(replyQueue);
      if (replyRefusal) throw new Error(`the reply queue ${replyQueue} cannot be declared: ${replyRefusal}`);
    }
    const sendable = declined.size ? messages.filter((message) => !declined.has(message.queue)) : messages;
    const refused = await this.publisher.publishEach(model, sendable, onConfirmed);
    for (const { reason, message } of refused) if (reason === 'returned') this.declarer.forget(message.queue);
    const undeliverable = messages
      .filter((message) => declined.has(message.queue))
      .map(
        (message) =>
          new UndeliverableError(
            `cannot send to queue "${message.queue}": RabbitMQ refused to declare it: ${declined.get(message.queue)}`,
            correlationOf(message),
          ),
      );
    return { refused, undeliverable };
  }
}

function correlationOf(message: OutgoingMessage): string {
  return String(message.options.correlationId);
}

function describeFailures(failures: readonly Error[], total: number): string {
  const shown = failures.slice(0, 3).map((failure) => failure.message);
  const more = failures.length > shown.length ? `; and ${failures.length - shown.length} more` : '';
  return `${failures.length} of ${total} requests were not sent to RabbitMQ: ${shown.join('; ')}${more}`;
}
