import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  GetQueueUrlCommand,
  type Message,
  ReceiveMessageCommand,
  type SQSClient,
} from '@aws-sdk/client-sqs';
import { TOKEN_ATTRIBUTE } from '../../transport/request-token.js';
import { isQueueDoesNotExist, SQS_MAX_BATCH_ENTRIES } from '../../transport/sqs/message.js';
import type { ReplyOptions, WorkerDelivery, WorkerTransport } from '../../transport/worker-transport.js';
import { sendSqsReply, sqsRequestOf } from './sqs-messages.js';

export interface SqsWorkerTransportOptions {
  client: SQSClient;
  /** Step queue `q` is the SQS queue `<queuePrefix>q` (the stack's prefix, e.g. `switchyard-`). */
  queuePrefix: string;
  /** Long polling: how long one ReceiveMessage waits for a request. @default 20 (the SQS maximum) */
  waitTimeSeconds?: number;
  /** How long a rejected request stays hidden before it is delivered again. @default 0 */
  rejectVisibilityTimeoutSeconds?: number;
  /** Errors the consumer lives through: failed polls (it backs off and polls again), malformed requests. */
  onError?: (error: Error) => void;
}

/** One consumed queue: its poll loop and the requests it has in hand. */
interface Consumer {
  queueName: string;
  queueUrl: string;
  concurrency: number;
  onDelivery: (delivery: WorkerDelivery) => Promise<void>;
  inHand: number;
  /** Wakes the poll loop when a request leaves the hand or the consumer stops. */
  wake: (() => void) | undefined;
  abort: AbortController;
  loop: Promise<void>;
}

const MAX_POLL_BACKOFF_MS = 20_000;

/**
 * The worker side of the SQS bus (protocol.md, "SQS"): long-polls a step queue, replies with
 * SendMessage to the request's `reply_to`, deletes the request once the reply is sent (ack), or makes
 * it visible again (reject). After the queue's `maxReceiveCount` SQS moves a request to the
 * dead-letter queue; `deliveryCount` (ApproximateReceiveCount) lets the SDK answer with an error before.
 *
 * @example
 * ```ts
 * import { SQSClient } from '@aws-sdk/client-sqs';
 * import { runWorker } from 'switchyard-worker';
 * import { SqsWorkerTransport } from 'switchyard-worker/sqs';
 *
 * await runWorker({
 *   queue: 'segment-word-counts', // the SQS queue <queuePrefix>segment-word-counts
 *   transport: new SqsWorkerTransport({ client: new SQSClient({}), queuePrefix: 'switchyard-' }),
 *   handler: (input) => ({ ...input, counted: true }),
 * });
 * ```
 */
export class SqsWorkerTransport implements WorkerTransport {
  private readonly client: SQSClient;
  private readonly queuePrefix: string;
  private readonly waitTimeSeconds: number;
  private readonly rejectVisibilityTimeoutSeconds: number;
  private readonly onError: (error: Error) => void;
  private readonly consumers: Consumer[] = [];

  constructor(options: SqsWorkerTransportOptions) {
    this.client = options.client;
    this.queuePrefix = options.queuePrefix;
    this.waitTimeSeconds = Math.min(20, Math.max(0, options.waitTimeSeconds ?? 20));
    this.rejectVisibilityTimeoutSeconds = options.rejectVisibilityTimeoutSeconds ?? 0;
    this.onError =
      options.onError ??
      ((error) => console.error(`switchyard worker (SQS): ${error.message}`, error.cause ?? ''));
  }

  async consume(
    queue: string,
    concurrency: number,
    onDelivery: (delivery: WorkerDelivery) => Promise<void>,
  ): Promise<void> {
    if (!Number.isInteger(concurrency) || concurrency < 1) {
      throw new Error(`concurrency must be a whole number of at least 1, not ${concurrency}`);
    }
    const queueName = `${this.queuePrefix}${queue}`;
    const queueUrl = await this.queueUrl(queueName);
    const consumer: Consumer = {
      queueName,
      queueUrl,
      concurrency,
      onDelivery,
      inHand: 0,
      wake: undefined,
      abort: new AbortController(),
      loop: Promise.resolve(),
    };
    consumer.loop = this.poll(consumer);
    this.consumers.push(consumer);
  }

  reply(replyTo: string, correlationId: string, body: string, options: ReplyOptions = {}): Promise<void> {
    return sendSqsReply(this.client, replyTo, correlationId, body, options);
  }

  async stopConsuming(): Promise<void> {
    const stopping = this.consumers.splice(0);
    for (const consumer of stopping) {
      consumer.abort.abort();
      consumer.wake?.();
    }
    await Promise.all(stopping.map((consumer) => consumer.loop));
  }

  /** Stops consuming. The SQS client belongs to whoever created it, and stays open. */
  async close(): Promise<void> {
    await this.stopConsuming();
  }

  private async queueUrl(queueName: string): Promise<string> {
    try {
      const { QueueUrl } = await this.client.send(new GetQueueUrlCommand({ QueueName: queueName }));
      if (!QueueUrl) throw new Error(`GetQueueUrl returned no URL for ${queueName}`);
      return QueueUrl;
    } catch (error) {
      if (isQueueDoesNotExist(error)) {
        throw new Error(`the SQS queue ${queueName} does not exist (is the queue prefix right?)`, {
          cause: error,
        });
      }
      throw error;
    }
  }

  private async poll(consumer: Consumer): Promise<void> {
    const { signal } = consumer.abort;
    let failedPolls = 0;
    while (!signal.aborted) {
      if (consumer.inHand >= consumer.concurrency) {
        await new Promise<void>((resolve) => {
          consumer.wake = resolve;
        });
        consumer.wake = undefined;
        continue;
      }
      let messages: Message[];
      try {
        const result = await this.client.send(
          new ReceiveMessageCommand({
            QueueUrl: consumer.queueUrl,
            MaxNumberOfMessages: Math.min(SQS_MAX_BATCH_ENTRIES, consumer.concurrency - consumer.inHand),
            WaitTimeSeconds: this.waitTimeSeconds,
            MessageAttributeNames: ['All'],
            MessageSystemAttributeNames: ['ApproximateReceiveCount'],
          }),
          { abortSignal: signal },
        );
        messages = result.Messages ?? [];
        failedPolls = 0;
      } catch (error) {
        if (signal.aborted) break;
        failedPolls++;
        this.onError(new Error(`receiving from ${consumer.queueName} failed`, { cause: error }));
        await sleep(Math.min(MAX_POLL_BACKOFF_MS, 250 * 2 ** (failedPolls - 1)), signal);
        continue;
      }
      for (const message of messages) this.hand(consumer, message);
    }
  }

  /** Hands one request to the handler; it counts against the concurrency until the handler settles. */
  private hand(consumer: Consumer, message: Message): void {
    const delivery = this.delivery(consumer, message);
    if (!delivery) return;
    consumer.inHand++;
    Promise.resolve()
      .then(() => consumer.onDelivery(delivery))
      .catch((error: unknown) => {
        this.onError(new Error(`the handler of ${delivery.correlationId} failed`, { cause: error }));
      })
      .finally(() => {
        consumer.inHand--;
        consumer.wake?.();
      });
  }

  private delivery(consumer: Consumer, message: Message): WorkerDelivery | undefined {
    const attribute = (name: string): string | undefined => message.MessageAttributes?.[name]?.StringValue;
    const request = sqsRequestOf(
      {
        messageId: message.MessageId,
        correlationId: attribute('correlation_id'),
        replyTo: attribute('reply_to'),
        attempt: attribute('attempt'),
        token: attribute(TOKEN_ATTRIBUTE),
        receiveCount: message.Attributes?.ApproximateReceiveCount,
        body: message.Body,
      },
      consumer.queueName,
    );
    const receiptHandle = message.ReceiptHandle;
    if (request instanceof Error || !receiptHandle) {
      // Left alone, it ends in the dead-letter queue.
      this.onError(
        request instanceof Error ? request : new Error(`message ${message.MessageId} has no receipt handle`),
      );
      return undefined;
    }
    return {
      ...request,
      ack: () =>
        this.client
          .send(new DeleteMessageCommand({ QueueUrl: consumer.queueUrl, ReceiptHandle: receiptHandle }))
          .then(() => undefined),
      reject: () =>
        this.client
          .send(
            new ChangeMessageVisibilityCommand({
              QueueUrl: consumer.queueUrl,
              ReceiptHandle: receiptHandle,
              VisibilityTimeout: this.rejectVisibilityTimeoutSeconds,
            }),
          )
          .then(
            () => undefined,
            (error: unknown) => {
              // Its visibility timeout already ran out: it is back in the queue, as a reject wants.
              if ((error as Error).name !== 'MessageNotInflight') throw error;
            },
          ),
    };
  }
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}
