import type { Channel, ConsumeMessage } from 'amqplib';
import {
  type ConnectFailure,
  consoleWarnings,
  RabbitMqConnection,
  type RabbitMqLogger,
} from '../../transport/amqp/connection.js';
import { attemptOf, stringProperty } from '../../transport/amqp/message.js';
import { ConfirmPublisher } from '../../transport/amqp/publisher.js';
import { declareDurableQueue, openChannel } from '../../transport/amqp/queues.js';
import { readToken, TOKEN_HEADER } from '../../transport/request-token.js';
import { RETRYABLE_HEADER } from '../../transport/retryable.js';
import { WORKER_HEADER } from '../../transport/worker-name.js';
import type { ReplyOptions, WorkerDelivery, WorkerTransport } from '../../transport/worker-transport.js';
import { brokerRefusal } from './broker-refusal.js';

export interface RabbitMqWorkerTransportOptions {
  /** `amqp://` or `amqps://` (Amazon MQ); the vhost is the URL's. */
  url: string;
  /** The `connection_name` client property, shown by `rabbitmqctl list_connections`. */
  connectionName?: string;
  logger?: RabbitMqLogger;
  /** How long a reply waits for a lost connection to come back before it fails. @default 30000 */
  replyTimeoutMs?: number;
}

/** The consuming channel and whether it is still open: a delivery can only be settled on its own channel. */
interface ConsumerChannel {
  channel: Channel;
  closed: boolean;
}

/**
 * The worker side of RabbitMQ (protocol.md): consumes a step queue (declared durable with no
 * arguments, like the original workers do) with prefetch = concurrency and manual acknowledgement,
 * and publishes replies on a confirm channel. One connection, which reconnects by itself and then
 * consumes again; a request in hand when its channel dies is redelivered by the broker. A broker that
 * cannot be reached is tried again with backoff, said once per outage; a refused login or vhost
 * stops it for good (`consume` rejects with a `BrokerRefusedError`).
 */
export class RabbitMqWorkerTransport implements WorkerTransport {
  private readonly connection: RabbitMqConnection;
  private readonly publisher: ConfirmPublisher;
  private readonly logger: RabbitMqLogger;
  private consumer: { state: ConsumerChannel; consumerTag: string } | undefined;
  private unregister: (() => void) | undefined;
  private stopped = false;
  /** True once an outage was logged, until the consumer is set up again. */
  private saidUnreachable = false;

  constructor(private readonly options: RabbitMqWorkerTransportOptions) {
    this.logger = options.logger ?? consoleWarnings;
    this.connection = new RabbitMqConnection({
      url: options.url,
      logger: this.logger,
      onConnectFailure: (failure) => this.onConnectFailure(failure),
      ...(options.connectionName ? { connectionName: options.connectionName } : {}),
    });
    this.publisher = new ConfirmPublisher(this.logger);
  }

  async consume(
    queue: string,
    concurrency: number,
    onDelivery: (delivery: WorkerDelivery) => Promise<void>,
  ): Promise<void> {
    if (this.unregister) throw new Error('this transport already consumes a queue');
    this.unregister = await this.connection.addSetup(async (model) => {
      if (this.stopped) return;
      const channel = await declareDurableQueue(
        model,
        await openChannel(model, this.logger),
        queue,
        this.logger,
      );
      const state: ConsumerChannel = { channel, closed: false };
      channel.on('close', () => {
        state.closed = true;
      });
      await channel.prefetch(concurrency);
      const { consumerTag } = await channel.consume(
        queue,
        (message) => {
          if (message === null) {
            if (!this.stopped) this.connection.reconnect(`the broker cancelled the consumer of ${queue}`);
            return;
          }
          onDelivery(toDelivery(state, message)).catch((error: unknown) =>
            this.logger.error(`handling a request from ${queue} failed: ${String(error)}`),
          );
        },
        { noAck: false },
      );
      this.consumer = { state, consumerTag };
      if (this.saidUnreachable) this.logger.info(`RabbitMQ at ${this.connection.safeUrl} is reachable again`);
      this.saidUnreachable = false;
    });
  }

  private onConnectFailure({ error, description }: ConnectFailure): Error | undefined {
    const refusal = brokerRefusal(error, this.options.url);
    if (refusal) return refusal;
    if (!this.saidUnreachable) {
      this.saidUnreachable = true;
      this.logger.warn(
        `RabbitMQ at ${this.connection.safeUrl} is not reachable (${description}); ` +
          'trying again with backoff until it is, or until the worker stops',
      );
    }
    return undefined;
  }

  async reply(
    replyTo: string,
    correlationId: string,
    body: string,
    options: ReplyOptions = {},
  ): Promise<void> {
    const headers: Record<string, unknown> = {};
    if (options.attempt !== undefined) headers['x-attempt'] = options.attempt;
    // An AMQP boolean: the manager also takes the text "false", which clients without booleans send.
    if (options.retryable === false) headers[RETRYABLE_HEADER] = false;
    if (options.token !== undefined) headers[TOKEN_HEADER] = options.token;
    if (options.worker !== undefined) headers[WORKER_HEADER] = options.worker;
    const model = await this.connection.whenReady(this.options.replyTimeoutMs ?? 30_000);
    await this.publisher.publish(model, [
      {
        queue: replyTo,
        content: Buffer.from(body),
        options: {
          correlationId,
          contentType: 'application/json',
          deliveryMode: 2,
          ...(options.type ? { type: options.type } : {}),
          ...(Object.keys(headers).length ? { headers } : {}),
        },
      },
    ]);
  }

  async stopConsuming(): Promise<void> {
    this.stopped = true;
    this.unregister?.();
    const consumer = this.consumer;
    if (consumer && !consumer.state.closed) {
      await consumer.state.channel.cancel(consumer.consumerTag).catch(() => {});
    }
  }

  async close(): Promise<void> {
    this.stopped = true;
    this.unregister?.();
    // Closing the channel first makes the broker read the acknowledgements still queued on it:
    // frames of different channels may reach the socket out of order.
    const consumer = this.consumer;
    if (consumer && !consumer.state.closed) await consumer.state.channel.close().catch(() => {});
    await this.connection.close();
  }
}

function toDelivery(state: ConsumerChannel, message: ConsumeMessage): WorkerDelivery {
  const delivery: WorkerDelivery = {
    correlationId: stringProperty(message.properties.correlationId) ?? '',
    replyTo: stringProperty(message.properties.replyTo) ?? '',
    body: message.content.toString('utf8'),
    // Once its channel is gone the broker has taken the request back: there is nothing to settle.
    ack: async () => {
      if (!state.closed) settleQuietly(() => state.channel.ack(message));
    },
    reject: async () => {
      if (!state.closed) settleQuietly(() => state.channel.nack(message, false, true));
    },
  };
  const attempt = attemptOf(message.properties.headers);
  if (attempt !== undefined) delivery.attempt = attempt;
  const token = readToken(message.properties.headers?.[TOKEN_HEADER]);
  if (token !== undefined) delivery.token = token;
  return delivery;
}

function settleQuietly(settle: () => void): void {
  try {
    settle();
  } catch {
    // The channel closed between the check and the call; the broker redelivers the request.
  }
}
